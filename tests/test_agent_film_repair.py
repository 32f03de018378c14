"""Repairs of baked motion on films built in the tests (truth by construction):
each fault gets a verified proposal that removes it, and applying then undoing
it restores the exact hashes; a stale proposal and a hostile model reply are
refused with the reason."""
from __future__ import annotations

import json
import re

import pytest
from calls_scenes import fingerprint
from chat_server import ChatServer
from motion_films import REVIEWER, floating_film, grasp_film, jamb_film, limit_film

from studio.agent.client import ModelClient
from studio.repair.errors import RepairError
from studio.repair.film_loop import repair_film
from studio.repair.motion_repair import approve_film_repair, propose_film
from studio.repair.motion_trial import FilmTrial
from studio.repair.proposals import get_proposal, reject
from studio.agent.steps import list_steps
from studio.checks.report import failing_required
from studio.checks.run import verify_film
from studio.cli import main
from studio.store.project import Project
from studio.timeline.commands import BakeSegment, CommandStack
from studio.timeline.motion import motion_tools
from studio.timeline.reviews import list_reviews, reviewer_kinds
from studio.timeline.film import load_segment


def _verdicts(project) -> dict:
    return {r.name: r for r in verify_film(project)}


def _apply_then_undo(project, proposal, check: str) -> None:
    """The proposal removes the check's failure in the stored film; undo gives back the exact hashes."""
    before = fingerprint(project)
    stack = CommandStack()
    cmd = approve_film_repair(project, proposal.id, stack, reviewer=REVIEWER)
    after = _verdicts(project)
    assert after[check].verdict in ("pass", "not_applicable"), after[check].evidence[:2]
    assert not failing_required(list(after.values()))
    assert set(cmd.baked) <= set(fingerprint(project)["tracks"])
    assert get_proposal(project, proposal.id).status == "approved"
    stack.undo()
    assert fingerprint(project) == before
    assert get_proposal(project, proposal.id).status == "proposed"


