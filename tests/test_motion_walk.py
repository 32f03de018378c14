"""The walk tool on the robot, the dog and a biped that can turn: planted feet stay put (at most
5 mm), the centre of mass stays over the feet (the SupportMargin verifier, within the tool's 5 cm
tolerance), the walk ends in the second state, and a path through a wall is refused naming the
wall and the waypoint."""
from __future__ import annotations

import math

import numpy as np
import pytest
from motion_scenes import (DOG_LEGS, ROBOT_LEGS, TURNER_LEGS, dog_scene, dog_standing, robot_scene, robot_standing,
                           segment, turner_scene, turner_standing)

from studio.checks import support_margin
from studio.checks.footage import Footage
from studio.scene.kinematics import tracks_world
from studio.scene.meshes import scene_meshes
from studio.timeline.bake import complete, pin
from studio.timeline.motion import MotionError, motion_tool
from studio.timeline.motion.walk import COM_TOLERANCE


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("meshes")


def sole_tracks(scene, tracks, soles):
    world = tracks_world(scene, tracks)
    out = {}
    for name in soles:
        f = scene.frame(name)
        from studio.scene.transforms import from_7
        out[name] = (world[f.body] @ from_7(np.asarray(f.local.as_list())))[:, :3, 3]
    return out


ON_FLOOR = 5e-3    # a sole this low is down: a foot without ankle roll, rolled onto its lower edge, lifts its middle


def planted_slide(soles: np.ndarray, floor: float = ON_FLOOR) -> float:
    """The most a sole moves along the floor during any run of frames it stays on the floor."""
    down = soles[:, 2] <= floor
    worst, start = 0.0, None
    for i in range(len(down) + 1):
        if i < len(down) and down[i]:
            start = i if start is None else start
            worst = max(worst, float(np.linalg.norm(soles[i, :2] - soles[start, :2])))
        else:
            start = None
    return worst


def baked(seg, out):
    scene = seg.scene
    pa, pb = seg.a.pose.completed(scene), seg.b.pose.completed(scene)
    full = complete(scene, out.tracks, pa, pb, seg.a.frame, seg.b.frame)
    pinned, residual = pin(full, pa, pb)
    return pinned, residual


def check_walk(seg, params, cache, tolerance=COM_TOLERANCE):
    out = motion_tool("walk").author(seg, params)
    tracks, residual = baked(seg, out)
    assert residual < 2e-3                         # the walk ends in the second state's stance
    soles = sole_tracks(seg.scene, tracks, [leg["sole"] for leg in params["legs"]])
    for name, s in soles.items():
        assert (s[:, 2] <= ON_FLOOR).sum() >= len(s) // 3, name        # the foot is on the floor much of the time
        assert (s[:, 2] > 0.02).any(), name                         # and it does step
        assert planted_slide(s) <= 0.005, name
    film = Footage.build(seg.scene, scene_meshes(seg.scene, cache), tracks)
    report = support_margin.verify(film)
    worst = min([e["margin_m"] for e in report.evidence], default=0.0)
    assert worst >= -tolerance, worst
    return out, tracks, soles


def test_the_robot_walks_forwards_with_flat_planted_feet(cache):
    scene = robot_scene()
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 1.2), 72, cache)
    out, tracks, soles = check_walk(seg, {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.4}, cache)
    assert soles["sole_l"][-1][0] == pytest.approx(1.25, abs=1e-3)
    assert "planted feet slide at most" in out.notes[0]


def test_with_overlap_the_robot_walks_on_without_stopping_and_its_feet_swing_without_jolts(cache):
    """The root glides through the steps' weight shifts (it stops only where the walk starts and
    ends), and a swinging foot's acceleration stays under the Continuity verifier's floor."""
    scene = robot_scene()
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 1.2), 96, cache)
    params = {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.4, "overlap": 1.0, "shift": 0.2,
              "balance": "between", "com_tolerance": 0.15}
    out, tracks, soles = check_walk(seg, params, cache, tolerance=0.15)
    speed = np.diff(tracks.roots["pelvis"][:, 0])
    fast = np.flatnonzero(speed > 0.5 * speed.max())
    assert speed[fast[0]:fast[-1]].min() > 0.4 * speed.max()        # once under way, never slowing to a stop
    assert speed[0] < 0.3 * speed.max() and speed[-1] < 1e-4        # at rest where it starts and ends
    for name, s in soles.items():
        assert np.linalg.norm(np.diff(s, 2, axis=0), axis=1).max() < 0.05, name   # m/frame², Continuity's floor


