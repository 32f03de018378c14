"""The humanoid robot: forward kinematics against hand-computed trigonometry, and its rest stance."""
from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from studio.scene import robot
from studio.scene.kinematics import frame_world, pose_world, tracks_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7

from example_films import example_scene

ROBOT_X = -3.0           # where the doorway film's robot stands


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    return example_scene("doorway", tmp_path_factory.mktemp("doorway") / "scene")


def _pose(scene, **joints):
    p = Pose.rest(scene)
    p.joints.update(joints)
    return p


def _point(scene, pose, frame):
    return frame_world(scene, pose_world(scene, pose), frame)[:3, 3]


def test_rest_stance_soles_on_the_floor_facing_the_panel(scene):
    world = pose_world(scene, Pose.rest(scene))
    for side in "lr":
        sole = frame_world(scene, world, f"sole_{side}")
        assert abs(sole[2, 3]) < 1e-3
        np.testing.assert_allclose(sole[:3, :3], np.eye(3), atol=1e-12)    # flat, facing +X
        foot = body_mesh(scene.body(f"foot_{side}")).copy()
        foot.apply_transform(world[f"foot_{side}"])
        assert abs(foot.bounds[0, 2]) < 1e-3
    head = body_mesh(scene.body("head")).copy()
    head.apply_transform(world["head"])
    assert 1.25 < head.bounds[1, 2] < 1.40               # about 1.3 m tall
    panel = world["panel"][:3, 3]
    pelvis = world["pelvis"][:3, 3]
    assert panel[0] - pelvis[0] == pytest.approx(1.5)
    assert {b.group for b in scene.bodies if b.kind == "link"} == {"robot"}


def test_joint_limits_are_real_and_contain_the_standing_pose(scene):
    knee = scene.joint("knee_l")
    assert (knee.lower, knee.upper) == (0.0, 2.4)
    for j in scene.joints:
        assert j.type == "revolute" and j.lower <= 0.0 <= j.upper and j.upper - j.lower < 2 * math.pi
    assert scene.joint("shoulder_roll_l").upper == -scene.joint("shoulder_roll_r").lower


def test_gripper_from_shoulder_pitch_and_elbow_by_hand(scene):
    a, b = -0.7, -1.1                    # arm raised forward, elbow bent
    got = _point(scene, _pose(scene, shoulder_pitch_l=a, elbow_l=b), "gripper_l")
    x0 = ROBOT_X
    shoulder = np.array([x0, robot.SHOULDER_Y, robot.PELVIS_HEIGHT + robot.WAIST_Z + robot.SHOULDER_Z])
    elbow = shoulder + robot.UPPER_ARM * np.array([-math.sin(a), 0, -math.cos(a)])
    reach = robot.FOREARM + robot.GRIPPER_DEPTH
    gripper = elbow + reach * np.array([-math.sin(a + b), 0, -math.cos(a + b)])
    np.testing.assert_allclose(got, gripper, atol=1e-9)
    assert got[0] > shoulder[0] + 0.3      # the hand is in front of the robot


def test_gripper_with_shoulder_roll_and_waist_yaw_by_hand(scene):
    a, r, w = 0.4, 0.9, 0.5
    got = _point(scene, _pose(scene, shoulder_pitch_r=a, shoulder_roll_r=-r, waist=w), "gripper_r")
    sy = -robot.SHOULDER_Y
    shoulder_torso = np.array([0.0, sy, robot.SHOULDER_Z])
    arm_dir = np.array([-math.sin(a) * math.cos(r), -math.sin(r), -math.cos(a) * math.cos(r)])
    local = shoulder_torso + (robot.UPPER_ARM + robot.FOREARM + robot.GRIPPER_DEPTH) * arm_dir
    c, s = math.cos(w), math.sin(w)
    yawed = np.array([c * local[0] - s * local[1], s * local[0] + c * local[1], local[2]])
    expected = np.array([ROBOT_X, 0.0, robot.PELVIS_HEIGHT + robot.WAIST_Z]) + yawed
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_sole_from_hip_knee_ankle_by_hand(scene):
    h, k, an = -0.6, 1.2, -0.3
    world = pose_world(scene, _pose(scene, hip_pitch_l=h, knee_l=k, ankle_l=an))
    sole = frame_world(scene, world, "sole_l")
    hip = np.array([ROBOT_X, robot.HIP_Y, robot.PELVIS_HEIGHT - robot.HIP_DROP])
    knee = hip + robot.THIGH * np.array([-math.sin(h), 0, -math.cos(h)])
    ankle = knee + robot.SHIN * np.array([-math.sin(h + k), 0, -math.cos(h + k)])
    t = h + k + an
    ry = np.array([[math.cos(t), 0, math.sin(t)], [0, 1, 0], [-math.sin(t), 0, math.cos(t)]])
    expected = ankle + ry @ np.array([robot.SOLE_FORWARD, 0, -robot.ANKLE_HEIGHT])
    np.testing.assert_allclose(sole[:3, 3], expected, atol=1e-9)
    np.testing.assert_allclose(sole[:3, :3], ry, atol=1e-9)


def test_fk_over_100_frames_equals_per_frame_fk(scene):
    rng = np.random.default_rng(7)
    n = 100
    joints = {j.name: rng.uniform(j.lower, j.upper, n) for j in scene.joints}
    yaw = np.linspace(0, 2.0, n)
    pelvis = np.column_stack([np.linspace(-3, -1, n), np.zeros(n), np.full(n, robot.PELVIS_HEIGHT),
                              np.cos(yaw / 2), np.zeros(n), np.zeros(n), np.sin(yaw / 2)])
    rest = {r: np.tile(scene.rest[r], (n, 1)) for r in scene.roots if r != "pelvis"}
    tracks = Tracks(1001, {"pelvis": pelvis, **rest}, joints)
    batch = tracks_world(scene, tracks)
    for i in (0, 1, 37, 63, 99):
        one = pose_world(scene, tracks.pose_at(1001 + i))
        for body in ("hand_l", "foot_r", "head", "panel"):
            np.testing.assert_allclose(batch[body][i], one[body], atol=1e-12)
        np.testing.assert_allclose(frame_world(scene, batch, "gripper_r")[i],
                                   frame_world(scene, one, "gripper_r"), atol=1e-12)
    assert batch["hand_l"].shape == (n, 4, 4)


def test_links_touch_only_at_their_joints_in_the_rest_pose(scene):
    world = pose_world(scene, Pose.rest(scene))
    manager = trimesh.collision.CollisionManager()
    for b in scene.bodies:
        if b.group == "robot":
            manager.add_object(b.name, body_mesh(b), transform=world[b.name])
    _, pairs = manager.in_collision_internal(return_names=True)
    adjacent = {frozenset((j.parent, j.child)) for j in scene.joints}
    assert {frozenset(p) for p in pairs} - adjacent == set()
    assert pairs, "the shoulder and hip balls should meet their neighbours"


def test_rest_root_transform_matches_add_robot():
    from studio.scene.ir import Scene
    s = Scene()
    root = robot.add_robot(s, x=1.0, y=2.0, yaw=math.pi / 2, prefix="b_")
    assert root == "b_pelvis" and "b_gripper_l" in [f.name for f in s.frames]
    m = from_7(np.array(s.rest[root]))
    np.testing.assert_allclose(m[:3, 0], [0, 1, 0], atol=1e-12)          # now faces +Y
    np.testing.assert_allclose(m[:3, 3], [1.0, 2.0, robot.PELVIS_HEIGHT])
