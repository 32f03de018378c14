"""The doorway film's scene: a robot must carry a wide panel through a narrow door.

Layout (metres, +Z up). The floor's top face is z = 0. The wall lies in the
plane x = 0 (0.15 m thick, x in [-0.075, 0.075]), 5 m long along Y and 2.6 m
high, with a doorway 0.9 m wide and 2.1 m tall centred at y = 0. The near side
is x < 0: a low stand (top at z = 0.55) at x = -1.5 holds the panel lying flat,
1.2 m along Y by 0.6 m along X by 0.02 m, wider than the doorway, so it must be
turned on edge to pass. The robot (studio.scene.robot) stands at x = -3.0,
y = 0 facing +X, 1.5 m in front of the panel.

Named frames: the robot's (gripper_l/r, sole_l/r, eyes), and
  handle_left / handle_right  on panel, at its near long edge (x = -0.27 in the
                              panel frame, y = +0.22 / -0.22): where the left and
                              right grippers take hold; axes as the panel's.
  doorway                     on wall, the centre of the opening (0, 0, 1.05).
  drop_spot                   on floor, where the panel is set down beyond the
                              door, (1.5, 0, 0).
Cameras: cam_main looks at the near side over the robot's right shoulder;
cam_door looks back at the doorway from the far side. Both 640×360.
"""
from __future__ import annotations

from pathlib import Path

from studio.scene.ir import Body, Camera, Geometry, Material, NamedFrame, Scene, Transform
from studio.scene.robot import add_robot
from studio.store.project import Project

from .common import create_project

WALL_THICKNESS, DOOR_WIDTH, DOOR_HEIGHT = 0.15, 0.9, 2.1
PANEL_WIDTH, PANEL_DEPTH, PANEL_THICKNESS = 1.2, 0.6, 0.02
STAND_X, STAND_HEIGHT = -1.5, 0.55
ROBOT_X = -3.0


def _cad(part: str, tolerance: float = 1e-3, **params) -> Geometry:
    return Geometry(source="cad", part=part, params=params, tolerance=tolerance)


def _at(x: float, y: float, z: float) -> Transform:
    return Transform([x, y, z], [1.0, 0.0, 0.0, 0.0])


def build_scene() -> Scene:
    """The doorway scene: floor, wall with doorway, stand, panel, robot, two cameras."""
    s = Scene(name="doorway")
    s.materials += [Material("concrete", [0.55, 0.55, 0.53, 1.0], 0.9),
                    Material("plaster", [0.88, 0.86, 0.82, 1.0], 0.8),
                    Material("plywood", [0.78, 0.62, 0.4, 1.0], 0.6),
                    Material("steel", [0.26, 0.28, 0.31, 1.0], 0.4, 0.8)]
    s.bodies += [
        Body("floor", "ground", _cad("floor_slab", 1e-3, width=10.0, depth=8.0, thickness=0.05),
             "concrete", flags=["static"], mass=0.0),
        Body("wall", "static", _cad("wall_with_doorway", 1e-3, width=5.0, height=2.6, thickness=WALL_THICKNESS,
                                    door_width=DOOR_WIDTH, door_height=DOOR_HEIGHT),
             "plaster", flags=["static"], mass=0.0),
        Body("stand", "static", _cad("stand", 1e-3, width=0.8, depth=0.45, height=STAND_HEIGHT),
             "steel", flags=["static"], mass=0.0),
        Body("panel", "rigid", _cad("panel", 0.5e-3, width=PANEL_WIDTH, depth=PANEL_DEPTH,
                                    thickness=PANEL_THICKNESS),
             "plywood", mass=6.0),
    ]
    s.rest["floor"] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    s.rest["wall"] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    s.rest["stand"] = [STAND_X, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    s.rest["panel"] = [STAND_X, 0.0, STAND_HEIGHT + PANEL_THICKNESS / 2, 1.0, 0.0, 0.0, 0.0]
    edge = -PANEL_DEPTH / 2 + 0.03
    s.frames += [NamedFrame("handle_left", "panel", _at(edge, 0.22, 0.0)),
                 NamedFrame("handle_right", "panel", _at(edge, -0.22, 0.0)),
                 NamedFrame("doorway", "wall", _at(0.0, 0.0, DOOR_HEIGHT / 2)),
                 NamedFrame("drop_spot", "floor", _at(1.5, 0.0, 0.0))]
    add_robot(s, x=ROBOT_X, y=0.0, yaw=0.0)
    s.cameras += [Camera("cam_main", [-5.4, -3.6, 2.1], [-1.2, 0.0, 0.8], 28.0, 36.0, [640, 360]),
                  Camera("cam_door", [3.4, -2.4, 1.7], [0.0, 0.0, 1.0], 28.0, 36.0, [640, 360])]
    return Scene.from_dict(s.to_dict())      # validated, as a saved scene would be


def create(path: str | Path) -> Project:
    """A new project folder holding the doorway scene (fps 24, frames from 1001), meshes cached."""
    return create_project(path, build_scene(), "build doorway scene")
