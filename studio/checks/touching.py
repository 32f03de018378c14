"""Where bodies touch at one pose, by the checks' own contact query.

The viewport draws contact points: for that it asks, at the frame shown, the
same question the Supported check asks of every frame (which measured pairs
are within tau of each other) and takes each touching pair's contact point
(its deepest or nearest surface sample, world coordinates). Shapes are
prepared once (`ContactProbe(scene, meshes)`, worth doing off the GUI
thread); a pose then costs one broadphase and the narrowphase of the pairs it
keeps, with pairs at rest answered from the contact cache.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from studio.scene.ir import Scene

from studio.checks.contacts import ContactCache, measure
from studio.checks.footage import measured_pairs
from studio.checks.shape import shape_of


@dataclass(frozen=True)
class Touch:
    """Two bodies in contact at one frame: where, and their surface distance (negative: overlap)."""

    a: str
    b: str
    point: tuple[float, float, float]
    gap: float


class ContactProbe:
    """The checks' pairs, taus and shapes of one scene, asked one pose at a time."""

    def __init__(self, scene: Scene, meshes: dict[str, trimesh.Trimesh]):
        self.names = [b.name for b in scene.bodies if b.name in meshes]
        self.shapes = [shape_of(meshes[n]) for n in self.names]
        static = np.array([scene.body(n).is_static for n in self.names], bool)
        self.pairs, self.taus, _counted = measured_pairs(scene, self.names, self.shapes, static)
        self.cache = ContactCache()

    def at(self, world: dict[str, np.ndarray]) -> list[Touch]:
        """Every measured pair within its tau at this pose (bodies missing from `world` stay out)."""
        if not len(self.pairs) or any(n not in world for n in self.names):
            return []
        w = np.stack([np.asarray(world[n], float) for n in self.names])[:, None]
        c = measure(self.shapes, w, self.pairs, self.taus, self.taus, self.cache)
        out = []
        for p, gap, point in zip(c.pair, c.gap, c.point):
            if gap <= self.taus[p]:
                a, b = self.pairs[p]
                out.append(Touch(self.names[a], self.names[b], tuple(float(v) for v in point), float(gap)))
        return out
