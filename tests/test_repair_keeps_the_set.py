"""Repairs leave the set alone: no repair, offline or from a model, for a key state or for the
film, moves a static body, the ground, fixed scenery or a body the storyboard keeps still; a
film repair never changes a key state that exists; candidates that add a Continuity spike are
not verified; candidates are tried smallest change first."""
from __future__ import annotations

import json
import re

import numpy as np
from chat_server import ChatServer
from motion_films import REVIEWER, cabinet_film, jamb_film

from studio.agent.client import ModelClient
from studio.cli import main
from studio.repair.film_failures import failing_runs
from studio.repair.motion_candidates import candidates, change_size
from studio.repair.motion_repair import propose_film
from studio.repair.motion_trial import FilmTrial, RepairUnfit
from studio.repair.offline import propose_offline
from studio.repair.proposals import list_proposals
from studio.repair.scenery import the_set
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.tools.box import ToolBox

CABINET = ("cab_side", "cab_shelf")


def _set_untouched(proposal, before: dict) -> None:
    """Every key state a proposal inserts keeps the set's bodies where the storyboard has them."""
    for c in proposal.changes:
        if c["kind"] == "insert_state":
            for body, was in before.items():
                got = c["pose"]["roots"].get(body, was)
                assert np.allclose(got, was, atol=1e-9), (proposal.summary, body)


def test_the_batch_repair_never_moves_a_cabinet_a_hand_clips(tmp_path, capsys):
    """The arm's forearm sweeps through the shelf of a cabinet made of plain rigid bodies that no key
    state moves: a batch repair may not 'fix' that by moving the cabinet (as it once moved a cabinet
    side 62 cm into the air); with nothing else that helps it says so and changes nothing."""
    project = cabinet_film(tmp_path / "cabinet")
    scene = load_scene(project)
    film_before = load_film_tracks(project)
    poses = {b: film_before.roots[b][0].tolist() for b in (*CABINET, "base", "floor")}
    trial = FilmTrial(project)
    assert set(CABINET) | {"base", "floor"} <= trial.fixed          # plain rigid bodies, kept still
    assert not {"upper", "fore"} & trial.fixed
    project.close()
    code = main(["agent", "repair", str(tmp_path / "cabinet"), "--film", "--offline", "--until-pass",
                 "--approve-verified", "--max-rounds", "3"])
    out = capsys.readouterr().out
    assert code == 1 and "nothing helps" in out
    assert not any(f"move {b}" in out for b in (*CABINET, "base"))
    with Project.open(tmp_path / "cabinet") as p:
        for proposal in list_proposals(p):
            _set_untouched(proposal, poses)
        after = load_film_tracks(p)
        for b in (*CABINET, "base"):
            assert np.array_equal(after.roots[b], film_before.roots[b]), b
    assert scene.body("cab_shelf").kind == "rigid"


def test_a_candidate_moving_the_set_is_refused_before_it_is_verified(tmp_path):
    project = cabinet_film(tmp_path / "cabinet")
    trial = FilmTrial(project)
    run = next(r for r in failing_runs(trial.base_reports, trial.segments) if r.check == "NoPenetration")
    pose = trial.pose_at(1016)
    moved = pose.to_dict()
    moved["roots"]["cab_shelf"] = [-0.432, 0, 0.61, 1, 0, 0, 0]          # the shelf 293 mm along +x
    changes = [{"kind": "insert_state", "state": "key_1016", "frame": 1016, "split": "raised..under",
                "pose": moved, "shot": "wide", "description": "keyed"}]
    outcome = trial.judge(run, changes)
    assert not outcome.ok and outcome.effect.startswith("moves the set (cab_shelf 293 mm at 1016)")
    assert outcome.added_required >= 1 and not outcome.narrows           # a batch cannot narrow with it
    project.close()


def test_a_film_repair_never_changes_a_key_state_that_exists(tmp_path):
    project = cabinet_film(tmp_path / "cabinet")
    trial = FilmTrial(project)
    run = next(r for r in failing_runs(trial.base_reports, trial.segments) if r.check == "NoPenetration")
    pose = trial.pose_at(1025).to_dict()
    pose["joints"]["elbow"] = 0.4
    changes = [{"kind": "insert_state", "state": "under", "frame": 1025, "split": "", "pose": pose}]
    try:
        trial.judge(run, changes)
    except RepairUnfit as e:
        assert "that key state exists" in str(e)
    else:
        raise AssertionError("a repair changed an approved key state")
    project.close()


def test_a_state_repair_moves_the_arm_by_its_joints_not_the_shelf(tmp_path):
    """A key state whose forearm is in the shelf: the offline rules may not push the shelf (or the
    arm's base, which no state moves); they move the forearm by the arm's own joints."""
    project = cabinet_film(tmp_path / "cabinet")
    box = ToolBox(project, actor=REVIEWER)
    box.call("set_state", {"state": "poking", "frame": 1016, "shot": "wide", "description": "into the shelf",
                           "joints": {"shoulder": -0.17, "elbow": 0.0}})
    proposals, unsolved = propose_offline(project, "poking")
    assert proposals, unsolved
    for p in proposals:
        assert {c["kind"] for c in p.changes} == {"joint"}, p.summary
        mover = re.match(r"(?:push|move) (\S+)", p.summary)
        assert p.verified["ok"] and mover and not mover.group(1).startswith("cab_"), p.summary
    project.close()


