"""A small scene for the agent tests: floor, wall, a two-link arm and a panel."""
from __future__ import annotations

from studio.scene.io import save_scene
from studio.scene.ir import Scene


def arm_scene() -> Scene:
    return Scene.from_dict({
        "name": "arm",
        "bodies": [
            {"name": "floor", "kind": "ground", "geometry": {"size": [6, 6, 0.1],
                                                              "offset": {"position": [0, 0, -0.05]}}},
            {"name": "wall", "kind": "static", "geometry": {"size": [0.2, 4, 2],
                                                             "offset": {"position": [0, 0, 1]}}},
            {"name": "base", "kind": "rigid", "group": "robot", "geometry": {"size": [0.3, 0.3, 0.4]}},
            {"name": "upper", "kind": "link", "group": "robot", "geometry": {"size": [0.4, 0.08, 0.08]}},
            {"name": "fore", "kind": "link", "group": "robot", "geometry": {"size": [0.4, 0.06, 0.06]}},
            {"name": "panel", "kind": "rigid", "geometry": {"size": [0.6, 0.4, 0.02]}},
        ],
        "joints": [
            {"name": "shoulder", "type": "revolute", "parent": "base", "child": "upper", "axis": [0, 1, 0],
             "origin": {"position": [0, 0, 0.3]}, "lower": -1.5, "upper": 1.5},
            {"name": "elbow", "type": "revolute", "parent": "upper", "child": "fore", "axis": [0, 1, 0],
             "origin": {"position": [0.4, 0, 0]}, "lower": 0.0, "upper": 2.4},
        ],
        "frames": [{"name": "gripper", "body": "fore", "local": {"position": [0.4, 0, 0]}},
                   {"name": "wall_face", "body": "wall", "local": {"position": [-0.1, 0, 1.0]}}],
        "cameras": [{"name": "cam_wide", "position": [4, -4, 2], "target": [0, 0, 0.6]}],
        "rest": {"base": [-1.5, 0, 0.2, 1, 0, 0, 0], "panel": [-1.0, 1.0, 0.01, 1, 0, 0, 0],
                 "floor": [0, 0, 0, 1, 0, 0, 0], "wall": [0, 0, 0, 1, 0, 0, 0]},
    })


def make_arm_project(project) -> Scene:
    scene = arm_scene()
    save_scene(project, scene)
    return scene
