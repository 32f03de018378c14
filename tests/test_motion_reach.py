"""Reach, grasp, carry, place and release: effectors reach by IK inside their limits, a held body
rides on the hand, and the holds the tools record, as plan events, satisfy the events and
Supported verifiers."""
from __future__ import annotations

import math

import numpy as np
import pytest
from motion_scenes import segment, shelf_arm_scene

from studio.checks import events as event_checks
from studio.checks import supported
from studio.checks.footage import Footage
from studio.checks.run import run_checks
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose, Tracks
from studio.timeline.bake import complete, pin
from studio.timeline.motion.ik import Goal, frame_pose, solve_ik
from studio.timeline.motion import MotionError, motion_tool
from studio.timeline.motion.reach import attachment_events

ARM = {"frame": "tip", "joints": ["yaw", "elbow"]}


def posed(scene, pose, target) -> Pose:
    pose, err = solve_ik(scene, pose, ["yaw", "elbow"], [Goal("tip", np.asarray(target, float))], 200)
    assert err < 1e-4
    return pose


def story(scene):
    """Four states: arm aside, tip at the box's near face, box carried onto shelf b, tip away."""
    rest = Pose.rest(scene).completed(scene)
    rest.joints["yaw"], rest.joints["elbow"] = -1.2, 1.2
    at_box = posed(scene, rest, [0.53, 0.0, 0.3])                      # 2 cm off the box's near face
    on_b = at_box.copy()
    on_b.joints["yaw"] = at_box.joints["yaw"] + math.pi / 2           # the whole arm swings a quarter turn
    tip_b = frame_pose(scene, on_b, "tip")
    box_b = tip_b @ np.linalg.inv(frame_pose(scene, at_box, "tip")) @ frame_pose(scene, at_box, "box")
    from studio.scene.transforms import to_7
    on_b.roots["box"] = to_7(box_b).tolist()
    away = posed(scene, on_b, tip_b[:3, 3] + [0.0, -0.12, 0.0])
    return rest, at_box, on_b, away


def bake_all(scene, poses, frames, tools, tmp_path):
    parts, attachments, notes = [], [], []
    f = 1001
    for (pa, pb), (tool, params) in zip(zip(poses, poses[1:]), tools):
        seg = segment(scene, pa, pb, frames, tmp_path, fa=f)
        out = motion_tool(tool).author(seg, params)
        full = complete(scene, out.tracks, pa.completed(scene), pb.completed(scene), seg.a.frame, seg.b.frame)
        pinned, residual = pin(full, pa.completed(scene), pb.completed(scene))
        assert residual < 2e-3, (tool, residual)
        parts.append(pinned)
        attachments += out.attachments
        notes += out.notes
        f = seg.b.frame
    joined = parts[0]
    for p in parts[1:]:
        joined = Tracks(joined.frame_start, {k: np.concatenate([v, p.roots[k][1:]]) for k, v in joined.roots.items()},
                        {k: np.concatenate([v, p.joints[k][1:]]) for k, v in joined.joints.items()})
    return joined, attachments, notes


def test_grasp_carry_release_records_holds_the_verifiers_accept(tmp_path):
    scene = shelf_arm_scene()
    poses = story(scene)
    tools = [("grasp", {"body": "box", "effectors": [dict(ARM, target=[0.53, 0.0, 0.3], via=[-0.1, 0.0, 0.0])]}),
             ("carry", {"body": "box", "on": "tip", "effectors": [ARM]}),
             ("release", {"body": "box", "effectors": [ARM]})]
    tracks, attachments, notes = bake_all(scene, poses, 24, tools, tmp_path)
    assert {(a["frame"], a["body"]) for a in attachments} == {("tip", "box")}
    assert min(a["start"] for a in attachments) == 1024 and max(a["end"] for a in attachments) == 1047
    plan = {"events": attachment_events(attachments)}
    film = Footage.build(scene, scene_meshes(scene, tmp_path), tracks, plan=plan)
    verdicts = event_checks.evaluate(film, plan["events"])
    assert all(v[0] for v in verdicts.values()), verdicts
    report = supported.verify(film)                     # the box in the air is held, not floating
    assert report.verdict == "pass", report.evidence[:3]
    meshes = scene_meshes(scene, tmp_path)               # the holds as recorded, without any plan event
    held = run_checks(scene, meshes, tracks, plan={"events": []}, attachments=attachments, names=["Supported"])
    loose = run_checks(scene, meshes, tracks, plan={"events": []}, names=["Supported"])
    assert held[0].verdict == "pass" and loose[0].verdict == "fail"
    assert {e["body"] for e in loose[0].evidence} == {"box"}
    mid = int(np.searchsorted(film.frames, 1036))
    assert film.pair_gap("box", "shelf_a", 0.05)[mid] > 0.01 and film.pair_gap("box", "shelf_b", 0.05)[mid] > 0.01
    world_tip = [frame_pose(scene, tracks.pose_at(f), "tip") for f in (1024, 1036, 1047)]
    world_box = [frame_pose(scene, tracks.pose_at(f), "box") for f in (1024, 1036, 1047)]
    rel = [np.linalg.inv(t) @ b for t, b in zip(world_tip, world_box)]
    assert np.allclose(rel[0], rel[1], atol=1e-6) and np.allclose(rel[0], rel[2], atol=1e-6)


def test_reach_keeps_joints_inside_limits_and_refuses_out_of_reach(tmp_path):
    scene = shelf_arm_scene()
    rest, at_box, _, _ = story(scene)
    seg = segment(scene, rest, at_box, 20, tmp_path)
    out = motion_tool("ik_reach").author(seg, {"effectors": [dict(ARM, target=[0.55, 0.0, 0.3])]})
    for j in ("yaw", "elbow"):
        v = out.tracks.joints[j]
        assert np.all(v >= scene.joint(j).lower) and np.all(v <= scene.joint(j).upper)
    assert "within" in out.notes[-1]
    with pytest.raises(MotionError, match=r"effector tip at frame \d+ misses its target by \d+\.\d mm"):
        motion_tool("ik_reach").author(seg, {"effectors": [dict(ARM, target=[1.5, 0.0, 0.3])]})
    with pytest.raises(MotionError, match="'hand' is no named frame or body"):
        motion_tool("ik_reach").author(seg, {"effectors": [dict(ARM, frame="hand")]})
