"""The hulls' separating axis as a bound between frames (sweep_bounds.hull_gap): never above the
pair's true gap, apart or overlapping, and equal to it for convex bodies (the truth here is the
signed distance of Qhull's Minkowski difference, written out independently); and a contact met by
one surface sample proven within the level (event_times.sample_within) is met by the pair query too."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from studio.checks.contacts import pair_query
from studio.checks.event_times import sample_within
from studio.checks.shape import build_shape
from studio.checks.sweep_bounds import fills_hull, hull_gap
from minkowski import hulls_gap, poses

TAU = 0.005


def table_parts():
    """A table: a top on four legs."""
    parts = [trimesh.creation.box((0.6, 0.4, 0.03), trimesh.transformations.translation_matrix([0, 0, 0.4]))]
    for x in (-0.27, 0.27):
        for y in (-0.17, 0.17):
            parts.append(trimesh.creation.box((0.04, 0.04, 0.4), trimesh.transformations.translation_matrix([x, y, 0.2])))
    return parts


def table():
    """The table as one body (not convex; it fills a small share of its hull)."""
    return trimesh.util.concatenate(table_parts())


SHAPES = {
    "ball": lambda: trimesh.creation.icosphere(2, 0.06),
    "crate": lambda: trimesh.creation.box((0.16, 0.16, 0.16)),
    "disc": lambda: trimesh.creation.cylinder(0.08, 0.02, sections=40),
    "table": table,
}


@pytest.mark.parametrize("a,b", [("crate", "ball"), ("ball", "disc"), ("disc", "crate"), ("crate", "crate")])
def test_the_hulls_gap_of_convex_bodies_is_their_gap(a, b):
    sa, sb = build_shape(SHAPES[a]()), build_shape(SHAPES[b]())
    rel = poses(sa, sb, 60, seed=len(a) * 7 + len(b), moved=(-6 * TAU, 3 * TAU))
    got = hull_gap(sa, sb, rel)
    truth = np.array([hulls_gap(sa, sb, r) for r in rel])
    assert np.all(got <= truth + 1e-9)                       # a lower bound, apart or overlapping
    assert np.max(truth - got) < 2e-5                        # and the gap itself, to the solver's tolerance
    assert (truth < 0).sum() > 10 and (truth > 0).sum() > 10


@pytest.mark.parametrize("a", ["crate", "ball"])
def test_the_hulls_gap_never_exceeds_the_gap_of_a_body_that_is_not_convex(a):
    sa, sb = build_shape(SHAPES[a]()), build_shape(table())
    assert not fills_hull(sb)
    rel = poses(sa, sb, 80, seed=3, moved=(-6 * TAU, 3 * TAU))
    # some of them into the table's open middle, under its top, between its legs
    rel[:40, :3, 3] = np.random.default_rng(4).uniform([-0.2, -0.12, 0.1], [0.2, 0.12, 0.3], (40, 3))
    got = hull_gap(sa, sb, rel)
    # apart: the distance to the table is the least to any of its parts (each convex)
    parts = [build_shape(p) for p in table_parts()]
    apart = np.array([min(hulls_gap(sa, p, r) for p in parts) for r in rel])
    assert np.all(got[apart > 0] <= apart[apart > 0] + 1e-9)
    # overlapping: the pair query's depth, exact beyond tau
    gap, _, _ = pair_query(sa, sb, rel, TAU, TAU)
    deep = (apart <= 0) & (gap < -TAU)
    assert (apart > 0).sum() > 10 and deep.sum() >= 1 and np.all(got[deep] <= gap[deep] + 1e-9)
    assert np.all(got[:40] < -0.05)                           # inside the table's hull: no bound to speak of


def test_a_sample_proven_within_the_level_means_the_pair_query_finds_the_contact():
    sa, sb = build_shape(SHAPES["ball"]()), build_shape(SHAPES["crate"]())
    rel = poses(sa, sb, 120, seed=11, moved=(-6 * TAU, 3 * TAU))
    for level in (0.002, 0.005):
        gap, _, _ = pair_query(sa, sb, rel, level, level)
        said = np.array([sample_within(sa, sb, r, level) for r in rel])
        assert said.sum() > 10
        assert np.all(gap[said] <= level)                    # never a contact the pair query would not find
