"""Scenes and segments for the motion tool tests: the robot and the dog on a floor, posed standing."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.scene.robot import add_robot
from studio.timeline.motion import Segment
from studio.timeline.storyboard import State
from studio.timeline.motion.walk_feet import place_feet

ROBOT_LEGS = [{"joints": [f"hip_pitch_{s}", f"hip_roll_{s}", f"knee_{s}", f"ankle_{s}"], "sole": f"sole_{s}",
               "phase": 0.5 * i} for i, s in enumerate("lr")]
DOG_LEGS = [{"joints": [f"hip_{leg}", f"knee_{leg}", f"ankle_{leg}"], "sole": f"paw_{leg}",
             "phase": 0.0 if leg in ("fl", "hr") else 0.5} for leg in ("fl", "fr", "hl", "hr")]


def robot_scene(wall: bool = False) -> Scene:
    """A floor and the robot at the origin facing +X; with `wall`, a wall across x = 1.5."""
    s = Scene.from_dict({"name": "walkers", "bodies": [
        {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
         "geometry": {"size": [8, 8, 0.1], "offset": {"position": [0, 0, -0.05]}}}],
        "rest": {"floor": [0, 0, 0, 1, 0, 0, 0]}})
    add_robot(s)
    if wall:
        d = s.to_dict()
        d["bodies"].append({"name": "wall", "kind": "static", "flags": ["static"], "mass": 0,
                            "geometry": {"size": [0.1, 3.0, 2.0], "offset": {"position": [0, 0, 1.0]}}})
        d["rest"]["wall"] = [1.5, 0, 0, 1, 0, 0, 0]
        s = Scene.from_dict(d)
    return Scene.from_dict(s.to_dict())


def robot_standing(scene: Scene, x: float, y: float = 0.0, yaw: float = 0.0, height: float = 0.67) -> Pose:
    """Knees soft, feet flat side by side under the pelvis."""
    pose = Pose.rest(scene)
    q = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    pose.roots["pelvis"] = [x, y, height, *q]
    c, s = math.cos(yaw), math.sin(yaw)
    feet = {f"sole_{k}": np.array([x - s * side * 0.09 + c * 0.05, y + c * side * 0.09 + s * 0.05, 0.0, yaw])
            for k, side in (("l", 1), ("r", -1))}
    legs = {f"sole_{k}": (ROBOT_LEGS[i]["joints"], f"sole_{k}") for i, k in enumerate("lr")}
    pose, err = place_feet(scene, pose, legs, feet, 80)
    assert err < 1e-4
    return pose


def dog_scene() -> Scene:
    """The dog film's scene, replayed from its calls file."""
    import tempfile

    from example_films import example_scene
    with tempfile.TemporaryDirectory() as tmp:
        return example_scene("dog_paper", Path(tmp) / "dog")


def dog_standing(scene: Scene, x: float) -> Pose:
    """The dog level at its standing height with its paws under its hips: the dog film's first
    key state, as its calls file poses it, moved along X to `x`."""
    from studio.examples.pipeline import example_calls
    stand = next(c.arguments for c in example_calls("dog_paper")
                 if c.tool == "set_state" and c.arguments["state"] == "stand")
    pose = Pose.from_dict({"roots": stand["roots"], "joints": stand["joints"]}, scene)
    pose.roots["torso"] = [float(x), *pose.roots["torso"][1:]]
    return pose


def segment(scene: Scene, pa: Pose, pb: Pose, frames: int, project_dir: Path, fa: int = 1001) -> Segment:
    return Segment("a..b", scene, State("a", fa, pa), State("b", fa + frames - 1, pb), {}, 24, project_dir)


def shelf_arm_scene() -> Scene:
    """A yaw+elbow arm on a post (its tip at z 0.3), a 0.1 m box on one shelf at the tip's height
    and a second shelf to put it on, each shelf's top at z 0.25."""
    box = {"size": [0.1, 0.1, 0.1]}
    return Scene.from_dict({
        "name": "shelves", "bodies": [
            {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
             "geometry": {"size": [4, 4, 0.1], "offset": {"position": [0, 0, -0.05]}}},
            {"name": "post", "kind": "static", "mass": 0,
             "geometry": {"size": [0.1, 0.1, 0.3], "offset": {"position": [0, 0, 0.15]}}},
            {"name": "shelf_a", "kind": "static", "mass": 0,
             "geometry": {"size": [0.2, 0.2, 0.25], "offset": {"position": [0, 0, 0.125]}}},
            {"name": "shelf_b", "kind": "static", "mass": 0,
             "geometry": {"size": [0.2, 0.2, 0.25], "offset": {"position": [0, 0, 0.125]}}},
            {"name": "upper", "kind": "link", "geometry": {"size": [0.4, 0.04, 0.04], "offset": {"position": [0.2, 0, 0]}}},
            {"name": "fore", "kind": "link", "geometry": {"size": [0.3, 0.03, 0.03], "offset": {"position": [0.15, 0, 0]}}},
            {"name": "box", "geometry": box, "mass": 1.0}],
        "joints": [
            {"name": "yaw", "type": "revolute", "parent": "post", "child": "upper",
             "origin": {"position": [0, 0, 0.3]}, "axis": [0, 0, 1], "lower": -2.5, "upper": 2.5},
            {"name": "elbow", "type": "revolute", "parent": "upper", "child": "fore",
             "origin": {"position": [0.4, 0, 0]}, "axis": [0, 0, 1], "lower": -2.5, "upper": 2.5}],
        "frames": [{"name": "tip", "body": "fore", "local": {"position": [0.3, 0, 0]}},
                   {"name": "box_near", "body": "box", "local": {"position": [-0.05, 0, 0]}}],
        "rest": {"floor": [0, 0, 0, 1, 0, 0, 0], "post": [0, 0, 0, 1, 0, 0, 0],
                 "shelf_a": [0.6, 0, 0, 1, 0, 0, 0], "shelf_b": [0, 0.6, 0, 1, 0, 0, 0],
                 "box": [0.6, 0, 0.3, 1, 0, 0, 0]}})


