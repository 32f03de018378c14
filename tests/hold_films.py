"""Films of hands on jointed parts and of held bodies, built through the tool layer as a person
would (create_body, add_frame, set_state, solve_ik, reviews, author_segment), so the truth is known
by construction:
- door: a robot arm on a turret opens a cabinet's hinged door from 0 to 1.4 rad by its knob, a
  handle frame on a knob fixed to the door (a fixed joint in the chain from the cabinet);
- drawer: the same arm pulls a drawer 0.25 m out of a chest on its slide;
- robot_and_chest: the biped robot facing a chest whose drawer it can pull with its right hand;
- carry: the arm swings a box riding on its gripper; the second state has the box `slip` metres
  down in the grip, so the bake's pin slides it out of the hand over the segment.
"""
from __future__ import annotations

import math

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.store.project import Project
from studio.tools.box import ToolBox

REVIEWER = "Ada"
A = 1001


def plan(states: list[tuple[str, int]], objects: list[str], motion: list[dict], end: int) -> dict:
    return {"prompt": "a robot arm at work", "scene_brief": "", "motion_brief": "",
            "shots": [{"id": "wide", "camera": "side_cam", "start": A, "end": end}],
            "states": [{"id": s, "frame": f, "shot": "wide", "description": s, "objects": objects}
                       for s, f in states],
            "objects": [{"name": o, "description": o} for o in objects], "events": [], "motion": motion}


def body(box: ToolBox, name: str, size, rest=None, kind="rigid", **extra) -> None:
    args = {"name": name, "kind": kind, "size": list(size), **extra}
    if rest is not None:
        args["rest"] = list(rest)
    box.call("create_body", args)


def arm(box: ToolBox, at, yaw: float = 0.0, flange: bool = False) -> None:
    """A floor and a robot arm: a base, a turret (yaw about z), an upper arm (shoulder about y) and
    a forearm (elbow about y), reaching 0.9 m; its effector frame `gripper` 3 cm past the forearm,
    or, with `flange`, 3 cm past a 1 cm hand plate fixed to it (joint `flange`)."""
    body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    half = yaw / 2
    body(box, "base", [0.2, 0.2, 0.3], [at[0], at[1], 0.15, math.cos(half), 0, 0, math.sin(half)], group="robot",
         mass=40.0)
    body(box, "turret", [0.1, 0.1, 0.1], kind="link", group="robot", offset=[0, 0, 0.05], parent="base",
         joint={"name": "yaw", "type": "revolute", "axis": [0, 0, 1], "origin": [0, 0, 0.15],
                "lower": -3.0, "upper": 3.0})
    body(box, "upper", [0.42, 0.06, 0.06], kind="link", group="robot", offset=[0.21, 0, 0], parent="turret",
         joint={"name": "shoulder", "type": "revolute", "axis": [0, 1, 0], "origin": [0, 0, 0.13],
                "lower": -1.6, "upper": 1.6})
    body(box, "fore", [0.42, 0.05, 0.05], kind="link", group="robot", offset=[0.21, 0, 0], parent="upper",
         joint={"name": "elbow", "type": "revolute", "axis": [0, 1, 0], "origin": [0.42, 0, 0],
                "lower": 0.0, "upper": 2.6})
    if flange:
        body(box, "hand", [0.01, 0.05, 0.05], kind="link", group="robot", offset=[0.005, 0, 0], parent="fore",
             joint={"name": "flange", "type": "fixed", "origin": [0.42, 0, 0]})
        box.call("add_frame", {"name": "gripper", "body": "hand", "position": [0.04, 0, 0]})
    else:
        box.call("add_frame", {"name": "gripper", "body": "fore", "position": [0.45, 0, 0]})


CHAIN = ["yaw", "shoulder", "elbow"]
FLANGED = CHAIN + ["flange"]          # a chain that names the fixed joint between the forearm and the hand


def camera(box: ToolBox, target=(0.4, 0.0, 0.4)) -> None:
    box.call("add_camera", {"name": "side_cam", "position": [-1.5, -2.5, 1.8], "target": list(target),
                            "resolution": [160, 96]})


def hand_on(box: ToolBox, state: str, frame: int, joints: dict, target: str, chain=CHAIN) -> None:
    """A state with the arm's gripper brought onto `target` by the solve_ik tool, then checked and
    approved by the reviewer."""
    box.call("set_state", {"state": state, "frame": frame, "shot": "wide", "description": state,
                           "joints": joints})
    box.call("solve_ik", {"state": state, "effector": "gripper", "joints": chain, "target_frame": target})
    approve(box, state)


