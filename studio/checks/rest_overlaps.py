"""Which bodies of a character overlap one another at rest, deeper than tau.

A robot's links are often modelled overlapping where they meet (a hip motor
housing inside the pelvis shell), which is construction, not a defect; the
import declares each such pair an allowed overlap, naming the depth, so the
penetration check judges only what the motion does. Measured with the
verifiers' own contact code, on one frame.
"""
from __future__ import annotations

import numpy as np
import trimesh

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks

from studio.checks.footage import Footage


def overlapping_pairs(scene: Scene, meshes: dict[str, trimesh.Trimesh], pose: Pose,
                      bodies: set[str]) -> list[tuple[str, str, float]]:
    """(a, b, depth m) of every pair among `bodies` overlapping deeper than tau in `pose`."""
    keep = [b for b in scene.bodies if b.name in bodies]
    sub = Scene(name=scene.name, bodies=keep, joints=[j for j in scene.joints if j.child in bodies
                                                       and j.parent in bodies])
    roots = {r: pose.roots[r] for r in sub.roots if r in pose.roots}
    tracks = Tracks.from_poses(0, [Pose(roots, {j.name: pose.joints[j.name] for j in sub.joints
                                                if j.name in pose.joints})])
    film = Footage.build(sub, {b.name: meshes[b.name] for b in keep}, tracks)
    if len(film.pairs) == 0:
        return []
    c = film.contacts
    deep = -c.gap > film.tau_fp[c.frame, c.pair]
    out = []
    for k in np.nonzero(deep)[0]:
        a, b = film.pairs[c.pair[k]]
        out.append((film.names[a], film.names[b], float(-c.gap[k])))
    return sorted(out)