HIP_Y, THIGH, SHIN, ANKLE = 0.1, 0.4, 0.4, 0.06
TURNER_LEGS = [{"joints": [f"{k}_{s}" for k in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle")],
                "sole": f"sole_{s}", "phase": 0.5 * i} for i, s in enumerate("lr")]


def turner_scene() -> Scene:
    """A box biped whose hips can turn (yaw, roll, pitch; knee; ankle pitch): it can walk a curve."""
    bodies = [{"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
               "geometry": {"size": [10, 10, 0.1], "offset": {"position": [0, 0, -0.05]}}},
              {"name": "hips", "kind": "link", "group": "turner", "mass": 10.0,
               "geometry": {"size": [0.2, 0.3, 0.3], "offset": {"position": [0, 0, 0.15]}}}]
    joints, frames = [], []
    for s, sign in (("l", 1), ("r", -1)):
        links = [(f"yaw_{s}", 0.2, [0.04, 0.04, 0.04], [0, 0, 0]), (f"roll_{s}", 0.2, [0.04, 0.04, 0.04], [0, 0, 0]),
                 (f"thigh_{s}", 3.0, [0.08, 0.08, THIGH], [0, 0, -THIGH / 2]),
                 (f"shin_{s}", 2.0, [0.07, 0.07, SHIN], [0, 0, -SHIN / 2]),
                 (f"foot_{s}", 0.8, [0.22, 0.1, ANKLE], [0.04, 0, -ANKLE / 2])]
        for name, mass, size, at in links:
            bodies.append({"name": name, "kind": "link", "group": "turner", "mass": mass,
                           "geometry": {"size": size, "offset": {"position": at}}})
        chain = [("hip_yaw", "hips", f"yaw_{s}", [0, sign * HIP_Y, 0], [0, 0, 1], -0.8, 0.8),
                 ("hip_roll", f"yaw_{s}", f"roll_{s}", [0, 0, 0], [1, 0, 0], -0.5, 0.5),
                 ("hip_pitch", f"roll_{s}", f"thigh_{s}", [0, 0, 0], [0, 1, 0], -1.8, 1.0),
                 ("knee", f"thigh_{s}", f"shin_{s}", [0, 0, -THIGH], [0, 1, 0], 0.0, 2.4),
                 ("ankle", f"shin_{s}", f"foot_{s}", [0, 0, -SHIN], [0, 1, 0], -0.9, 0.9)]
        for name, parent, child, at, axis, lo, hi in chain:
            joints.append({"name": f"{name}_{s}", "type": "revolute", "parent": parent, "child": child,
                           "origin": {"position": at}, "axis": axis, "lower": lo, "upper": hi})
        frames.append({"name": f"sole_{s}", "body": f"foot_{s}", "local": {"position": [0.04, 0, -ANKLE]}})
    return Scene.from_dict({"name": "turner", "bodies": bodies, "joints": joints, "frames": frames,
                            "rest": {"floor": [0, 0, 0, 1, 0, 0, 0], "hips": [0, 0, THIGH + SHIN + ANKLE, 1, 0, 0, 0]}})


def turner_standing(scene: Scene, x: float, y: float, yaw: float, height: float = 0.8) -> Pose:
    pose = Pose.rest(scene).completed(scene)
    pose.roots["hips"] = [x, y, height, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    for s in "lr":
        pose.joints[f"knee_{s}"] = 0.6
    c, sn = math.cos(yaw), math.sin(yaw)
    feet = {f"sole_{s}": np.array([x - sn * side * HIP_Y + c * 0.04, y + c * side * HIP_Y + sn * 0.04, 0.0, yaw])
            for s, side in (("l", 1), ("r", -1))}
    legs = {leg["sole"]: (leg["joints"], leg["sole"]) for leg in TURNER_LEGS}
    pose, err = place_feet(scene, pose, legs, feet, 200)
    assert err < 2e-4, err
    return pose
