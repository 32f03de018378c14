"""The 38-body glTF film of the verify benchmark, and an independent exact scorer for it (python-fcl).

One ground slab and 37 bodies of a few hundred triangles (spheres, capsules, blocks, 3 mm cards), 20 of
them moving for 1,440 frames (sliding and spinning over the others, passing through some, hopping), the
rest at rest. The scorer shares no code with studio/checks: it places each body from the keys written
here and asks fcl's GJK/EPA for the penetration depth of every pair of convex bodies at every frame.
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import trimesh

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from glb_films import GlbWriter  # noqa: E402

FRAMES = 1440


def shapes(rng):
    """Meshes of 80 to 500 triangles."""
    def sphere():
        return trimesh.creation.icosphere(subdivisions=2, radius=rng.uniform(0.05, 0.1))

    def capsule():
        return trimesh.creation.capsule(height=rng.uniform(0.1, 0.2), radius=rng.uniform(0.03, 0.06), count=[12, 12])

    def block():
        return trimesh.creation.box(extents=rng.uniform(0.08, 0.25, 3)).subdivide().subdivide()

    def card():
        return trimesh.creation.box(extents=[rng.uniform(0.1, 0.2), rng.uniform(0.07, 0.15), 0.003]).subdivide()
    return [sphere, capsule, block, card]


def film(seed=38):
    """(GlbWriter, {name: (mesh, (F,3) positions, (F,4) xyzw rotations, moving)})."""
    rng = np.random.default_rng(seed)
    kinds = shapes(rng)
    t = np.arange(FRAMES) / 24.0
    g = GlbWriter({"up": "Z"})
    bodies = {}

    def add(name, mesh, pos, quat=None, moving=False):
        pos = np.broadcast_to(np.asarray(pos, float), (FRAMES, 3)).astype(np.float32).astype(float)
        quat = np.tile([0, 0, 0, 1.0], (FRAMES, 1)) if quat is None else quat.astype(np.float32).astype(float)
        node = g.node(name, g.mesh([mesh]), translation=pos[0], rotation=quat[0])
        if moving:
            g.animate(node, "translation", t, pos)
            g.animate(node, "rotation", t, quat)
        bodies[name] = (mesh, pos, quat, moving)

    add("ground", trimesh.creation.box(extents=[12, 12, 0.1]), [0, 0, -0.05])
    for k in range(17):                                        # at rest on the ground, in a grid
        m = kinds[k % 4]()
        add(f"rest{k}", m, [-4 + (k % 6) * 1.6, -3 + (k // 6) * 2.5, -m.bounds[0, 2]])
    for k in range(20):                                        # moving: each passes over or through the rest
        m = kinds[k % 4]()
        lane = -1.75 + (k % 3) * 2.5                         # between the rows at rest
        x = -4 + 8 * (0.5 + 0.5 * np.sin(t * (0.05 + 0.01 * k) + k))
        hop = 0.15 * np.abs(np.sin(t * (0.7 + 0.1 * k))) if k % 2 else np.zeros(FRAMES)
        sink = 0.004 * (k % 5 == 0)                              # some sink a little into what they cross
        z = -m.bounds[0, 2] + hop - sink
        yaw = t * (0.3 + 0.05 * k)
        quat = np.c_[np.zeros((FRAMES, 2)), np.sin(yaw / 2), np.cos(yaw / 2)]
        add(f"mover{k}", m, np.c_[x, np.full(FRAMES, lane + 0.3 * (k % 2)), z], quat, moving=True)
    return g, bodies


def rotation(q):
    x, y, z, w = (q / np.linalg.norm(q)).tolist()
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def fcl_scorer(bodies) -> set[tuple[int, str, str]]:
    """(frame index, a, b) of every pair of bodies, not both at rest, deeper than the scorer's tau."""
    import fcl
    names = list(bodies)
    geoms = {}
    thick = {}
    for n in names:
        m = bodies[n][0]
        geoms[n] = fcl.Convex(m.vertices, len(m.faces), np.c_[np.full(len(m.faces), 3), m.faces].reshape(-1))
        thick[n] = float(np.min(m.bounding_box_oriented.primitive.extents))
    radius = {n: float(np.linalg.norm(bodies[n][0].vertices, axis=1).max()) for n in names}
    out = set()
    request = fcl.CollisionRequest(enable_contact=True, num_max_contacts=1)
    for a, b in itertools.combinations(names, 2):
        if not (bodies[a][3] or bodies[b][3]):
            continue
        pa, pb = bodies[a][1], bodies[b][1]
        close = np.nonzero(np.linalg.norm(pa - pb, axis=1) <= radius[a] + radius[b])[0]
        if a == "ground" or b == "ground":
            other = b if a == "ground" else a
            close = np.nonzero(bodies[other][1][:, 2] - radius[other] <= 0.0)[0]
        t = max(0.001, min(0.005, 0.5 * min(thick[a], thick[b])))
        for f in close:
            oa = fcl.CollisionObject(geoms[a], fcl.Transform(rotation(bodies[a][2][f]), pa[f]))
            ob = fcl.CollisionObject(geoms[b], fcl.Transform(rotation(bodies[b][2][f]), pb[f]))
            res = fcl.CollisionResult()
            fcl.collide(oa, ob, request, res)
            depth = max((c.penetration_depth for c in res.contacts), default=0.0)
            if depth > t:
                depth = min(depth, overlap(bodies[a][0], rotation(bodies[a][2][f]), pa[f],
                                           bodies[b][0], rotation(bodies[b][2][f]), pb[f]))
            if depth > t:
                out.add((int(f), a, b))
    return out


def overlap(ma, ra, ta, mb, rb, tb) -> float:
    """The least overlap of the two bodies' projections on their face normals: the depth is no more
    (EPA on convex bodies with coplanar faces now and then overshoots it)."""
    va, vb = ma.vertices @ ra.T + ta, mb.vertices @ rb.T + tb
    axes = np.unique(np.round(np.concatenate([ma.face_normals @ ra.T, mb.face_normals @ rb.T]), 9), axis=0)
    pa, pb = va @ axes.T, vb @ axes.T
    return float(np.min(np.minimum(pa.max(0) - pb.min(0), pb.max(0) - pa.min(0))))
