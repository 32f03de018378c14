"""Truth for convex pairs, written out independently of studio/checks: the signed distance of two
bodies' convex hulls from Qhull's Minkowski difference of their vertices (depth: its nearest facet to
the origin, inside; distance: the origin to its triangles, outside), and relative poses placed round
contact."""
from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation


def origin_to_triangle(tri):
    """Exact distance from the origin to each triangle (T,3,3): the plane where its foot lies inside,
    else the nearest of its three edges."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    n = n / np.linalg.norm(n, axis=1, keepdims=True)
    foot = np.einsum("ti,ti->t", a, n)[:, None] * n
    inside = np.ones(len(tri), bool)
    for p, q, r in ((a, b, c), (b, c, a), (c, a, b)):
        inside &= np.einsum("ti,ti->t", np.cross(q - p, foot - p), n) >= 0
    best = np.where(inside, np.linalg.norm(foot, axis=1), np.inf)
    for p, q in ((a, b), (b, c), (c, a)):
        d = q - p
        s = np.clip(-np.einsum("ti,ti->t", p, d) / np.einsum("ti,ti->t", d, d), 0, 1)
        best = np.minimum(best, np.linalg.norm(p + s[:, None] * d, axis=1))
    return best


def hulls_gap(sa, sb, rel):
    """Signed distance of the two shapes' convex hulls, A placed in B's frame by `rel` (4x4)."""
    va = sa.mesh.vertices @ rel[:3, :3].T + rel[:3, 3]
    diff = (va[:, None] - sb.mesh.vertices[None]).reshape(-1, 3)
    hull = ConvexHull(diff)
    if np.all(hull.equations[:, 3] < 0):
        return float(hull.equations[:, 3].max())
    return float(origin_to_triangle(diff[hull.simplices]).min())


def poses(sa, sb, n, seed, moved: tuple[float, float], scale=1.0):
    """Relative poses of A in B placed round contact: along a random direction, A is set where its
    support and B's meet, then moved by a uniform draw from `moved` (metres) along it (the overlap
    along that direction bounds the depth from above, the separation bounds the distance from below)."""
    rng = np.random.default_rng(seed)
    rel = np.tile(np.eye(4), (n, 1, 1))
    rel[:, :3, :3] = Rotation.random(n, random_state=seed).as_matrix() * scale
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    va = np.einsum("qij,vj->qvi", rel[:, :3, :3], sa.mesh.vertices)
    reach = (-np.einsum("qvi,qi->qv", va, d)).max(1) + (sb.mesh.vertices @ d.T).max(0)
    rel[:, :3, 3] = d * (reach + rng.uniform(*moved, n))[:, None]
    return rel
