"""Posing by joint, by body, by named frame and by reaching."""
from __future__ import annotations

import numpy as np
import pytest
from timeline_scenes import arm_scene

from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import quat_from_axis_angle
from studio.timeline.motion.ik import frame_pose
from studio.timeline.posing import PoseError, align, move_body, reach, set_joint


def test_set_joint_inside_limits_only():
    scene = arm_scene()
    rest = Pose.rest(scene)
    pose = set_joint(scene, rest, "elbow", 1.5)
    assert pose.joints["elbow"] == 1.5 and rest.joints["elbow"] == 0.0
    with pytest.raises(PoseError, match=r"set joint elbow: -0.2000 is outside its limits \[0.0000, 2.5000\]"):
        set_joint(scene, rest, "elbow", -0.2)
    with pytest.raises(PoseError, match="no joint named 'knee'"):
        set_joint(scene, rest, "knee", 0.1)


def test_move_body_and_refuse_static():
    scene = arm_scene()
    q = quat_from_axis_angle(np.array([0, 0, 1.0]), np.array(0.5))
    pose = move_body(scene, Pose.rest(scene), "crate", position=[1.0, -1.0, 0.1], rotation=q)
    w = pose_world(scene, pose)["crate"]
    assert np.allclose(w[:3, 3], [1.0, -1.0, 0.1]) and np.isclose(w[0, 0], np.cos(0.5))
    with pytest.raises(PoseError, match="move body base: it is static"):
        move_body(scene, Pose.rest(scene), "base", position=[1, 1, 0])


def test_align_puts_crate_top_on_the_arm_tip():
    scene = arm_scene()
    pose = set_joint(scene, Pose.rest(scene), "elbow", 1.0)
    pose = align(scene, pose, "crate_top", "tip")
    assert np.allclose(frame_pose(scene, pose, "crate_top"), frame_pose(scene, pose, "tip"), atol=1e-9)
    assert pose.joints["elbow"] == 1.0


def test_reach_tip_to_a_frame_within_a_millimetre():
    scene = arm_scene()
    pose = move_body(scene, Pose.rest(scene), "crate", position=[0.45, 0.45, 0.2])
    pose, err = reach(scene, pose, "tip", "crate_top", ["yaw", "elbow"])
    assert err < 1e-3
    assert np.linalg.norm(frame_pose(scene, pose, "tip")[:3, 3] - frame_pose(scene, pose, "crate_top")[:3, 3]) < 1e-3
    assert -2 <= pose.joints["yaw"] <= 2 and 0 <= pose.joints["elbow"] <= 2.5