def test_a_path_that_clips_a_jamb_gets_a_key_state_pushed_clear(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    assert _verdicts(project)["NoPenetration"].verdict == "fail"
    made = propose_film(project)
    assert [r.check for r in made.runs] == ["NoPenetration"]
    p = made.proposals[0]
    assert p.check_name == "NoPenetration" and p.target == "film:out..in"
    inserted = [c for c in p.changes if c["kind"] == "insert_state"]
    assert len(inserted) == 1 and 1012 <= inserted[0]["frame"] <= 1014 and inserted[0]["split"] == "out..in"
    assert inserted[0]["pose"]["roots"]["crate"][1] < 0.2            # pushed towards the opening (-y)
    assert "removes 3 penetrating frames at 1012–1014; adds none" in p.summary
    _apply_then_undo(project, p, "NoPenetration")
    project.close()


def test_a_box_left_floating_after_its_release_is_dropped_to_the_table(tmp_path):
    project = floating_film(tmp_path / "floating")
    sup = _verdicts(project)["Supported"]
    assert sup.verdict == "fail" and sup.evidence[0]["frame"] == 1007
    p = next(p for p in propose_film(project).proposals if p.changes[-1]["kind"] == "insert_state")
    key = p.changes[-1]
    assert key["frame"] == 1007 and abs(key["pose"]["roots"]["parcel"][2] - 0.6) < 2e-3   # resting on the table
    assert "removes 16 floating frames at 1007–1022" in p.summary
    _apply_then_undo(project, p, "Supported")
    project.close()


@pytest.mark.skipif("simulate" not in motion_tools(), reason="no simulate motion tool is registered")
def test_a_box_left_floating_can_instead_drop_by_simulation(tmp_path):
    project = floating_film(tmp_path / "floating")
    p = next(p for p in propose_film(project).proposals if p.changes[-1]["kind"] == "segment")
    assert p.changes[-1]["tool"] == "simulate" and p.changes[-1]["params"] == {"bodies": ["parcel"]}
    assert "interpolate → simulate" in p.summary and "removes 16 floating frames at 1007–1022" in p.summary
    _apply_then_undo(project, p, "Supported")
    project.close()


def test_a_grasp_that_never_happens_gets_a_key_state_reaching_the_plate(tmp_path):
    project = grasp_film(tmp_path / "grasp")
    ev = _verdicts(project)["EventsSatisfied"]
    assert ev.verdict == "fail" and ev.evidence[0]["event"] == "pick"
    p = propose_film(project).proposals[0]
    key = next(c for c in p.changes if c["kind"] == "insert_state")
    assert 1009 <= key["frame"] <= 1017 and "meets event pick; adds none" in p.summary
    _apply_then_undo(project, p, "EventsSatisfied")
    project.close()


def test_a_joint_past_its_limit_is_re_baked_by_a_registered_tool_or_keyed_within_limits(tmp_path):
    project = limit_film(tmp_path / "limit")
    made = propose_film(project)
    limits = [p for p in made.proposals if p.check_name == "JointLimits"]
    kinds = {c["kind"] for p in limits for c in p.changes}
    assert kinds == {"segment", "insert_state"}                     # switch the tool; or key a clamped pose
    switch = next(p for p in limits if p.changes[-1]["kind"] == "segment")
    assert switch.changes[-1]["tool"] == "interpolate" and "removes 14 past-limit frames at 1007–1020" in switch.summary
    key = next(p for p in limits if p.changes[-1]["kind"] == "insert_state").changes[-1]
    assert key["pose"]["joints"]["elbow"] <= 2.4
    _apply_then_undo(project, switch, "JointLimits")
    project.close()


def test_approving_a_key_state_repair_records_the_reviewer_and_bakes_only_touched_segments(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    p = propose_film(project).proposals[0]
    cmd = approve_film_repair(project, p.id, reviewer=REVIEWER)
    key = cmd.keyed[0]
    assert [r.reviewer for r in list_reviews(project, key)] == [REVIEWER]
    assert sorted(cmd.baked) == sorted([f"out..{key}", f"{key}..in"])
    rows = [json.loads(r["detail"])["tool"] for r in project.db.query(
        "SELECT detail FROM audit WHERE action = 'tool call' ORDER BY id") if r]
    assert rows[-6:] == ["set_state", "run_verifiers", "set_plan", "review_state",
                         "author_segment", "author_segment"]
    project.close()


def test_a_proposal_whose_segment_changed_since_is_refused_as_stale(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    p = propose_film(project).proposals[0]
    tracks = load_segment(project, "out..in")
    tracks.roots["crate"][1:-1, 2] -= 0.01                          # someone re-baked it a centimetre lower
    CommandStack().run(BakeSegment(project, "out..in", tracks, "interpolate", REVIEWER))
    before = fingerprint(project)
    with pytest.raises(RepairError, match=r"repair 1 is stale: segment out..in was re-baked since the proposal"):
        approve_film_repair(project, p.id, reviewer=REVIEWER)
    assert fingerprint(project) == before and get_proposal(project, p.id).status == "proposed"
    project.close()


def test_a_rejection_note_is_read_by_the_next_proposal(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    first = propose_film(project).proposals[0]
    reject(project, first.id, "do not push it sideways so late", reviewer=REVIEWER)
    again = propose_film(project).proposals
    assert all(p.changes[-1] != first.changes[-1] for p in again)
    with ChatServer([{"content": json.dumps({"summary": "lower it", "changes": [
            {"kind": "insert_state", "frame": 1013, "roots": {"crate": [0, 0.18, 1.0, 1, 0, 0, 0]}}]})}]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        trial = FilmTrial(project)
        from studio.agent.model_motion_repair import propose_film_with_model
        propose_film_with_model(project, client, trial, propose_film(project, store=False, trial=trial).runs)
        prompt = chat.requests[0]["body"]["messages"][1]["content"]
    assert "do not push it sideways so late" in prompt
    project.close()


def test_a_model_proposal_naming_a_missing_body_is_refused_with_the_field(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    bad = {"summary": "move the ghost", "changes": [
        {"kind": "insert_state", "frame": 1013, "roots": {"ghost": [0, 0, 1, 1, 0, 0, 0]}}]}
    good = {"summary": "slide it into the opening", "changes": [
        {"kind": "insert_state", "frame": 1013, "roots": {"crate": [0, 0.15, 1.0, 1, 0, 0, 0]}}]}
    from studio.agent.model_motion_repair import propose_film_with_model
    with ChatServer([{"content": json.dumps(bad)}, {"content": json.dumps(good)}]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        trial = FilmTrial(project)
        out = propose_film_with_model(project, client, trial, propose_film(project, store=False, trial=trial).runs)
        refusal = chat.requests[1]["body"]["messages"][-1]["content"]
    assert "changes[0].roots.ghost: no root body 'ghost'" in refusal
    assert len(out.proposals) == 1 and out.proposals[0].source == "model"
    assert "removes 3 penetrating frames" in out.proposals[0].summary
    project.close()


def test_the_loop_applies_verified_repairs_as_a_batch_run_until_the_film_passes(tmp_path):
    project = limit_film(tmp_path / "limit")
    seen = []
    result = repair_film(project, until_pass=True, approve_verified=True, max_rounds=4, on_round=seen.append)
    assert result.passing and result.applied >= 1 and len(result.rounds) == len(seen) >= 1
    assert seen[0].failing and "JointLimits: fail" in seen[0].failing
    kinds = reviewer_kinds(project)
    assert {r.reviewer for r in list_reviews(project)} == {REVIEWER}   # no key state inserted, none reviewed
    actors = {r["actor"] for r in project.db.query("SELECT actor FROM audit WHERE action = 'approve repair'")}
    assert actors == {"batch"} and kinds.get(REVIEWER) == "person"
    project.close()


def test_cli_film_until_pass_reports_rounds_and_batch_reviews(tmp_path, capsys):
    jamb_film(tmp_path / "jamb").close()
    assert main(["agent", "repair", str(tmp_path / "jamb"), "--film", "--offline", "--until-pass",
                 "--approve-verified", "--max-rounds", "3"]) == 0
    out = capsys.readouterr().out
    assert "round 1: required failing: NoPenetration: fail; 1 failing run(s)" in out
    assert "required checks pass" in out and "reviewer 'batch'" in out
    with Project.open(tmp_path / "jamb") as project:
        keyed = [r for r in list_reviews(project) if r.reviewer == "batch"]
        assert len(keyed) == 1 and reviewer_kinds(project)["batch"] == "batch"
        assert not failing_required(verify_film(project))


def test_cli_interval_proposes_and_apply_by_id(tmp_path, capsys):
    jamb_film(tmp_path / "jamb").close()
    path = str(tmp_path / "jamb")
    assert main(["agent", "repair", path, "--interval", "1100..1200", "--offline"]) == 1   # nothing fails there
    assert main(["agent", "repair", path, "--interval", "1010..1016", "--offline"]) == 0
    assert "#1 [proposed] film:out..in NoPenetration (offline)" in capsys.readouterr().out
    assert main(["agent", "repair", path, "--apply", "1", "--reviewer", REVIEWER]) == 0
    assert f"approved by {REVIEWER} with the repair" in capsys.readouterr().out
    assert main(["agent", "repair", path, "--interval", "1016..1010"]) == 2
    assert "--interval '1016..1010': expected A..B" in capsys.readouterr().err


@pytest.fixture
def glide_tool():
    """The test's path tool, registered for this test only."""
    from studio.timeline.motion import MOTION_TOOLS
    yield
    MOTION_TOOLS.pop("glide", None)


def test_a_path_tool_gets_a_via_point_from_its_schema(tmp_path, glide_tool):
    from motion_films import glide_film
    project = glide_film(tmp_path / "glide")
    made = propose_film(project)
    via = next(p for p in made.proposals if p.changes[-1]["kind"] == "segment")
    change = via.changes[-1]
    assert change["tool"] == "glide" and change["from"]["params"] == {"body": "crate"}
    (x, y), = change["params"]["waypoints"]
    assert abs(x) < 0.2 and y < 0.2                                  # through the opening, not the jamb
    assert "via-point" in via.summary and "removes 3 penetrating frames" in via.summary
    _apply_then_undo(project, via, "NoPenetration")
    project.close()


def test_list_and_log_show_film_proposals(tmp_path, capsys):
    jamb_film(tmp_path / "jamb").close()
    path = str(tmp_path / "jamb")
    assert main(["agent", "repair", path, "--film", "--offline"]) == 0
    capsys.readouterr()
    assert main(["agent", "repair", path, "--list"]) == 0
    out = capsys.readouterr().out
    assert "key state key_1013 at 1013 splitting out..in" in out
    assert main(["agent", "log", path]) == 0
    assert "film:out..in NoPenetration" in capsys.readouterr().out


def test_a_batch_repaired_film_replays_from_its_calls_to_the_same_film(tmp_path, capsys):
    jamb_film(tmp_path / "jamb").close()
    path = str(tmp_path / "jamb")
    assert main(["agent", "repair", path, "--film", "--offline", "--until-pass", "--approve-verified"]) == 0
    assert main(["agent", "log", path, "--calls", str(tmp_path / "calls.jsonl")]) == 0
    assert "outside the tool layer" not in capsys.readouterr().err      # the repair's every edit is a call
    assert main(["new", str(tmp_path / "again")]) == 0
    assert main(["agent", "replay", str(tmp_path / "again"), str(tmp_path / "calls.jsonl")]) == 0
    with Project.open(path) as a, Project.open(tmp_path / "again") as b:
        fa, fb = fingerprint(a), fingerprint(b)
        assert fa["film"] and fa == fb


def test_cli_film_with_a_model_checks_its_proposals_like_the_rules(tmp_path, monkeypatch, capsys):
    jamb_film(tmp_path / "jamb").close()
    ghost = {"summary": "move the ghost", "changes": [
        {"kind": "insert_state", "frame": 1013, "roots": {"ghost": [0, 0, 1, 1, 0, 0, 0]}}]}
    late = {"summary": "key it past the end", "changes": [
        {"kind": "insert_state", "frame": 1030, "roots": {"crate": [0, 0.15, 1.0, 1, 0, 0, 0]}}]}
    with ChatServer([{"content": json.dumps(ghost)}, {"content": json.dumps(late)}]) as chat:
        monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", chat.base_url)
        monkeypatch.setenv("KEYPOSE_MODEL_NAME", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-film-repair")
        assert main(["agent", "repair", str(tmp_path / "jamb"), "--film"]) == 0
    out = capsys.readouterr().out
    assert "(offline): insert key state key_1013" in out                # the rules still propose
    assert ("the model's repair was refused (changes[0].frame: expected a frame strictly inside out..in "
            "(1002..1024), got 1030)") in out
    assert "changes[0].roots.ghost" in chat.requests[1]["body"]["messages"][-1]["content"]
    with Project.open(tmp_path / "jamb") as project:
        assert b"sk-test-film-repair" not in (tmp_path / "jamb" / "studio.db").read_bytes()
        assert [s["action"] for s in list_steps(project)] == ["propose motion repairs"]


def test_a_walk_whose_feet_cross_a_step_gets_higher_steps_for_both_feet(tmp_path):
    """Higher steps lift both feet clear of the 5.5 cm blocks at every frame and between frames."""
    from motion_films import step_film
    project = step_film(tmp_path / "step", height=0.055)
    pen = _verdicts(project)["NoPenetration"]
    assert pen.verdict == "fail" and {tuple(sorted((e["a"], e["b"]))) for e in pen.evidence} == \
        {("foot_r", "step_r"), ("foot_l", "step_l")}
    made = propose_film(project, batch=True)
    p = made.proposals[0]
    change = p.changes[-1]
    assert change["kind"] == "segment" and change["tool"] == "walk"
    assert 0.055 < change["params"]["step_height"] <= 0.1 and change["from"]["params"].get("step_height") is None
    assert "for every leg" in p.summary and re.search(r"removes \d+ penetrating frames at 10\d\d–10\d\d and \d+ of "
                                                     r"foot_l step_l at 10\d\d–10\d\d; adds none", p.summary), p.summary
    _apply_then_undo(project, p, "NoPenetration")                   # both feet clear once applied
    project.close()
