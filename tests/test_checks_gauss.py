"""Convex bodies of many faces (a sphere, a disc) against others are measured on the Gauss map of
their Minkowski difference: the gap must equal a Minkowski difference built here with Qhull (depth: the
nearest facet; distance: the origin to the hull's triangles, exact point-to-triangle distance written
out in numpy) wherever it is within tau, bound the distance from below beyond it, push a penetrating
pair exactly into touching along its axis, and give the same penetration verdicts as the surface samples."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from studio.checks.contacts import convex_gauss, gauss_work, GAUSS_WORK, few_axes, pair_query
from studio.checks.shape import build_shape
from minkowski import hulls_gap, poses

TAU = 0.004


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
    rel = poses(sa, sb, 120, seed=len(a) * 7 + len(b), moved=(-6 * TAU, 1.5 * TAU), scale=scale)
    Q = len(rel)
    tau = np.full(Q, TAU)
    gap, axis, _ = convex_gauss(sa, sb, rel, tau, np.ones(Q))
    ref = np.array([hulls_gap(sa, sb, r) for r in rel])
    near = gap <= TAU
    assert np.sum(gap < -TAU) >= 10 and np.sum(near & (gap > 0)) >= 5 and np.sum(~near) >= 5
    assert np.max(np.abs(gap[near] - ref[near])) <= 1e-9
    assert np.all(ref[~near] >= gap[~near] - 1e-12) and np.all(ref[~near] > TAU)
    for q in np.nonzero(gap < 0)[0][:25]:          # pushed by its depth along its axis, A just touches B
        moved = rel[q].copy()
        moved[:3, 3] += -gap[q] * axis[q]
        assert abs(hulls_gap(sa, sb, moved)) <= 1e-9
    assert np.array_equal(ref < -TAU, gap < -TAU) and np.array_equal(ref <= TAU, gap <= TAU)
    for gauss in (False, True):                    # the surface samples, and the path measure() takes
        g2, _, _ = pair_query(sa, sb, rel, tau, tau, gauss=gauss)
        assert np.array_equal(g2 < -TAU, gap < -TAU)
