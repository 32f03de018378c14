"""The simulate motion tool: bodies settle on the floor without penetrating, runs repeat, a
concave obstacle catches a ball, and a run that goes wrong or misses its state is refused."""
from __future__ import annotations

import math

import numpy as np
import pytest
from motion_scenes import segment

from studio.checks import penetration
from studio.checks.footage import Footage
from studio.scene.ir import Scene
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose
from studio.timeline.bake import complete
from studio.timeline.motion import EndStateOffered, MotionError, motion_tool


def drop_scene() -> Scene:
    """Two crates, a ball and a capsule in the air above a floor, a cup on the floor."""
    tilt = [math.cos(0.3), math.sin(0.3) * 0.6, math.sin(0.3) * 0.8, 0.0]
    return Scene.from_dict({"name": "drop", "bodies": [
        {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
         "geometry": {"size": [6, 6, 0.1], "offset": {"position": [0, 0, -0.05]}}},
        {"name": "cup", "kind": "static", "mass": 0,
         "geometry": {"source": "cad", "part": "cup", "tolerance": 1e-3,
                      "params": {"radius": 0.12, "height": 0.1, "wall": 0.01, "base": 0.01}}},
        {"name": "crate_a", "geometry": {"size": [0.3, 0.3, 0.3]}, "mass": 4.0},
        {"name": "crate_b", "geometry": {"size": [0.4, 0.25, 0.2]}, "mass": 3.0},
        {"name": "ball", "geometry": {"source": "cad", "part": "sphere", "tolerance": 1e-3,
                                      "params": {"radius": 0.05}}, "mass": 0.3},
        {"name": "pill", "geometry": {"source": "cad", "part": "capsule", "tolerance": 1e-3,
                                      "params": {"length": 0.3, "radius": 0.04}}, "mass": 0.5}],
        "rest": {"floor": [0, 0, 0, 1, 0, 0, 0], "cup": [1.5, 0, 0, 1, 0, 0, 0],
                 "crate_a": [0, 0, 0.5, *tilt], "crate_b": [0.8, 0.6, 0.4, 1, 0, 0, 0],
                 "ball": [1.5, 0.02, 0.4, 1, 0, 0, 0], "pill": [-0.8, -0.5, 0.3, *tilt]}})


BODIES = ["crate_a", "crate_b", "ball", "pill"]


def run(tmp_path, params=None, end=None, frames=72):
    scene = drop_scene()
    start = Pose.rest(scene)
    seg = segment(scene, start, end or start, frames, tmp_path)
    p = {"bodies": BODIES, "max_difference": 100.0,          # round things roll on unless they meet resistance
         "materials": {"ball": {"rolling": 0.002}, "pill": {"rolling": 0.002}}}
    p.update(params or {})
    return scene, seg, motion_tool("simulate").author(seg, p)


def test_bodies_settle_on_the_floor_without_penetration_and_the_ball_lands_in_the_cup(tmp_path):
    scene, seg, out = run(tmp_path)
    tracks = complete(scene, out.tracks, seg.a.pose.completed(scene), seg.b.pose.completed(scene),
                      seg.a.frame, seg.b.frame)
    settled = tracks.slice(seg.b.frame - 12, seg.b.frame)
    film = Footage.build(scene, scene_meshes(scene, tmp_path), settled)
    report = penetration.verify(film)
    assert report.verdict == "pass", report.evidence[:3]
    for b in BODIES:                                  # at rest: still over the last half second
        last = out.tracks.roots[b][-12:, :3]
        assert np.max(np.linalg.norm(last - last[-1], axis=1)) < 5e-3, b
    gap = {b: min(film.pair_gap(b, "floor", 0.01)[-1], film.pair_gap(b, "cup", 0.01)[-1]) for b in BODIES}
    assert all(g <= 0.005 for g in gap.values()), gap          # resting on something, not hovering
    ball = out.tracks.roots["ball"][-1]
    assert np.linalg.norm(ball[:2] - [1.5, 0.0]) < 0.11 - 0.05 + 1e-3 and 0.01 + 0.05 - 0.005 < ball[2] < 0.1
    assert out.end_pose.roots["ball"] == out.tracks.roots["ball"][-1].tolist()


def test_simulation_repeats_exactly(tmp_path):
    _, _, a = run(tmp_path, frames=36)
    _, _, b = run(tmp_path, frames=36)
    assert a.tracks.hash() == b.tracks.hash()


def test_a_body_leaving_the_scene_is_refused_by_name(tmp_path):
    with pytest.raises(MotionError, match=r"'pill' left the scene at frame 10\d\d"):
        run(tmp_path, {"velocities": {"pill": {"linear": [0, 0, 400.0]}}}, frames=24)


def test_an_end_far_from_the_approved_state_is_refused_with_the_difference(tmp_path):
    _, _, out = run(tmp_path, frames=48)
    scene = drop_scene()
    with pytest.raises(EndStateOffered, match=r"ends 0\.\d+ .* furthest at '\w+' \(0\.\d+ m and 0\.\d+ rad\)"
                                              r".*adopt the run's end state") as offered:
        run(tmp_path, {"max_difference": 0.05}, frames=48)
    assert offered.value.end_pose.roots == out.end_pose.roots          # what is offered is the run's own end
    _, _, again = run(tmp_path, {"max_difference": 0.05}, end=out.end_pose, frames=48)   # the offered end approved
    assert "ends 0.0000" in again.notes[0]
    assert again.tracks.hash() == out.tracks.hash() and scene.name == "drop"


def test_unknown_bodies_are_named(tmp_path):
    with pytest.raises(MotionError, match="'plank' is no root body"):
        run(tmp_path, {"bodies": ["plank"]}, frames=4)


def test_a_simulation_that_blows_up_is_refused_by_name_not_reset(tmp_path, monkeypatch):
    """MuJoCo resets a run whose numbers blow up and carries on from the start; the tool refuses,
    and MuJoCo's warning goes to the log, not to a file in the working folder."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MotionError, match=r"'ball' blew up by frame 100\d"):
        run(tmp_path, {"velocities": {"ball": {"linear": [1e15, 0.0, 0.0]}},
                       "bounds": [[-1e300] * 3, [1e300] * 3]}, frames=8)
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
