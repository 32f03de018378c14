"""Convex bodies of many faces (a sphere, a disc) against others are measured on the Gauss map of
their Minkowski difference: the gap must equal a Minkowski difference built here with Qhull (depth: the
nearest facet; distance: the origin to the hull's triangles, exact point-to-triangle distance written
out in numpy) wherever it is within tau, bound the distance from below beyond it, push a penetrating
pair exactly into touching along its axis, and give the same penetration verdicts as the surface samples."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from studio.checks.contacts import convex_gauss, gauss_work, GAUSS_WORK, few_axes, pair_query
from studio.checks.shape import build_shape

TAU = 0.004


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


def truth(sa, sb, rel):
    """Signed distance of the two bodies by Qhull's Minkowski difference of all their vertices."""
    va = sa.mesh.vertices @ rel[:3, :3].T + rel[:3, 3]
    diff = (va[:, None] - sb.mesh.vertices[None]).reshape(-1, 3)
    hull = ConvexHull(diff)
    if np.all(hull.equations[:, 3] < 0):
        return float(hull.equations[:, 3].max())
    return float(origin_to_triangle(diff[hull.simplices]).min())


def poses(sa, sb, n, seed, scale=1.0):
    """Relative poses of A in B placed round contact: along a random direction, A is set where its
    support and B's meet, then moved by -6..1.5 tau (the overlap along that direction bounds the depth
    from above, the separation bounds the distance from below)."""
    rng = np.random.default_rng(seed)
    rel = np.tile(np.eye(4), (n, 1, 1))
    rel[:, :3, :3] = Rotation.random(n, random_state=seed).as_matrix() * scale
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    va = np.einsum("qij,vj->qvi", rel[:, :3, :3], sa.mesh.vertices)
    reach = (-np.einsum("qvi,qi->qv", va, d)).max(1) + (sb.mesh.vertices @ d.T).max(0)
    rel[:, :3, 3] = d * (reach + rng.uniform(-6 * TAU, 1.5 * TAU, n))[:, None]
    return rel


SHAPES = {
    "sphere": lambda: trimesh.creation.icosphere(2, 0.06),
    "box": lambda: trimesh.creation.box((0.2, 0.12, 0.05)),
    "ball": lambda: trimesh.creation.icosphere(1, 0.05),
    "disc": lambda: trimesh.creation.cylinder(0.08, 0.02, sections=40),
}


@pytest.mark.parametrize("a,b,scale", [("box", "sphere", 1.0), ("sphere", "box", 1.0), ("disc", "disc", 1.0),
                                       ("disc", "ball", 1.3)])
def test_gauss_map_gap_equals_the_minkowski_difference(a, b, scale):
    sa, sb = build_shape(SHAPES[a]()), build_shape(SHAPES[b]())
    assert not few_axes(sa, sb) and gauss_work(sa, sb) <= GAUSS_WORK      # the path under test
    rel = poses(sa, sb, 120, seed=len(a) * 7 + len(b), scale=scale)
    Q = len(rel)
    tau = np.full(Q, TAU)
    gap, axis, _ = convex_gauss(sa, sb, rel, tau, np.ones(Q))
    ref = np.array([truth(sa, sb, r) for r in rel])
    near = gap <= TAU
    assert np.sum(gap < -TAU) >= 10 and np.sum(near & (gap > 0)) >= 5 and np.sum(~near) >= 5
    assert np.max(np.abs(gap[near] - ref[near])) <= 1e-9
    assert np.all(ref[~near] >= gap[~near] - 1e-12) and np.all(ref[~near] > TAU)
    for q in np.nonzero(gap < 0)[0][:25]:          # pushed by its depth along its axis, A just touches B
        moved = rel[q].copy()
        moved[:3, 3] += -gap[q] * axis[q]
        assert abs(truth(sa, sb, moved)) <= 1e-9
    assert np.array_equal(ref < -TAU, gap < -TAU) and np.array_equal(ref <= TAU, gap <= TAU)
    for gauss in (False, True):                    # the surface samples, and the path measure() takes
        g2, _, _ = pair_query(sa, sb, rel, tau, tau, gauss=gauss)
        assert np.array_equal(g2 < -TAU, gap < -TAU)
