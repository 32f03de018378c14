"""The marble run film's scene: a marble rolls down three zig-zag ramps into a cup.

Layout (metres, +Z up). The floor's top face is z = 0. Everything moves in the
plane y = 0 (the marble's centre stays there); a backboard behind the run
(y > 0) holds the ramps. Each ramp is a `track` part (a base plate with two
side rails, 0.5 m long, 0.05 m wide) tilted by RAMP_TILT about Y: ramp_1 runs
down towards +X from x = -0.25, ramp_2 back towards -X below it, ramp_3 towards
+X again, pouring into a `cup` standing on the floor at x = CUP_X. At the high
end of ramp_2 and ramp_3 a stop (a small block between the rails) catches the
marble as it drops from the ramp above, so it turns and rolls back down.

The marble (radius 12 mm) rolls on the base plates between the rails, 8 mm
clear of each rail, so the planar motion tool, which cuts the meshes with the
marble's plane, sees the base plates, the stops, the floor and the cup's base
and walls, and no rail. Named frames: `release` (ramp_1, where the marble starts) and
`cup_centre` (cup, on its base). Camera cam_side looks at the run from -Y,
a little from above so the cup's inside shows.
"""
from __future__ import annotations

import math
from pathlib import Path

from studio.scene.ir import Body, Camera, Geometry, Material, NamedFrame, Scene, Transform
from studio.store.project import Project

from .common import create_project

MARBLE_RADIUS = 0.012
RAMP_LENGTH, RAMP_WIDTH, RAIL_HEIGHT, PLATE = 0.5, 0.05, 0.012, 0.006
RAMP_TILT = math.radians(5.0)
STOP = (0.008, 0.04, 0.06)                      # x (along the ramp), y, z of a stop block
CUP_X, CUP_RADIUS, CUP_HEIGHT, CUP_WALL, CUP_BASE = 0.33, 0.05, 0.05, 0.004, 0.004
# ramp name -> (centre x, centre z of the base plate's underside, tilt sign: +1 runs down towards +X)
RAMPS = {"ramp_1": (0.0, 0.36, 1), "ramp_2": (0.08, 0.24, -1), "ramp_3": (0.0, 0.12, 1)}
STOPS = {"stop_2": "ramp_2", "stop_3": "ramp_3"}


def _cad(part: str, tolerance: float = 0.3e-3, offset=(0.0, 0.0, 0.0), **params) -> Geometry:
    return Geometry(source="cad", part=part, params=params, tolerance=tolerance,
                    offset=Transform(list(offset), [1.0, 0.0, 0.0, 0.0]))


def _tilt(sign: int) -> list[float]:
    """Rotation about Y lowering the ramp's +X end (sign +1) or its -X end (sign -1)."""
    a = sign * RAMP_TILT
    return [math.cos(a / 2), 0.0, math.sin(a / 2), 0.0]


def ramp_pose(name: str) -> list[float]:
    x, z, sign = RAMPS[name]
    return [x, 0.0, z, *_tilt(sign)]


def stop_pose(name: str) -> list[float]:
    """A stop sits on its ramp's plate at the high end (the end the ramp above pours onto)."""
    ramp = STOPS[name]
    x, z, sign = RAMPS[ramp]
    along = -sign * (RAMP_LENGTH / 2 - STOP[0] / 2)      # high end: -X for sign +1, +X for sign -1
    a = sign * RAMP_TILT
    up = PLATE + STOP[2] / 2
    return [x + along * math.cos(a) + up * math.sin(a), 0.0, z - along * math.sin(a) + up * math.cos(a),
            *_tilt(sign)]


def release_point() -> tuple[float, float]:
    """(x, z) of the marble's centre resting on ramp_1, 6 cm from its high end."""
    x, z, sign = RAMPS["ramp_1"]
    along, up = -(RAMP_LENGTH / 2 - 0.06), PLATE + MARBLE_RADIUS
    a = sign * RAMP_TILT
    return x + along * math.cos(a) + up * math.sin(a), z - along * math.sin(a) + up * math.cos(a)


def build_scene() -> Scene:
    """The marble run: floor, backboard, three ramps with two stops, a cup and a marble, one camera."""
    s = Scene(name="marble_run")
    s.materials += [Material("oak", [0.74, 0.58, 0.38, 1.0], 0.6),
                    Material("birch", [0.9, 0.82, 0.66, 1.0], 0.5),
                    Material("slate", [0.3, 0.32, 0.35, 1.0], 0.8),
                    Material("glass_blue", [0.15, 0.35, 0.85, 1.0], 0.1, 0.0),
                    Material("copper", [0.72, 0.42, 0.25, 1.0], 0.3, 0.9)]
    static = ["static"]
    s.bodies += [
        Body("floor", "ground", _cad("floor_slab", 1e-3, width=1.6, depth=0.8, thickness=0.03), "slate",
             flags=static, mass=0.0),
        Body("backboard", "static", _cad("panel", 1e-3, width=0.012, depth=0.9, thickness=0.46, edge_radius=0.0),
             "oak", flags=static, mass=0.0)]
    for name in RAMPS:
        s.bodies.append(Body(name, "static", _cad("track", length=RAMP_LENGTH, width=RAMP_WIDTH,
                                                  rail_height=RAIL_HEIGHT, thickness=PLATE),
                             "birch", flags=static, mass=0.0))
    for name in STOPS:
        s.bodies.append(Body(name, "static", _cad("panel", depth=STOP[0], width=STOP[1], thickness=STOP[2],
                                                  edge_radius=0.0), "oak", flags=static, mass=0.0))
    s.bodies += [
        Body("cup", "static", _cad("cup", radius=CUP_RADIUS, height=CUP_HEIGHT, wall=CUP_WALL, base=CUP_BASE),
             "copper", flags=static, mass=0.0),
        Body("marble", "rigid", _cad("sphere", 0.2e-3, radius=MARBLE_RADIUS), "glass_blue", mass=0.02)]
    ident = [1.0, 0.0, 0.0, 0.0]
    s.rest["floor"] = [0.0, 0.0, 0.0, *ident]
    s.rest["backboard"] = [0.02, 0.057, 0.23, *ident]
    for name in RAMPS:
        s.rest[name] = ramp_pose(name)
    for name in STOPS:
        s.rest[name] = stop_pose(name)
    s.rest["cup"] = [CUP_X, 0.0, 0.0, *ident]
    rx, rz = release_point()
    s.rest["marble"] = [rx, 0.0, rz, *ident]
    s.frames += [NamedFrame("release", "ramp_1", Transform([-(RAMP_LENGTH / 2 - 0.06), 0.0, PLATE], ident)),
                 NamedFrame("cup_centre", "cup", Transform([0.0, 0.0, CUP_BASE], ident))]
    s.cameras += [Camera("cam_side", [0.05, -1.1, 0.95], [0.05, 0.0, 0.15], 35.0, 36.0, [640, 360])]
    return Scene.from_dict(s.to_dict())      # validated, as a saved scene would be


def create(path: str | Path) -> Project:
    """A new project folder holding the marble run scene (fps 24, frames from 1001), meshes cached."""
    return create_project(path, build_scene(), "build marble run scene")