def approve(box: ToolBox, state: str) -> None:
    box.call("run_verifiers", {"state": state})
    box.call("review_state", {"state": state, "verdict": "approve", "note": "as planned"})


def cabinet(box: ToolBox) -> None:
    """A cabinet whose front faces -x at x=0.55, a door hinged on its +y edge (joint `hinge`, about
    -z, so positive values swing it out towards -x), a knob fixed to the door (joint `knob_mount`)
    and the `handle` frame on the knob's face."""
    body(box, "cabinet", [0.4, 0.6, 0.8], [0.75, 0.0, 0.4, 1, 0, 0, 0], kind="static")
    body(box, "door", [0.02, 0.58, 0.76], kind="link", offset=[0, -0.29, 0], parent="cabinet",
         joint={"name": "hinge", "type": "revolute", "axis": [0, 0, -1], "origin": [-0.21, 0.3, 0.0],
                "lower": 0.0, "upper": 1.6})
    body(box, "knob", [0.05, 0.03, 0.03], kind="link", offset=[-0.025, 0, 0], parent="door",
         joint={"name": "knob_mount", "type": "fixed", "origin": [-0.01, -0.5, 0.0]})
    box.call("add_frame", {"name": "handle", "body": "knob", "position": [-0.05, 0, 0]})


