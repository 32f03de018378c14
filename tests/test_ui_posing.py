"""Posing by hand, without a window: moves, turns and IK drags of a key state,
snapping, limits that stop a drag (named, not hidden), and one command per drag."""
from __future__ import annotations

import math

import numpy as np
import pytest

from agent_scenes import make_arm_project
from studio.scene.pose import Pose
from studio.timeline.commands import CommandStack
from studio.timeline.storyboard import State, get_state, put_state
from studio.ui.posing import PoseDrag, chain_joints, frame_point, handle_frame, key_at, turn_joint


@pytest.fixture
def arm(tmp_project):
    scene = make_arm_project(tmp_project)
    put_state(tmp_project, scene, State("k1", 1001, Pose({}, {"shoulder": 0.2, "elbow": 0.6}).completed(scene)))
    return tmp_project, scene


def test_move_and_turn_a_root_body_snap_and_land_as_one_command(arm):
    project, scene = arm
    st = get_state(project, "k1")
    drag = PoseDrag(scene, st)
    drag.move("panel", [0.123, -0.0449, 0.0], snap=True)
    assert drag.pose.roots["panel"][:3] == pytest.approx([-1.0 + 0.12, 1.0 - 0.04, 0.01])
    drag.turn("panel", [0, 0, 1], math.radians(31), snap=True)      # a new preview replaces the move
    w = drag.world()["panel"]
    assert math.degrees(math.atan2(w[1, 0], w[0, 0])) == pytest.approx(30.0)
    assert w[:3, 3] == pytest.approx([-1.0, 1.0, 0.01])             # turned about its own origin
    stack = CommandStack()
    assert drag.commit(project, stack) == "pose k1"
    assert get_state(project, "k1").pose.roots["panel"] == pytest.approx(drag.pose.roots["panel"])
    stack.undo()
    assert get_state(project, "k1").pose.roots["panel"] == pytest.approx([-1.0, 1.0, 0.01, 1, 0, 0, 0])


def test_dragging_a_link_moves_its_tree_root_and_a_static_body_is_refused(arm):
    project, scene = arm
    drag = PoseDrag(scene, get_state(project, "k1"))
    drag.move("fore", [0, 0.5, 0])                                   # the whole robot moves with its base
    assert drag.pose.roots["base"][:3] == pytest.approx([-1.5, 0.5, 0.2])
    with pytest.raises(ValueError, match="wall is static"):
        drag.move("wall", [1, 0, 0])


def test_ik_drag_reaches_within_limits_and_names_the_joint_that_stops_it(arm):
    project, scene = arm
    st = get_state(project, "k1")
    assert handle_frame(scene, "fore") == "gripper" and chain_joints(scene, "fore") == ["elbow", "shoulder"]
    drag = PoseDrag(scene, st)
    target = frame_point(scene, Pose({}, {"shoulder": 0.35, "elbow": 0.9}).completed(scene), "gripper")
    drag.reach("gripper", target)
    assert np.linalg.norm(frame_point(scene, drag.pose, "gripper") - target) < 1e-3
    assert drag.stopped == [] and drag.pose.joints["elbow"] != st.pose.joints["elbow"]
    drag = PoseDrag(scene, st)                                       # out of reach: the elbow straightens
    start = frame_point(scene, drag.start, "gripper")
    for t in np.linspace(0, 1, 12)[1:]:                              # the mouse moves in small steps
        drag.reach("gripper", start + t * np.array([0.5, 0, 0.5]))
    assert drag.error > 0.3
    assert "elbow" in drag.stopped and drag.pose.joints["elbow"] == pytest.approx(0.0, abs=1e-9)
    for name in ("shoulder", "elbow"):                               # never past a limit
        j = scene.joint(name)
        assert j.lower - 1e-9 <= drag.pose.joints[name] <= j.upper + 1e-9


def test_the_wheel_turns_a_joint_and_stops_at_its_limit_saying_so(arm):
    project, scene = arm
    st = get_state(project, "k1")
    pose, msg = turn_joint(scene, st, "elbow", 0.1)
    assert pose.joints["elbow"] == pytest.approx(0.7) and msg == "elbow +0.700 rad"
    pose, msg = turn_joint(scene, st, "elbow", -1.0)
    assert pose.joints["elbow"] == 0.0 and msg == "elbow stopped at its lower limit +0.000 rad"


def test_only_a_key_at_the_playhead_is_posed(arm):
    project, scene = arm
    states = [get_state(project, "k1")]
    assert key_at(states, 1001).id == "k1" and key_at(states, 1002) is None
