"""The crates film's scene: a ball rolls along a shelf and knocks three crates off its end.

Layout (metres, +Z up; the floor's top face is z = 0). The shelf is a `stand`
part (a top on four legs, 1.4 m along Y, 0.35 m deep, its top at z = 0.7)
centred on the origin. Three 0.16 m crates (`rounded_box`) stand on the top
near its +Y end; a 7 cm ball (`sphere`) rests on its -Y end. Nothing in the
scene moves by itself: the `simulate` motion tool rolls the ball (a start
velocity in its parameters) and the crates tumble to the floor. Camera
cam_side looks along the shelf from the -X side.
"""
from __future__ import annotations

from pathlib import Path

from studio.scene.ir import Body, Camera, Geometry, Material, NamedFrame, Scene, Transform
from studio.store.project import Project

from .common import create_project

SHELF = (1.4, 0.35, 0.7)          # along Y, along X, top height
CRATE = 0.16
BALL_RADIUS = 0.07
CRATES_Y = (0.26, 0.43, 0.6)
_I = [1.0, 0.0, 0.0, 0.0]


def _cad(part: str, tolerance: float = 1e-3, **params) -> Geometry:
    return Geometry(source="cad", part=part, params=params, tolerance=tolerance)


def build_scene() -> Scene:
    """Floor, shelf, three crates and a ball; one camera."""
    s = Scene(name="crates")
    s.materials += [Material("concrete", [0.55, 0.55, 0.53, 1.0], 0.9),
                    Material("steel", [0.3, 0.32, 0.35, 1.0], 0.4, 0.8),
                    Material("pine", [0.8, 0.64, 0.42, 1.0], 0.7),
                    Material("rubber", [0.75, 0.18, 0.15, 1.0], 0.6)]
    s.bodies += [
        Body("floor", "ground", _cad("floor_slab", width=4.0, depth=4.0, thickness=0.05), "concrete",
             flags=["static"], mass=0.0),
        Body("shelf", "static", _cad("stand", width=SHELF[0], depth=SHELF[1], height=SHELF[2], top=0.03, leg=0.04),
             "steel", flags=["static"], mass=0.0),
        Body("ball", "rigid", _cad("sphere", radius=BALL_RADIUS), "rubber", mass=3.0)]
    for i in range(len(CRATES_Y)):
        s.bodies.append(Body(f"crate_{i + 1}", "rigid",
                             _cad("rounded_box", size_x=CRATE, size_y=CRATE, size_z=CRATE, radius=0.01), "pine",
                             mass=0.4))
    s.rest["floor"] = [0.0, 0.0, 0.0, *_I]
    s.rest["shelf"] = [0.0, 0.0, 0.0, *_I]
    s.rest["ball"] = [0.0, -0.6, SHELF[2] + BALL_RADIUS, *_I]
    for i, y in enumerate(CRATES_Y):
        s.rest[f"crate_{i + 1}"] = [0.0, y, SHELF[2] + CRATE / 2, *_I]
    s.frames.append(NamedFrame("shelf_end", "shelf", Transform([0.0, SHELF[0] / 2, SHELF[2]], _I)))
    s.cameras.append(Camera("cam_side", [-3.2, 0.2, 1.4], [0.0, 0.5, 0.45], 30.0, 36.0, [640, 360]))
    return Scene.from_dict(s.to_dict())      # validated, as a saved scene would be


def create(path: str | Path) -> Project:
    """A new project folder holding the crates scene (fps 24, frames from 1001), meshes cached."""
    return create_project(path, build_scene(), "build shelf and crates scene")
