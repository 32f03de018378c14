"""The dog-and-newspaper film's scene: a dog carries a folded newspaper to a mat.

Layout (metres, +Z up). The floor's top face is z = 0. The dog faces +X and
walks along y = 0: it starts at x = DOG_X with the newspaper lying flat on
the floor ahead of it (centre x = PAPER_X), and carries it to a mat (centre
x = MAT_X, 12 mm thick) further along +X.

The dog (group "dog") is a tree of CAD links rooted at `torso` (a rounded
trunk, origin at its centre). Dog frame: +X forward, +Y to the dog's left.
Every joint is a revolute pitch joint about +Y except `tail` (a wag about +X).
A positive pitch swings what hangs below the joint backwards (-X) and tips
what rises above it forwards, so a positive neck or head angle lowers the head.
  neck        torso -> neck     at the chest, leaning forward NECK_LEAN at 0
  head        neck -> head      level with the torso when neck and head are 0
  hip_{leg}   torso -> upper_{leg}   leg in fl, fr, hl, hr (front/hind, left/right)
  knee_{leg}  upper_{leg} -> lower_{leg}   front knees bend back (<= 0), hind forward (>= 0)
  ankle_{leg} lower_{leg} -> paw_{leg}     keeps the paw level
  tail        torso -> tail
Named frames: `mouth` (head; the underside of the muzzle's tip, where the
newspaper is held), `paw_{leg}` (paw; the centre of the sole), `mat_centre`
(mat; on its top face). A leg's bones are UPPER and LOWER long (hip to knee,
knee to ankle) and its sole lies SOLE_DROP below the ankle.
"""
from __future__ import annotations

import math
from pathlib import Path

from studio.scene.ir import Body, Camera, Geometry, Joint, Material, NamedFrame, Scene, Transform
from studio.store.project import Project

from .common import create_project

LEGS = ("fl", "fr", "hl", "hr")
HIP_X, HIP_Y, HIP_Z = 0.2, 0.07, -0.06          # hips in the torso frame (x sign: front +, hind -)
UPPER, LOWER, SOLE_DROP, SOLE_FORWARD = 0.18, 0.17, 0.03, 0.015
NECK_AT, NECK_LEAN, NECK_LENGTH = (0.24, 0.0, 0.06), 0.5, 0.2
PAPER = (0.16, 0.28, 0.025)                       # folded newspaper: x, y, z extents
MAT = (0.5, 0.7, 0.012)                           # mat: x, y, z extents
DOG_X, PAPER_X, MAT_X = -1.0, -0.46, 0.8
LINK_TOLERANCE = 2e-3
_I = [1.0, 0.0, 0.0, 0.0]


def _ry(angle: float) -> list[float]:
    return [math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0]


def _cad(part: str, offset=(0.0, 0.0, 0.0), rotation=None, tolerance: float = LINK_TOLERANCE, **params) -> Geometry:
    return Geometry(source="cad", part=part, params=params, tolerance=tolerance,
                    offset=Transform(list(offset), list(rotation or _I)))


def leg_sign(leg: str) -> tuple[float, float]:
    """(+1 front / -1 hind, +1 left / -1 right)."""
    return (1.0 if leg[0] == "f" else -1.0), (1.0 if leg[1] == "l" else -1.0)


def knee_limits(leg: str) -> tuple[float, float]:
    return (-2.2, 0.0) if leg[0] == "f" else (0.0, 2.2)


