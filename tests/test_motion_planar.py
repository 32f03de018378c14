"""The planar tool: a marble rolls down ramps into a concave cup cut from the real meshes, a run
continued from an earlier state joins its first segment exactly, meshing gears turn without
colliding, and a body thrown out of the scene is refused by name."""
from __future__ import annotations

import math

import numpy as np
import pytest
from motion_scenes import segment

from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.timeline.motion import EndStateOffered, MotionError, motion_tool
from studio.timeline.storyboard import State

from example_films import example_scene

MARBLE_RADIUS, CUP_X, CUP_INNER, CUP_BASE = 0.012, 0.33, 0.046, 0.004     # the marble run example's
MARBLE = {"bodies": {"marble": "circle"}, "friction": 0.7, "elasticity": 0.1}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    cache = tmp_path_factory.mktemp("marble")
    scene = example_scene("marble_run", cache / "scene")
    pa = Pose.rest(scene)
    seg = segment(scene, pa, pa, 120, cache)
    return scene, cache, motion_tool("planar").author(seg, dict(MARBLE, max_difference=100.0))


def test_the_marble_rolls_into_the_cup_and_the_end_is_offered(run):
    scene, _, out = run
    end = np.asarray(out.end_pose.roots["marble"])
    assert abs(end[0] - CUP_X) < CUP_INNER - MARBLE_RADIUS + 1e-3
    assert end[2] == pytest.approx(CUP_BASE + MARBLE_RADIUS, abs=1.5e-3)  # on the base
    assert np.all(out.tracks.roots["marble"][:, 1] == 0.0)                 # it stays in its plane
    assert "ends 1." in out.notes[0] or "ends 0." in out.notes[0]


def test_a_run_from_an_earlier_state_joins_exactly(run):
    scene, cache, whole = run
    track = whole.tracks.roots["marble"]
    states = {}
    for sid, f in (("released", 1001), ("lower", 1060), ("in_cup", 1120)):
        pose = Pose.rest(scene)
        pose.roots["marble"] = track[f - 1001].tolist()
        states[sid] = State(sid, f, pose)
    first = segment(scene, states["released"].pose, states["lower"].pose, 60, cache)
    second = segment(scene, states["lower"].pose, states["in_cup"].pose, 61, cache, fa=1060)
    second.a, second.b = states["lower"], states["in_cup"]
    second.states = states
    a = motion_tool("planar").author(first, MARBLE)
    b = motion_tool("planar").author(second, dict(MARBLE, **{"from": "released"}))
    assert np.array_equal(a.tracks.roots["marble"][-1], b.tracks.roots["marble"][0])
    assert np.array_equal(b.tracks.roots["marble"], track[59:])
    assert "ends 0.0000" in b.notes[0]
    with pytest.raises(EndStateOffered, match=r"ends 0\.\d+ .*adopt the run's end state as 'in_cup'"):
        motion_tool("planar").author(second, MARBLE)             # from rest at 'lower' it lands elsewhere


def gear_scene() -> Scene:
    gear = {"source": "cad", "part": "spur_gear", "tolerance": 1e-3,
            "params": {"teeth": 20, "module": 0.01, "thickness": 0.02}}
    small = dict(gear, params={"teeth": 10, "module": 0.01, "thickness": 0.02})
    turn = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0]      # gear axis from z to -y
    return Scene.from_dict({"name": "gears", "bodies": [
        {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
         "geometry": {"size": [2, 2, 0.1], "offset": {"position": [0, 0, -0.05]}}},
        {"name": "big", "geometry": gear, "mass": 1.0}, {"name": "small", "geometry": small, "mass": 0.3}],
        "allowed_overlaps": [{"a": "big", "b": "small", "reason": "meshing teeth"}],
        "rest": {"floor": [0, 0, 0, 1, 0, 0, 0], "big": [0, 0, 0.5, *turn], "small": [0.15, 0, 0.5, *turn]}})


def test_gears_turn_by_their_ratio_without_colliding(tmp_path):
    scene = gear_scene()
    pa = Pose.rest(scene)
    seg = segment(scene, pa, pa, 24, tmp_path)
    params = {"bodies": {"big": "circle", "small": "circle"}, "pivots": {"big": [0, 0.5], "small": [0.15, 0.5]},
              "gears": [{"a": "big", "b": "small", "ratio": -0.5}], "velocities": {"big": [0, 0, 1.0]},
              "max_difference": 100.0}
    out = motion_tool("planar").author(seg, params)

    def angle(track):                 # how far the gear has turned by the last frame
        return 2 * math.acos(min(1.0, abs(float(np.dot(track[-1, 3:], track[0, 3:])))))
    big, small = angle(out.tracks.roots["big"]), angle(out.tracks.roots["small"])
    assert 0.3 < big < 1.0 and small == pytest.approx(2 * big, rel=0.02)     # momentum shared, ratio kept
    assert np.allclose(out.tracks.roots["big"][:, :3], out.tracks.roots["big"][0, :3], atol=1e-4)


def test_a_marble_thrown_out_of_the_scene_is_refused(run):
    scene, cache, _ = run
    pa = Pose.rest(scene)
    seg = segment(scene, pa, pa, 48, cache)
    with pytest.raises(MotionError, match=r"'marble' left the scene at frame 10\d\d"):
        motion_tool("planar").author(seg, dict(MARBLE, velocities={"marble": [0, 60.0, 0]}))
