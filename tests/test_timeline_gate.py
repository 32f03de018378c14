"""The storyboard gate: one test per reason a state cannot anchor motion."""
from __future__ import annotations

import pytest
from timeline_scenes import arm_plan, arm_scene, author_arm, check_state, crate_into_base

from studio.scene.io import save_scene
from studio.scene.pose import Pose
from studio.store.reports import load_reports
from studio.timeline.gate import GateError, board_status, require_storyboards, state_status
from studio.timeline.plan import save_plan
from studio.timeline.reviews import list_reviews, record_review
from studio.timeline.storyboard import State, get_state, put_state


def reasons_of(project, segment):
    with pytest.raises(GateError) as e:
        require_storyboards(project, segment)
    return e.value.reasons


def test_approved_passing_states_open_the_gate(tmp_project):
    author_arm(tmp_project)
    require_storyboards(tmp_project, "rest..bent")
    assert [s.status for s in board_status(tmp_project)] == ["approved"] * 3


def test_missing_state(tmp_project):
    author_arm(tmp_project)
    reasons = reasons_of(tmp_project, "bent..finale")
    assert reasons == [("finale", "missing: no such state has been authored")]


def test_unreviewed_state(tmp_project):
    scene = author_arm(tmp_project, approve=False)
    record_review(tmp_project, "rest", "approve", "", "ana", scene)
    reasons = reasons_of(tmp_project, "rest..bent")
    assert [sid for sid, _ in reasons] == ["bent"]
    assert reasons[0][1].startswith("unreviewed")


def test_rejected_state_names_reviewer_and_note(tmp_project):
    scene = author_arm(tmp_project)
    record_review(tmp_project, "bent", "reject", "elbow clips the base", "ben", scene)
    (sid, why), = reasons_of(tmp_project, "rest..bent")
    assert sid == "bent" and why.startswith("rejected by ben") and "elbow clips the base" in why


def test_content_stale_after_pose_edit(tmp_project):
    scene = author_arm(tmp_project)
    st = get_state(tmp_project, "bent")
    st.pose.joints["elbow"] = 1.3
    put_state(tmp_project, scene, st)
    check_state(tmp_project, "bent")                  # re-checked, but not re-reviewed
    (sid, why), = reasons_of(tmp_project, "rest..bent")
    assert sid == "bent" and why == "stale: the state's pose, frame or cameras changed since review"
    assert state_status(tmp_project, "bent").status == "stale"


def test_design_stale_after_geometry_edit(tmp_project):
    scene = author_arm(tmp_project)
    scene.body("fore").geometry.size = [0.42, 0.04, 0.04]
    save_scene(tmp_project, scene)
    for sid in ("rest", "bent"):
        check_state(tmp_project, sid)
    reasons = reasons_of(tmp_project, "rest..bent")
    assert [sid for sid, _ in reasons] == ["rest", "bent"]
    assert all(why.startswith("stale: the scene design changed") for _, why in reasons)


def test_failing_checks_and_checks_for_another_hash(tmp_project):
    scene = author_arm(tmp_project, approve=False)
    record_review(tmp_project, "rest", "approve", "", "ana", scene)
    crate_into_base(tmp_project, "bent", scene)       # the real verifiers find the crate in the base
    reasons = reasons_of(tmp_project, "rest..bent")
    assert ("bent", "failing: NoPenetration: fail") in reasons and {sid for sid, _ in reasons} == {"bent"}
    # reports computed for another version of the state do not count: move the crate out, do not re-check
    state = get_state(tmp_project, "bent")
    state.pose.roots["crate"] = [2, 2, 0.1, 1, 0, 0, 0]
    put_state(tmp_project, scene, state)
    reasons = dict(reasons_of(tmp_project, "rest..bent"))
    assert reasons["bent"].startswith("failing: checks were run on another version")
    check_state(tmp_project, "bent")
    assert [why for sid, why in reasons_of(tmp_project, "rest..bent")] == ["unreviewed: no one has approved it yet"]


def test_object_appeared_since_review(tmp_project):
    """The shot's camera changes to one that also sees the crate: pose and design are
    unchanged, but the approval was given without seeing the crate."""
    author_arm(tmp_project)
    assert "crate" not in list_reviews(tmp_project, "bent")[-1].visible
    plan = arm_plan()
    plan["shots"][0]["camera"] = "cam_wide"
    save_plan(tmp_project, plan, arm_scene())
    reasons = reasons_of(tmp_project, "rest..bent")
    assert ("bent", "appeared since review: crate now visible") in reasons
    assert all(why.startswith("appeared") for _, why in reasons)


def test_new_body_in_view_stales_and_appears(tmp_project):
    author_arm(tmp_project)
    scene = arm_scene(with_extra=True)                 # a lamp placed beside the arm
    save_scene(tmp_project, scene)
    status = state_status(tmp_project, "rest")
    assert status.status == "stale"
    assert "appeared since review: lamp now visible" in status.reasons


def test_every_reason_of_both_states_is_listed(tmp_project):
    scene = author_arm(tmp_project, approve=False)
    crate_into_base(tmp_project, "back", scene)
    record_review(tmp_project, "back", "reject", "the crate is in the base", "ben", scene)
    err = pytest.raises(GateError, require_storyboards, tmp_project, "bent..back").value
    assert [sid for sid, _ in err.reasons] == ["bent", "back", "back"]
    assert "bent: unreviewed" in str(err) and "back: rejected by ben" in str(err)
    assert "back: failing: NoPenetration: fail" in str(err)


def test_review_is_audited_and_bound_to_hash(tmp_project):
    author_arm(tmp_project)
    r = list_reviews(tmp_project, "bent")[-1]
    from studio.timeline.storyboard import content_hash
    assert r.content_hash == content_hash(arm_scene(), get_state(tmp_project, "bent").pose, 1024)
    assert r.reviewer == "ana" and r.visible == ["base", "floor", "fore", "upper"]
    log = [a for a in tmp_project.audit_log() if a["action"] == "approve"]
    assert {a["target"] for a in log} == {"state:rest", "state:bent", "state:back"}
