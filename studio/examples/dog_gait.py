"""The dog's body mechanics: leg IK from planted paws, and a walk in diagonal pairs.

A dog pose is given by its trunk (x, z and pitch; the dog walks along y = 0
facing +X), its neck, head and tail angles, and where each paw's sole is
(world x, z; the paw stays under its hip in y). Each leg is a planar two-bone
chain in the trunk's XZ plane: `leg_angles` puts the ankle over the sole by
the law of cosines, with front knees bending back and hind knees forward, and
turns the ankle so the paw is level on the floor. `walk` moves the paws in
diagonal pairs (front-left with hind-right, then front-right with hind-left):
a paw is either planted (fixed in the world) or swinging along an arc, so at
every frame at least two paws hold the dog up.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from studio.scene.pose import Pose
from studio.timeline.interpolate import ease

from . import dog_paper as d

PAIRS = (("fl", "hr"), ("fr", "hl"))
STANDING_Z = 0.40            # trunk centre above the floor when standing
STANCE_SPREAD = 0.02         # paws sit this far outside their hips along X (a steadier stance)


@dataclass
class Body:
    """What a dog pose is made of (the legs follow from the paws)."""

    x: float
    z: float = STANDING_Z
    pitch: float = 0.0                     # + lowers the nose
    neck: float = 0.0
    head: float = 0.0
    tail: float = 0.0
    paws: dict[str, tuple[float, float]] = field(default_factory=dict)   # leg -> sole (x, z) in the world

    def copy(self, **changes) -> "Body":
        out = Body(self.x, self.z, self.pitch, self.neck, self.head, self.tail, dict(self.paws))
        for k, v in changes.items():
            setattr(out, k, v)
        return out


def stance(x: float) -> dict[str, tuple[float, float]]:
    """Paws planted under the hips of a level trunk centred at x."""
    return {leg: (x + d.leg_sign(leg)[0] * (d.HIP_X + STANCE_SPREAD), 0.0) for leg in d.LEGS}


def leg_angles(body: Body, leg: str) -> tuple[float, float, float]:
    """(hip, knee, ankle) putting the leg's sole at body.paws[leg] with the paw level."""
    fx, _ = d.leg_sign(leg)
    c, s = math.cos(body.pitch), math.sin(body.pitch)
    hip_x = body.x + c * fx * d.HIP_X + s * d.HIP_Z            # Ry(pitch) applied to the hip point
    hip_z = body.z - s * fx * d.HIP_X + c * d.HIP_Z
    sx, sz = body.paws[leg]
    ax, az = sx - d.SOLE_FORWARD - hip_x, sz + d.SOLE_DROP - hip_z      # ankle relative to the hip, world
    lx, lz = c * ax - s * az, s * ax + c * az                           # in the trunk frame
    dist = math.hypot(lx, lz)
    l1, l2 = d.UPPER, d.LOWER
    if dist > l1 + l2 - 1e-6 or dist < abs(l1 - l2) + 1e-6:
        raise ValueError(f"dog leg {leg}: the paw at {body.paws[leg]} is out of reach of the hip "
                         f"({dist:.3f} m, reach {abs(l1 - l2):.2f}..{l1 + l2:.2f})")
    knee = math.acos(max(-1.0, min(1.0, (dist * dist - l1 * l1 - l2 * l2) / (2 * l1 * l2))))
    if leg[0] == "f":
        knee = -knee
    alpha = math.atan2(-lx, -lz)                          # direction hip -> ankle, measured from -Z towards -X
    hip = alpha - math.atan2(l2 * math.sin(knee), l1 + l2 * math.cos(knee))
    return hip, knee, -(body.pitch + hip + knee)


def pose_of(body: Body, others: dict[str, list[float]] | None = None) -> Pose:
    """The scene pose of the dog (plus other roots, e.g. the newspaper)."""
    joints = {"neck": body.neck, "head": body.head, "tail": body.tail}
    for leg in d.LEGS:
        joints[f"hip_{leg}"], joints[f"knee_{leg}"], joints[f"ankle_{leg}"] = leg_angles(body, leg)
    rot = [math.cos(body.pitch / 2), 0.0, math.sin(body.pitch / 2), 0.0]
    roots = {"torso": [body.x, 0.0, body.z, *rot]}
    roots.update(others or {})
    return Pose(roots, joints)


def blend(a: Body, b: Body, t: float) -> Body:
    """Trunk, neck, head and tail eased from a to b (paws are left as a's)."""
    e = float(ease(np.array(t)))
    mix = {k: getattr(a, k) + e * (getattr(b, k) - getattr(a, k)) for k in ("x", "z", "pitch", "neck", "head", "tail")}
    return a.copy(**mix)


def walk_paws(start_x: float, end_x: float, frames: np.ndarray, step: float = 0.24,
              height: float = 0.05) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per leg (F,2) sole x, z over `frames`, walking the stance from start_x to end_x, and (F,)
    trunk x. Each pair steps in turn, and the trunk moves only while a pair is in the air,
    keeping its hips between the planted paws."""
    n = len(frames)
    dist = end_x - start_x
    steps = max(1, math.ceil(abs(dist) / step))          # steps per pair
    moves = 2 * steps                                     # swings, alternating pairs
    edges = np.linspace(0, n - 1, moves + 1)
    out = {leg: np.tile([stance(start_x)[leg][0], 0.0], (n, 1)) for leg in d.LEGS}
    trunk = np.full(n, start_x)
    idx = np.arange(n)
    for k in range(moves):
        pair = PAIRS[k % 2]
        a, b = edges[k] + 0.5, edges[k + 1] - 0.5         # planted at both edge frames
        t = np.clip((idx - a) / (b - a), 0.0, 1.0)
        along = dist / steps
        for leg in pair:
            x0 = out[leg][int(math.floor(a)), 0]
            sel = idx > a
            out[leg][sel, 0] = x0 + ease(t[sel]) * along
            out[leg][sel, 1] = height * np.sin(np.pi * t[sel])
        trunk = trunk + ease(t) * (dist / moves)
    return out, trunk
