"""Bodies that are not convex (a U-shaped bracket, a ring) resting around others: the checks' exact path
(distance grid, proven intervals, exact distance where they reach tau) gives the verdicts a brute-force
reference gives, computed here on a fine sample of both surfaces with exact point-to-triangle distance
and winding numbers written out in numpy."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from checks_films import tracks
from studio.checks.contacts import tau
from studio.checks.footage import Footage
from studio.checks.run import run_on
from studio.checks.shape import convex_solid, weld
from studio.scene.ir import Body, Geometry, Scene

IDQ = [1.0, 0.0, 0.0, 0.0]


def bracket(width=0.2, depth=0.08, height=0.1, wall=0.03):
    """A U seen from the front: two arms and a base, joined (manifold), opening upwards."""
    arm = trimesh.creation.box(extents=[wall, depth, height])
    base = trimesh.creation.box(extents=[width, depth, wall]).apply_translation([0, 0, -(height - wall) / 2])
    left = arm.copy().apply_translation([-(width - wall) / 2, 0, 0])
    right = arm.copy().apply_translation([(width - wall) / 2, 0, 0])
    return trimesh.boolean.union([left, right, base], engine="manifold")


def closest_distance(points, tri):
    """Exact distance from each point (N,3) to the nearest of triangles (T,3,3) (Ericson's regions)."""
    out = np.empty(len(points))
    for i in range(0, len(points), 256):
        p = points[i:i + 256, None, :]
        a, b, c = tri[None, :, 0], tri[None, :, 1], tri[None, :, 2]
        ab, ac, ap, bp, cp = b - a, c - a, p - a, p - b, p - c
        d1, d2 = (ab * ap).sum(-1), (ac * ap).sum(-1)
        d3, d4 = (ab * bp).sum(-1), (ac * bp).sum(-1)
        d5, d6 = (ab * cp).sum(-1), (ac * cp).sum(-1)
        va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
        with np.errstate(all="ignore"):
            q = a + ab * (vb / (va + vb + vc))[..., None] + ac * (vc / (va + vb + vc))[..., None]
            q = np.broadcast_to(q, np.broadcast_shapes(q.shape, p.shape)).copy()
            done = np.zeros(q.shape[:2], bool)
            for m, v in (((d1 <= 0) & (d2 <= 0), a), ((d3 >= 0) & (d4 <= d3), b),
                         ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * (d1 / (d1 - d3))[..., None]),
                         ((d6 >= 0) & (d5 <= d6), c), ((vb <= 0) & (d2 >= 0) & (d6 <= 0),
                                                       a + ac * (d2 / (d2 - d6))[..., None]),
                         ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0),
                          b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))[..., None])):
                m = m & ~done
                v = np.broadcast_to(v, q.shape)
                q[m] = v[m]
                done |= m
        out[i:i + 256] = np.linalg.norm(q - p, axis=-1).min(axis=1)
    return out


def inside(points, tri):
    """Winding number of the closed surface around each point is one (solid angles, Van Oosterom-Strackee)."""
    out = np.empty(len(points), bool)
    for i in range(0, len(points), 256):
        r = tri[None] - points[i:i + 256, None, None, :]
        a, b, c = r[:, :, 0], r[:, :, 1], r[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = np.einsum("pti,pti->pt", a, np.cross(b, c))
        den = la * lb * lc + (a * b).sum(-1) * lc + (b * c).sum(-1) * la + (c * a).sum(-1) * lb
        out[i:i + 256] = np.abs(np.arctan2(num, den).sum(axis=1)) > np.pi
    return out


def fine_sample(mesh, n=8000, seed=11):
    """Every vertex, points every 1 mm along every edge, and n points spread over the faces by area."""
    rng = np.random.default_rng(seed)
    edges = mesh.vertices[mesh.edges_unique]
    length = np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1)
    along = [e[0] + np.linspace(0, 1, max(2, int(l / 0.001)))[:, None] * (e[1] - e[0]) for e, l in zip(edges, length)]
    face = rng.choice(len(mesh.faces), n, p=mesh.area_faces / mesh.area)
    r1, r2 = rng.random(n), rng.random(n)
    flip = r1 + r2 > 1
    r1, r2 = np.where(flip, 1 - r1, r1), np.where(flip, 1 - r2, r2)
    t = mesh.triangles[face]
    return np.concatenate([mesh.vertices, *along, t[:, 0] + r1[:, None] * (t[:, 1] - t[:, 0])
                           + r2[:, None] * (t[:, 2] - t[:, 0])])


def reference_gap(ma, pa, mb, pb):
    """Signed gap by brute force: the least signed distance of either body's fine sample to the other."""
    def placed(m, p):
        return trimesh.transformations.translation_matrix(p[:3])
    wa, wb = placed(ma, pa), placed(mb, pb)
    out = np.inf
    for m_from, m_into, rel in ((ma, mb, np.linalg.inv(wb) @ wa), (mb, ma, np.linalg.inv(wa) @ wb)):
        p = trimesh.transform_points(fine_sample(m_from), rel)
        lo, hi = m_into.bounds
        p = p[np.all((p >= lo - 0.01) & (p <= hi + 0.01), axis=1)]     # the rest lie over 10 mm off
        if len(p):
            d = np.where(inside(p, m_into.triangles), -1, 1) * closest_distance(p, m_into.triangles)
            out = min(out, float(d.min()))
    return out