def test_a_lead_keeps_the_feet_and_the_root_in_place_before_the_first_step(cache):
    scene = robot_scene()
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 0.8), 97, cache)
    out, tracks, soles = check_walk(seg, {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.4,
                                          "lead": 0.25}, cache)
    still = 24                                                          # a quarter of 96 frames
    assert np.ptp(tracks.roots["pelvis"][:still + 1, :2], axis=0).max() < 1e-6
    for name, s in soles.items():
        assert np.ptp(s[:still + 1], axis=0).max() < 1e-4, name
        assert np.ptp(s[still + 1:], axis=0).max() > 0.3, name        # and then it walks


def test_the_robot_sidesteps_leading_with_the_foot_on_that_side(cache):
    """Without ankle roll the robot cannot lean over one foot and keep it flat, so a sidestep is
    out of balance by more than the default tolerance: refused unless the call allows it."""
    scene = robot_scene()
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 0.0, y=0.5), 72, cache)
    params = {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.14}
    with pytest.raises(MotionError, match=r"at frame \d+ the centre of mass is \d+\.\d cm outside the feet"):
        motion_tool("walk").author(seg, params)
    out, tracks, soles = check_walk(seg, dict(params, com_tolerance=0.15), cache, tolerance=0.15)
    first_up = {k: int(np.argmax(v[:, 2] > ON_FLOOR)) for k, v in soles.items()}
    assert first_up["sole_l"] < first_up["sole_r"]
    assert np.all(np.diff(soles["sole_l"][:, 1]) >= -1e-3)          # never steps back across
    world, meshes = tracks_world(seg.scene, tracks), scene_meshes(seg.scene, cache)
    for foot in ("foot_l", "foot_r"):                                # a rolled foot rests on its edge, not in the floor
        v = np.asarray(meshes[foot].convex_hull.vertices)
        low = np.einsum("fj,cj->fc", world[foot][:, 2, :3], v).min(axis=1) + world[foot][:, 2, 3]
        assert low.min() >= -1e-3, foot


def test_the_dog_walks_in_diagonal_pairs(cache):
    scene = dog_scene()
    seg = segment(scene, dog_standing(scene, -1.0), dog_standing(scene, -0.3), 72, cache)
    out, tracks, soles = check_walk(seg, {"root": "torso", "legs": DOG_LEGS, "step_length": 0.25}, cache)
    up = {k: v[:, 2] > 1e-3 for k, v in soles.items()}
    assert np.array_equal(up["paw_fl"], up["paw_hr"]) and np.array_equal(up["paw_fr"], up["paw_hl"])
    assert not (up["paw_fl"] & up["paw_fr"]).any()                 # a diagonal pair always stands
    assert soles["paw_fl"][-1][0] > soles["paw_fl"][0][0] + 0.69


def test_a_path_through_a_wall_is_refused_naming_the_wall_and_the_waypoint(cache):
    scene = robot_scene(wall=True)
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 0.0, y=0.6), 96, cache)
    params = {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.4, "waypoints": [[2.5, 0.3]]}
    with pytest.raises(MotionError, match=r"from the first state to waypoint 0 runs through 'wall'"):
        motion_tool("walk").author(seg, params)


def test_a_step_the_leg_cannot_make_is_refused_not_slid(cache):
    scene = robot_scene()
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 1.0), 60, cache)
    with pytest.raises(MotionError, match=r"planted foot sole_[lr] at frame \d+ slides|centre of mass"):
        motion_tool("walk").author(seg, {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 1.0})


def test_legs_naming_no_joint_are_refused():
    scene = robot_scene()
    legs = [dict(ROBOT_LEGS[0], joints=["knee_x"]), ROBOT_LEGS[1]]
    seg = segment(scene, robot_standing(scene, 0.0), robot_standing(scene, 0.5), 48, None)
    with pytest.raises(MotionError, match="legs\\[0\\] names joint 'knee_x'"):
        motion_tool("walk").author(seg, {"root": "pelvis", "legs": legs})


def test_a_biped_with_hip_yaw_turns_along_its_path(cache):
    scene = turner_scene()
    seg = segment(scene, turner_standing(scene, 0.0, 0.0, 0.0), turner_standing(scene, 1.0, 1.0, math.pi / 2),
                  120, cache)
    params = {"root": "hips", "legs": TURNER_LEGS, "step_length": 0.3, "waypoints": [[1.0, 0.0]], "facing": "path",
              "sway": 0.5}
    out, tracks, soles = check_walk(seg, params, cache)
    yaw = [2 * math.atan2(q[3], q[0]) for q in tracks.roots["hips"][:, 3:]]
    assert yaw[0] == pytest.approx(0.0, abs=1e-9) and yaw[-1] == pytest.approx(math.pi / 2, abs=1e-9)
    corner = int(np.argmin(np.linalg.norm(tracks.roots["hips"][:, :2] - [1.0, 0.0], axis=1)))
    assert 0.3 < yaw[corner] < 1.3                                  # turning as it rounds the corner
    assert np.all(np.diff(yaw) > -0.02)                             # one way round