def door_film(path, frames: int = 48, tool: str = "operate", params: dict | None = None, opened: float = 1.4,
              flange: bool = False) -> Project:
    """The arm holds the knob of the closed door in 'closed' and of the door opened `opened` rad in
    'open'; the segment closed..open is authored by `tool` (operate by default)."""
    project = Project.create(path, name="cabinet door", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    arm(box, (0.15, 0.55), flange=flange)
    cabinet(box)
    camera(box)
    end = A + frames - 1
    chain = FLANGED if flange else CHAIN
    params = params if params is not None else {"part": "door", "handle": "handle",
                                                "effectors": [{"frame": "gripper", "joints": chain}]}
    box.call("set_plan", {"plan": plan([("closed", A), ("open", end)], ["base", "door"],
                                       [{"segment": "closed..open", "tool": tool, "params": params}], end)})
    seed = {"yaw": -1.0, "shoulder": -0.3, "elbow": 0.6}
    hand_on(box, "closed", A, dict(seed, hinge=0.0), "handle", chain)
    hand_on(box, "open", end, dict(seed, yaw=-2.2, hinge=opened), "handle", chain)
    return project


def chest(box: ToolBox) -> None:
    """A chest whose front faces -x at x=0.6, a drawer on a slide along -x (joint `slide`, 0..0.35 m)
    and the `pull` frame on the drawer's front."""
    body(box, "chest", [0.4, 0.5, 0.5], [0.8, 0.0, 0.25, 1, 0, 0, 0], kind="static")
    body(box, "drawer", [0.36, 0.44, 0.14], kind="link", parent="chest", offset=[0.0, 0, 0],
         joint={"name": "slide", "type": "prismatic", "axis": [-1, 0, 0], "origin": [-0.03, 0.0, 0.1],
                "lower": 0.0, "upper": 0.35})
    box.call("add_frame", {"name": "pull", "body": "drawer", "position": [-0.23, 0, 0]})


def drawer_film(path, frames: int = 36, out: float = 0.25) -> Project:
    project = Project.create(path, name="chest of drawers", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    arm(box, (-0.2, 0.0))
    chest(box)
    camera(box)
    end = A + frames - 1
    params = {"part": "drawer", "handle": "pull", "effectors": [{"frame": "gripper", "joints": CHAIN}]}
    box.call("set_plan", {"plan": plan([("shut", A), ("pulled", end)], ["base", "drawer"],
                                       [{"segment": "shut..pulled", "tool": "operate", "params": params}], end)})
    seed = {"yaw": 0.0, "shoulder": -0.6, "elbow": 1.4}
    hand_on(box, "shut", A, dict(seed, slide=0.0), "pull")
    hand_on(box, "pulled", end, dict(seed, slide=out), "pull")
    return project


def carry_film(path, frames: int = 11, slip: float = 0.0, swing: tuple[float, float] = (-0.6, 0.4)) -> Project:
    """The arm holds a 10 cm box on its gripper in 'lifted' and swings it round (yaw `swing`) to
    'moved', where the box sits `slip` metres lower in the grip; carry (riding on the gripper)
    authors lifted..moved over `frames` frames."""
    project = Project.create(path, name="carried box", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    arm(box, (0.0, 0.0))
    body(box, "box", [0.1, 0.1, 0.1], [0.6, 0.0, 0.6, 1, 0, 0, 0])
    camera(box)
    end = A + frames - 1
    box.call("set_plan", {"plan": plan([("lifted", A), ("moved", end)], ["base", "box"],
                                       [{"segment": "lifted..moved", "tool": "carry",
                                         "params": {"body": "box", "on": "gripper", "effectors": []}}], end)})
    for state, frame, yaw, drop in (("lifted", A, swing[0], 0.0), ("moved", end, swing[1], slip)):
        box.call("set_state", {"state": state, "frame": frame, "shot": "wide", "description": state,
                               "joints": {"yaw": yaw, "shoulder": -0.5, "elbow": 1.2}})
        box.call("place_relative", {"state": state, "body": "box", "frame": "gripper",
                                    "offset": [0.06, 0.0, -drop]})
        approve(box, state)
    return project


def robot_and_chest() -> Scene:
    """The robot facing a chest whose drawer slides out along -x at its right hand's height."""
    from motion_scenes import robot_scene
    d = robot_scene().to_dict()
    d["bodies"] += [{"name": "chest", "kind": "static", "flags": ["static"], "mass": 0,
                     "geometry": {"size": [0.4, 0.7, 0.8], "offset": {"position": [0, 0, 0.4]}}},
                    {"name": "drawer", "kind": "link", "mass": 2, "geometry": {"size": [0.36, 0.5, 0.12]}}]
    d["rest"]["chest"] = [0.55, 0, 0, 1, 0, 0, 0]
    d["joints"].append({"name": "slide", "type": "prismatic", "parent": "chest", "child": "drawer",
                        "origin": {"position": [-0.03, 0, 0.72]}, "axis": [-1, 0, 0], "lower": 0, "upper": 0.4})
    d["frames"].append({"name": "pull", "body": "drawer", "local": {"position": [-0.19, -0.2, 0]}})
    return Scene.from_dict(d)


ARM_R = ["shoulder_pitch_r", "shoulder_roll_r", "elbow_r"]


def holding(scene: Scene, x: float, out: float):
    """The robot standing at x with the drawer `out` metres out and its right hand on the pull."""
    from motion_scenes import robot_standing

    from studio.timeline.motion.ik import Goal, frame_pose, solve_ik
    pose = robot_standing(scene, x)
    pose.joints.update(slide=out, shoulder_pitch_r=-1.2, elbow_r=-0.5)
    pose, err = solve_ik(scene, pose, ARM_R, [Goal("gripper_r", frame_pose(scene, pose, "pull")[:3, 3])], 300)
    assert err < 1e-4
    return pose


def open_by_hand(project: Project, segment: str, hand: str, opened: float):
    """Author `segment` (an operate on the `hinge`): the tool's outcome, the baked tracks and the
    hand's distance from the `handle` at every frame, the hinge checked to rise from 0 to `opened`."""
    import numpy as np
    import pytest

    from studio.timeline.film import load_film_tracks
    out = ToolBox(project, actor="Ada").call("author_segment", {"segment": segment})
    assert out.result["tool"] == "operate"
    tracks = load_film_tracks(project)
    hinge = tracks.joints["hinge"]
    assert hinge[0] == 0.0 and hinge[-1] == pytest.approx(opened) and np.all(np.diff(hinge) >= 0)
    return out, tracks, distances(project, hand, "handle")


def distances(project: Project, a: str, b: str):
    """(F,) distance between two named frames at every baked frame, by forward kinematics of the
    stored tracks (independent of what any tool or check says)."""
    import numpy as np

    from studio.scene.kinematics import frame_world, tracks_world
    from studio.timeline.film import load_film_tracks
    scene, tracks = load_scene(project), load_film_tracks(project)
    world = tracks_world(scene, tracks)
    return np.linalg.norm(frame_world(scene, world, a)[:, :3, 3] - frame_world(scene, world, b)[:, :3, 3], axis=1)