def verdicts(shape_a, shape_b, poses_a, poses_b):
    """Per frame: (penetrating past tau, touching within tau) from the studio's checks."""
    sc = Scene(name="around", bodies=[Body("held", geometry=Geometry("mesh", path="held")),
                                      Body("holder", kind="static", geometry=Geometry("mesh", path="holder"))])
    tr = tracks(1, held=np.c_[poses_a, np.tile(IDQ, (len(poses_a), 1))],
                holder=np.c_[poses_b, np.tile(IDQ, (len(poses_b), 1))])
    film = Footage.build(sc, {"held": shape_a, "holder": shape_b}, tr)
    pen = {r.name: r for r in run_on(film, ["NoPenetration"])}["NoPenetration"]
    t = film.tau_fp[:, 0]
    return ([int(e["frame"]) - 1 for e in pen.evidence], [int(f) for f in np.nonzero(film.gap[:, 0] <= t)[0]],
            float(t[0]))


@pytest.mark.parametrize("case", ["bracket", "ring"])
def test_a_body_resting_around_another_gets_the_brute_force_verdicts(case, tmp_path, monkeypatch):
    monkeypatch.setenv("KEYPOSE_CACHE", str(tmp_path))
    offsets = np.array([-1.3, -1.1, -0.9, -0.5, 0.0, 0.5, 0.9, 1.1, 1.4]) * 0.005     # < 0: pressed in
    if case == "bracket":       # a block in the U, 10 mm above its base, pushed sideways into one arm
        holder = bracket()
        held = trimesh.creation.box(extents=[0.06, 0.05, 0.05])
        inner = (0.2 - 0.03) / 2 - 0.015                 # the right arm's inner face
        poses = np.c_[inner - 0.03 + offsets, np.zeros(len(offsets)), np.full(len(offsets), 0.015)]
    else:                       # a ring round a post, resting on (or sunk into) the post's base
        base = trimesh.creation.box(extents=[0.3, 0.3, 0.02]).apply_translation([0, 0, -0.01])
        post = trimesh.creation.box(extents=[0.04, 0.04, 0.3]).apply_translation([0, 0, 0.15])
        holder = trimesh.boolean.union([base, post], engine="manifold")
        held = trimesh.creation.annulus(r_min=0.05, r_max=0.09, height=0.03, sections=48)
        poses = np.c_[np.full(len(offsets), 0.004), np.zeros(len(offsets)), 0.015 + offsets]
    t = tau(0.05 if case == "bracket" else 0.03, 0.08 if case == "bracket" else 0.3)
    assert not convex_solid(weld(holder)) and (case == "bracket" or not convex_solid(weld(held)))
    pen, touch, t_film = verdicts(held, holder, poses, np.zeros_like(poses))
    assert t_film == pytest.approx(t)
    ref = np.array([reference_gap(held, p, holder, np.zeros(3)) for p in poses])
    assert pen == [int(k) for k in np.nonzero(-ref > t)[0]]
    assert touch == [int(k) for k in np.nonzero(ref <= t)[0]]
    assert len(pen) >= 2 and len(touch) > len(pen) and len(touch) < len(poses)   # both verdicts flip here


def test_the_sign_inside_a_welded_solid_and_inside_two_overlapping_pieces_is_the_brute_force_sign():
    """A bracket welded into one closed surface is signed by its nearest faces' pseudo-normals; a cross
    exported as two boxes that pass through each other (never unioned) needs the winding number: a
    point inside one box next to a face of the other buried in it is inside the body. Both against
    the brute-force winding number and exact distance."""
    from studio.checks.shape import Surface, build_shape
    rng = np.random.default_rng(5)
    welded = bracket()
    bar = trimesh.creation.box(extents=[0.3, 0.04, 0.04])
    post = trimesh.creation.box(extents=[0.04, 0.04, 0.3])
    cross = trimesh.util.concatenate([bar, post])
    for mesh, one_piece in ((welded, True), (cross, False)):
        shape = build_shape(Surface(np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64)))
        assert shape.one_closed_piece is one_piece
        lo, hi = mesh.bounds
        p = lo - 0.02 + (hi - lo + 0.04) * rng.random((1500, 3))
        p = np.concatenate([p, [[0.025, 0.0, 0.0], [0.0, 0.0, 0.1]]])   # in the bar 5 mm off a face of the post; in the post
        d, _ = shape.exact_signed(p)
        truth_in = inside(p, mesh.triangles) if one_piece else (inside(p, bar.triangles) | inside(p, post.triangles))
        assert np.array_equal(d < 0, truth_in), np.nonzero((d < 0) != truth_in)[0][:5]
        if one_piece:
            assert np.allclose(np.abs(d), closest_distance(p, mesh.triangles), atol=1e-9)
