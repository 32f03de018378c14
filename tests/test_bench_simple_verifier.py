"""The bench's simple verifier on parts that are not convex: its verdicts near tau match a brute-force
reference computed here (fine surface samples, trimesh's exact signed distance)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import simple_verifier as sv  # noqa: E402

TAU = 0.005


def bracket():
    """A U-shaped bracket, one closed surface: base 0.30 x 0.02, uprights 0.02 wide and 0.12 tall, 0.1 deep."""
    outline = np.array([[-0.15, 0], [0.15, 0], [0.15, 0.12], [0.13, 0.12], [0.13, 0.02], [-0.13, 0.02],
                        [-0.13, 0.12], [-0.15, 0.12]])
    tri = np.array([(0, 1, 4), (0, 4, 5), (1, 2, 3), (1, 3, 4), (0, 5, 6), (0, 6, 7)])
    u = trimesh.creation.extrude_triangulation(outline, tri, 0.1)
    u.apply_translation((0, 0, -0.05))
    u.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    return u


def brute_depth(a, b):
    """The deepest of fine samples of either surface inside the other (trimesh: positive inside)."""
    deep = -np.inf
    for x, y in ((a, b), (b, a)):
        s, _ = trimesh.sample.sample_surface_even(x, 10000, seed=2)
        deep = max(deep, float(trimesh.proximity.signed_distance(y, np.concatenate([s, x.vertices])).max()))
    return deep


@pytest.mark.parametrize("where, sunk", [("base", 0.0049), ("base", 0.0051), ("upright", 0.0049),
                                         ("upright", 0.0051), ("base", -0.003), ("base", -0.006)])
def test_box_in_bracket_matches_brute_force(where, sunk):
    u = bracket()
    box = trimesh.creation.box(extents=(0.08, 0.05, 0.05))
    pos = np.array([0, 0, 0.045 - sunk]) if where == "base" else np.array([0.09 + sunk, 0, 0.07])
    hv = np.asarray(box.vertices, float)
    h = ConvexHull(hv)
    x = sv.Part(np.asarray(u.vertices, float), u.faces).at(np.eye(3), np.zeros(3))
    y = sv.Part(hv, h.simplices, h.equations).at(np.eye(3), pos)
    opened = [0, 0]
    pen, touch = sv.part_verdict(x, y, TAU, opened)
    placed = box.copy().apply_translation(pos)
    depth = brute_depth(u, placed)
    gap = float(trimesh.proximity.closest_point(u, placed.vertices)[1].min())
    assert pen == (depth > TAU)
    assert touch == (depth > 0 or gap <= TAU)
    assert opened == [0, 0]


def test_convex_piece_beside_mesh_apart_is_not_penetrating():
    """A convex piece (its facets from Qhull, in no consistent order) 2 mm above the bracket's upright:
    touching, not penetrating (its inside is its facet planes, not a winding number)."""
    u = bracket()
    ball = trimesh.creation.icosphere(2, 0.03)
    hv = np.asarray(ball.vertices, float)
    h = ConvexHull(hv)
    pos = np.array([0.14, 0, 0.12 + 0.03 + 0.002])
    x = sv.Part(np.asarray(u.vertices, float), u.faces).at(np.eye(3), np.zeros(3))
    y = sv.Part(hv, h.simplices, h.equations).at(np.eye(3), pos)
    opened = [0, 0]
    assert sv.part_verdict(x, y, TAU, opened) == (False, True)
    assert sv.part_verdict(y, x, TAU, opened) == (False, True)