def add_dog(s: Scene) -> None:
    """The dog's links, joints and frames (no rest pose: the story poses it)."""
    def link(name, geometry, material, mass):
        s.bodies.append(Body(name, "link", geometry, material, "dog", [], mass))

    def joint(name, parent, child, at, axis, lower, upper, rotation=None):
        s.joints.append(Joint(name, "revolute", parent, child, Transform(list(at), list(rotation or _I)),
                              list(axis), lower, upper))

    Y = (0.0, 1.0, 0.0)
    link("torso", _cad("dog_body", length=0.6, width=0.22, height=0.24), "fur", 12.0)
    link("neck", _cad("capsule", (0, 0, NECK_LENGTH / 2 + 0.01), length=NECK_LENGTH + 0.06, radius=0.045), "fur", 1.2)
    link("head", _cad("dog_head", (0.03, 0.0, 0.04), size=0.15, snout=0.09), "fur", 1.5)
    link("tail", _cad("capsule", (0, 0, 0.1), length=0.2, radius=0.018), "fur", 0.2)
    joint("neck", "torso", "neck", NECK_AT, Y, -0.4, 2.2, _ry(NECK_LEAN))
    joint("head", "neck", "head", (0, 0, NECK_LENGTH), Y, -0.8, 1.8, _ry(-NECK_LEAN))
    joint("tail", "torso", "tail", (-0.27, 0.0, 0.07), (1.0, 0.0, 0.0), -0.5, 0.5, _ry(-0.7))
    for leg in LEGS:
        fx, sy = leg_sign(leg)
        link(f"upper_{leg}", _cad("leg_segment", length=UPPER + 0.01, radius=0.032, taper=0.8), "fur", 0.8)
        link(f"lower_{leg}", _cad("leg_segment", length=LOWER, radius=0.024, taper=0.8), "fur", 0.4)
        link(f"paw_{leg}", _cad("panel", (SOLE_FORWARD, 0.0, -SOLE_DROP / 2), depth=0.08, width=0.05,
                                thickness=SOLE_DROP, edge_radius=0.0), "paw_pad", 0.15)
        joint(f"hip_{leg}", "torso", f"upper_{leg}", (fx * HIP_X, sy * HIP_Y, HIP_Z), Y, -1.3, 1.3)
        joint(f"knee_{leg}", f"upper_{leg}", f"lower_{leg}", (0, 0, -UPPER), Y, *knee_limits(leg))
        joint(f"ankle_{leg}", f"lower_{leg}", f"paw_{leg}", (0, 0, -LOWER), Y, -1.6, 1.6)
        s.frames.append(NamedFrame(f"paw_{leg}", f"paw_{leg}", Transform([SOLE_FORWARD, 0.0, -SOLE_DROP], _I)))
    s.frames.append(NamedFrame("mouth", "head", Transform([0.19, 0.0, -0.01], _I)))


def build_scene() -> Scene:
    """Floor, mat, newspaper and the dog; two cameras."""
    s = Scene(name="dog_paper")
    s.materials += [Material("boards", [0.62, 0.47, 0.33, 1.0], 0.7),
                    Material("coir", [0.55, 0.36, 0.18, 1.0], 0.95),
                    Material("newsprint", [0.86, 0.85, 0.8, 1.0], 0.9),
                    Material("fur", [0.78, 0.55, 0.3, 1.0], 0.85),
                    Material("paw_pad", [0.2, 0.16, 0.14, 1.0], 0.9)]
    s.bodies += [
        Body("floor", "ground", _cad("floor_slab", tolerance=1e-3, width=4.0, depth=3.0, thickness=0.05),
             "boards", flags=["static"], mass=0.0),
        Body("mat", "static", _cad("mat", tolerance=1e-3, width=MAT[1], depth=MAT[0], thickness=MAT[2],
                                   corner_radius=0.04), "coir", flags=["static"], mass=0.0),
        Body("newspaper", "rigid", _cad("panel", tolerance=1e-3, width=PAPER[1], depth=PAPER[0],
                                        thickness=PAPER[2], edge_radius=0.0), "newsprint", mass=0.3)]
    add_dog(s)
    s.rest["floor"] = [0.0, 0.0, 0.0, *_I]
    s.rest["mat"] = [MAT_X, 0.0, 0.0, *_I]
    s.rest["newspaper"] = [PAPER_X, 0.0, PAPER[2] / 2, *_I]
    s.rest["torso"] = [DOG_X, 0.0, -HIP_Z + UPPER + LOWER + SOLE_DROP, *_I]   # legs straight
    s.frames.append(NamedFrame("mat_centre", "mat", Transform([0.0, 0.0, MAT[2]], _I)))
    s.cameras += [Camera("cam_side", [-0.1, -2.7, 0.85], [-0.1, 0.0, 0.3], 30.0, 36.0, [640, 360]),
                  Camera("cam_front", [2.2, -1.1, 0.9], [0.2, 0.0, 0.25], 30.0, 36.0, [640, 360])]
    return Scene.from_dict(s.to_dict())      # validated, as a saved scene would be


def create(path: str | Path) -> Project:
    """A new project folder holding the dog scene (fps 24, frames from 1001), meshes cached."""
    return create_project(path, build_scene(), "build dog and newspaper scene")