def test_the_set_is_static_bodies_fixed_scenery_and_what_the_storyboard_keeps_still(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    scene = load_scene(project)
    film = load_film_tracks(project)
    plan = project.get_doc("plan")
    assert the_set(scene, plan, [], film) == {"floor", "jamb_l", "jamb_r"}      # the crate moves
    fixed_crate = dict(plan, objects=[{"name": "crate", "description": "set dressing", "fixed": True}])
    assert "crate" in the_set(scene, fixed_crate, [], film)
    with_bad = dict(plan, objects=[{"name": "crate", "description": "x", "fixed": "yes"}])
    try:
        ToolBox(project, actor=REVIEWER).call("set_plan", {"plan": with_bad})
    except Exception as e:
        assert "plan.objects[0].fixed: expected true or false" in str(e)
    else:
        raise AssertionError("a plan with fixed: 'yes' was stored")
    project.close()


def test_a_model_repair_moving_a_static_jamb_is_not_verified(tmp_path):
    """The model once moved the static jamb_l 2.1 m and was shown as removing every penetrating
    frame; now that reply is sent back refused, and its next reply is checked the same way."""
    project = jamb_film(tmp_path / "jamb")
    away = {"summary": "move the jamb away", "changes": [
        {"kind": "insert_state", "frame": 1013, "roots": {"jamb_l": [0, 3.0, 1.0, 1, 0, 0, 0]}}]}
    good = {"summary": "slide it into the opening", "changes": [
        {"kind": "insert_state", "frame": 1013, "roots": {"crate": [0, 0.15, 1.0, 1, 0, 0, 0]}}]}
    from studio.agent.model_motion_repair import propose_film_with_model
    with ChatServer([{"content": json.dumps(away)}, {"content": json.dumps(good)}]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        trial = FilmTrial(project)
        out = propose_film_with_model(project, client, trial, propose_film(project, store=False, trial=trial).runs)
        refusal = chat.requests[1]["body"]["messages"][-1]["content"]
    assert "moves the set (jamb_l 2100 mm at 1013)" in refusal
    assert len(out.proposals) == 1 and "slide it into the opening" in out.proposals[0].summary
    for p in list_proposals(project):
        assert all("jamb_l" not in c.get("pose", {}).get("roots", {}) or
                   c["pose"]["roots"]["jamb_l"] == [0, 0.9, 1.0, 1, 0, 0, 0] for c in p.changes)
    project.close()


def test_candidates_come_smallest_change_first(tmp_path):
    project = jamb_film(tmp_path / "jamb")
    trial = FilmTrial(project)
    run = next(r for r in failing_runs(trial.base_reports, trial.segments) if r.check == "NoPenetration")
    sizes = [change_size(trial, c[2]) for c in candidates(trial, run)]
    assert sizes == sorted(sizes) and sizes[0][0] == 0 and any(s[0] == 1 for s in sizes)
    project.close()


def test_a_candidate_that_breaks_a_hold_is_seen_failing_by_the_trial(tmp_path):
    """The trial verifies a candidate with the holds its re-baked segments' tools record: a key state
    that puts the carried box 3 cm off the gripper mid-carry breaks the hold (EventsSatisfied)."""
    from hold_films import carry_film
    project = carry_film(tmp_path / "carry")
    box = ToolBox(project, actor="Ada")
    box.call("author_segment", {"segment": "lifted..moved"})
    trial = FilmTrial(project)
    events = {r.name: r for r in trial.base_reports}["EventsSatisfied"]
    assert events.verdict == "pass" and events.metrics.get("holds", 0) >= 1
    pose = trial.pose_at(1006).to_dict()
    pose["roots"]["box"] = [pose["roots"]["box"][0], pose["roots"]["box"][1], pose["roots"]["box"][2] - 0.03,
                            *pose["roots"]["box"][3:]]
    changes = [{"kind": "insert_state", "state": "key_1006", "frame": 1006, "split": "lifted..moved",
                "pose": pose, "shot": "wide", "description": "keyed"}]
    _, reports, _ = trial.run(changes)
    events = {r.name: r for r in reports}["EventsSatisfied"]
    assert events.verdict == "fail"
    assert any(e.get("kind") == "hold" and e.get("body") == "box" for e in events.evidence), events.evidence
    project.close()


def test_a_part_on_a_fixed_joint_is_judged_by_the_joints_above_it(tmp_path):
    """A knob fixed to a door (a fixed joint holds no value): the knob moves with the door's hinge,
    so neither is in the set when the door opens; the cabinet they hang from is."""
    from hold_films import door_film

    from studio.timeline.storyboard import list_states
    project = door_film(tmp_path / "door")
    scene = load_scene(project)
    poses = [s.pose for s in list_states(project)]
    fixed = the_set(scene, project.get_doc("plan"), poses, load_film_tracks(project))
    assert "cabinet" in fixed and not {"door", "knob"} & fixed
    shut = [p.copy() for p in poses[:1]] * 2                        # the door shut in both states: kept still
    assert {"door", "knob"} <= the_set(scene, project.get_doc("plan"), shut, None)
    project.close()
