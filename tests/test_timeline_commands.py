"""Undo and redo of every storyboard edit through one CommandStack."""
from __future__ import annotations

import numpy as np
from timeline_scenes import author_arm

from studio.scene.pose import Pose
from studio.timeline import film
from studio.timeline.commands import BakeSegment, CommandStack, DeleteState, MoveKey, ReviewState, SetPose, SetState
from studio.timeline.gate import state_status
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.reviews import list_reviews
from studio.timeline.storyboard import State, get_state


def test_review_undo_redo_and_events(tmp_project):
    author_arm(tmp_project, approve=False)
    stack, events = CommandStack(), []
    stack.subscribe(lambda ev, cmd: events.append((ev, cmd.label)))
    stack.run(ReviewState(tmp_project, "bent", "approve", "ok", "ana"))
    assert state_status(tmp_project, "bent").status == "approved"
    assert stack.undo_label == "Undo approve bent" and stack.redo_label == ""
    stack.undo()
    assert state_status(tmp_project, "bent").status == "unreviewed"
    assert list_reviews(tmp_project, "bent") == []
    assert stack.redo_label == "Redo approve bent"
    stack.redo()
    assert state_status(tmp_project, "bent").status == "approved"
    assert events == [("do", "approve bent"), ("undo", "approve bent"), ("redo", "approve bent")]
    actions = [a["action"] for a in tmp_project.audit_log() if a["action"] in ("approve", "withdraw review")]
    assert actions == ["approve", "withdraw review", "approve"]           # newest first, nothing erased


def test_pose_edit_undo_restores_approval(tmp_project):
    scene = author_arm(tmp_project)
    stack = CommandStack()
    pose = get_state(tmp_project, "bent").pose.copy()
    pose.joints["elbow"] = 2.0
    stack.run(SetPose(tmp_project, "bent", pose))
    assert get_state(tmp_project, "bent").pose.joints["elbow"] == 2.0
    assert state_status(tmp_project, "bent", scene).status == "stale"
    stack.undo()
    assert get_state(tmp_project, "bent").pose.joints["elbow"] == 1.2
    assert state_status(tmp_project, "bent", scene).status == "approved"
    stack.redo()
    assert get_state(tmp_project, "bent").pose.joints["elbow"] == 2.0


def test_move_key_and_new_and_deleted_state(tmp_project):
    scene = author_arm(tmp_project)
    stack = CommandStack()
    stack.run(MoveKey(tmp_project, "bent", 1030))
    assert get_state(tmp_project, "bent").frame == 1030
    stack.undo()
    assert get_state(tmp_project, "bent").frame == 1024
    stack.run(SetState(tmp_project, State("wave", 1040, Pose.rest(scene), "close")))
    assert get_state(tmp_project, "wave").frame == 1040
    assert stack.redo_label == ""                                # a new edit clears redo
    stack.undo()
    assert get_state(tmp_project, "wave") is None
    stack.run(DeleteState(tmp_project, "back"))
    assert get_state(tmp_project, "back") is None
    stack.undo()
    assert get_state(tmp_project, "back").pose.joints["elbow"] == 0.3
    assert not stack.can_undo and stack.redo_label == "Redo delete state back"


def test_bake_undo_restores_previous_tracks(tmp_project):
    scene = author_arm(tmp_project)
    stack = CommandStack()
    keys = [(s.frame, s.pose) for s in (get_state(tmp_project, "rest"), get_state(tmp_project, "bent"))]
    first = interpolate_poses(scene, keys)
    stack.run(BakeSegment(tmp_project, "rest..bent", first, "interpolate"))
    second = interpolate_poses(scene, keys, rotation="slerp")
    second.joints["yaw"] = second.joints["yaw"] + 0.01 * np.sin(np.linspace(0, np.pi, second.n_frames))
    stack.run(BakeSegment(tmp_project, "rest..bent", second, "wiggle"))
    assert film.list_segments(tmp_project)[0]["tool"] == "wiggle"
    stack.undo()
    row = film.list_segments(tmp_project)[0]
    assert row["tool"] == "interpolate"
    np.testing.assert_array_equal(film.load_segment(tmp_project, "rest..bent").joints["yaw"], first.joints["yaw"])
    stack.undo()
    assert film.list_segments(tmp_project) == []
    stack.redo()
    assert film.list_segments(tmp_project)[0]["tool"] == "interpolate"


def test_failed_command_leaves_history_unchanged(tmp_project):
    scene = author_arm(tmp_project)
    stack = CommandStack()
    stack.run(MoveKey(tmp_project, "bent", 1030))
    tracks = interpolate_poses(scene, [(1001, get_state(tmp_project, "rest").pose), (1030, Pose.rest(scene))])
    try:
        stack.run(BakeSegment(tmp_project, "rest..bent", tracks, "interpolate"))   # bent moved: stale
    except ValueError as e:
        assert "bent" in str(e)
    assert stack.undo_label == "Undo move bent to frame 1030"
    assert film.list_segments(tmp_project) == []
