"""A simple exact verifier for films of convex bodies (and bodies made of convex pieces), written for
the corpus benchmark with no code shared with studio/checks.

Run: .venv/bin/python bench/simple_verifier.py FILM.npz OUT.json [--fcl]
The .npz is the truth bench/corpus_films.py writes beside each .glb. Per body: its convex pieces' hulls
(scipy's Qhull) and its world matrix per frame. Per frame pair of bodies not both static: a broadphase
on world boxes (vectorised over all frames), then for each distinct relative pose (bodies at rest are
measured once) and each pair of pieces the Minkowski difference of the two hulls (Qhull): the origin
inside it means overlap, its depth the origin's distance to the nearest facet (the exact penetration
depth of two convex bodies); outside, the origin's exact distance to the hull (point to facet
triangles). A part that is not convex (a closed, consistently wound mesh) is measured against
each part of the other body: python-fcl's exact distance of the two triangle trees (fcl.BVHModel)
says whether they come within tau; there, each surface is cut into ever smaller triangles until every
piece is proven no deeper than tau inside the other (the distance to a facet, convex, is largest at a
piece's corners; the depth is 1-Lipschitz) or a corner is proven deeper (its exact distance to the
other's surface, inside by the winding number or the other's facet planes): the depth of a pair is
the deepest point of either surface inside the other, decided exactly, not at samples. tau = max(1 mm,
min(5 mm, half the thinner body's thickness)), thickness the hull's least width. A pair-frame
penetrates when the depth passes tau and touches when the gap is within tau; a moving body not
self-propelled floats when no chain of touching bodies joins it to the ground or a static body.
A piece of surface under a micrometre still undecided is within a micrometre of tau and counts as
not deeper (counted in the output's within_micrometre, as too_many_pieces counts a pair given up
beyond MOST pieces: both 0 on every film the bench runs unless it prints them).
With --fcl the same queries are also asked of python-fcl (GJK/EPA signed distance) and
timed, to show how fast this verifier is beside a compiled library.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np
from scipy.spatial import ConvexHull, QhullError


def hull_of(points):
    h = ConvexHull(points)
    return points[h.vertices], h.equations


def hull3(points):
    """Vertices, facet equations (n·x + o <= 0 inside), facet triangles of the hull of points, and the
    triangles as indices into those vertices."""
    h = ConvexHull(points)
    at = np.full(len(points), -1)
    at[h.vertices] = np.arange(len(h.vertices))
    return points[h.vertices], h.equations, points[h.simplices], at[h.simplices]


def least_width(vertices, equations):
    """The hull's least width: over its facet normals, the extent of the vertices along it."""
    proj = vertices @ equations[:, :3].T
    return float(np.min(proj.max(0) - proj.min(0)))


def origin_to_triangles(tri):
    """Exact distance from the origin to triangles (T,3,3), least over them."""
    return float(np.sqrt(np.min(origin_to_each(tri))))


def origin_to_each(tri):
    """Squared exact distance from the origin to each of the triangles (T,3,3)."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    p = np.zeros_like(a)
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = (ab * ap).sum(1), (ac * ap).sum(1)
    bp = p - b
    d3, d4 = (ab * bp).sum(1), (ac * bp).sum(1)
    cp = p - c
    d5, d6 = (ab * cp).sum(1), (ac * cp).sum(1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(all="ignore"):
        denom = va + vb + vc
        q = a + ab * (vb / denom)[:, None] + ac * (vc / denom)[:, None]
        cases = [((d1 <= 0) & (d2 <= 0), a),
                 ((d3 >= 0) & (d4 <= d3), b),
                 ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * (d1 / (d1 - d3))[:, None]),
                 ((d6 >= 0) & (d5 <= d6), c),
                 ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + ac * (d2 / (d2 - d6))[:, None]),
                 ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0),
                  b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))[:, None])]
        done = np.zeros(len(a), bool)
        for m, v in cases:
            m = m & ~done
            q[m] = v[m]
            done |= m
    return np.einsum("ti,ti->t", q, q)


def convex_gap(va, vb):
    """Signed gap of two convex hulls given by vertices (negative: penetration depth)."""
    diff = (va[:, None, :] - vb[None, :, :]).reshape(-1, 3)
    try:
        h = ConvexHull(diff)
    except QhullError:
        return np.inf
    off = h.equations[:, 3]                          # n·x + off <= 0 inside
    if np.all(off < 0):
        return float(np.max(off))                    # -depth: the nearest facet
    return origin_to_triangles(diff[h.simplices])


def placed(hull, lin, t):
    """A hull (vertices, Qhull's facet equations, facet triangles, ...) moved by x -> lin x + t."""
    v, eq, tri = hull[:3]
    n = eq[:, :3] @ np.linalg.inv(lin)                 # normals go by the inverse transpose
    size = np.linalg.norm(n, axis=1)
    n = n / size[:, None]
    off = eq[:, 3] / size - n @ t
    return v @ lin.T + t, np.c_[n, off], tri @ lin.T + t


def box_gap(va, vb):
    """Distance between the bounding boxes of two point sets: no more than the distance between them."""
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(va.min(0) - vb.max(0), vb.min(0) - va.max(0)))))


SMALL = 2000       # corners of the Minkowski difference below which the planes are not tried first


def apart_along(va, vb, u):
    """The two point sets' separation along the unit axis u (negative: their overlap along it): a
    lower bound of the gap of their hulls, whatever the axis."""
    pa, pb = va @ u, vb @ u
    return float(max(pb.min() - pa.max(), pa.min() - pb.max()))


def pair_verdict(va, vb, ha, pose_a, hb, pose_b, t, axes_seen=None, key=None):
    """(penetrating: depth past t, touching: gap within t) of two placed convex hulls, exactly: first
    the axis that parted them best the last time they were measured (axes_seen[key]: any axis bounds
    the gap from below), then
    what their facet planes prove (a separation along a facet normal bounds the gap from below, the
    least overlap along them bounds the depth from above, a corner's distance to the facet of the
    other it lies beyond bounds the gap from above; a point deeper than t in both, deep_point, proves
    the depth: the last one found for the pair is tried before the planes); the Minkowski difference (convex_gap) where those leave it open (and at once for small
    hulls, where Qhull is quicker than the planes)."""
    if box_gap(va, vb) > t:
        return False, False                            # boxes apart by more than t: so are the hulls
    if len(va) * len(vb) <= SMALL:                     # a small difference: Qhull answers at once
        gap = convex_gap(va, vb)
        return -gap > t, gap <= t
    seen = None if axes_seen is None else axes_seen.get(key)
    if seen is not None and apart_along(va, vb, seen) > t:
        return False, False                            # apart along the axis that parted them before
    (_, ea, ta), (_, eb, tb) = placed(ha, *pose_a), placed(hb, *pose_b)
    point = None if axes_seen is None else axes_seen.get(("point", key))
    if point is not None and depth_in(ea, eb, point) > t:
        return True, True                              # the point that was deep in both still is
    axes = np.concatenate([ea[:, :3], eb[:, :3]])
    pa, pb = va @ axes.T, vb @ axes.T
    lo_a, hi_a, lo_b, hi_b = pa.min(0), pa.max(0), pb.min(0), pb.max(0)
    apart = np.maximum(lo_b - hi_a, lo_a - hi_b)
    if axes_seen is not None:
        axes_seen[key] = axes[int(np.argmax(apart))]
    if float(np.max(apart)) > t:
        return False, False                            # apart by more than t along a facet normal
    if float(np.min(np.minimum(hi_a - lo_b, hi_b - lo_a))) <= t:
        up = np.inf                                    # not deeper than t: touching if a corner is near
        for v, (eq, tri) in ((va, (eb, tb)), (vb, (ea, ta))):
            h = v @ eq[:, :3].T + eq[:, 3]             # heights above the other's facet planes
            k = np.argmax(h, axis=1)
            if np.any(h[np.arange(len(v)), k] <= 0):
                return False, True                     # a corner inside the other: they overlap
            up = min(up, float(np.sqrt(origin_to_each(tri[k] - v[:, None, :]).min())))
        if up <= t:
            return False, True
        near = touch_by_nearest(va, vb, ha, hb, ea, eb, ta, tb, t)
        if near is not None:
            return False, near
    else:
        point = deep_point(ea, eb)
        if point is not None and depth_in(ea, eb, point) > t:
            if axes_seen is not None:
                axes_seen[("point", key)] = point
            return True, True                          # a point deeper than t in both: so is the pair
    gap = convex_gap(va, vb)
    return -gap > t, gap <= t


def touch_by_nearest(va, vb, ha, hb, ea, eb, ta, tb, t):
    """Whether two placed convex hulls, not deeper than t, come within t, decided exactly from the
    nearest points python-fcl's GJK finds (None where that leaves it open): the separation of the
    vertices along the line between them bounds the gap from below, and the nearest point on A's
    side, its exact distance to B's facets plus its exact distance to A (0 inside A's planes), from
    above; hulls fcl finds overlapping are touching where a point lies in both (deep_point)."""
    import fcl
    oa = fcl.CollisionObject(fcl.Convex(va, len(ta), np.c_[np.full(len(ta), 3), ha[3]].reshape(-1)))
    ob = fcl.CollisionObject(fcl.Convex(vb, len(tb), np.c_[np.full(len(tb), 3), hb[3]].reshape(-1)))
    res = fcl.DistanceResult()
    d = fcl.distance(oa, ob, fcl.DistanceRequest(), res)
    if d <= 0:
        point = deep_point(ea, eb)
        return True if point is not None and depth_in(ea, eb, point) >= 0 else None
    pa, pb = np.asarray(res.nearest_points[0], float), np.asarray(res.nearest_points[1], float)
    u = (pb - pa) / max(np.linalg.norm(pb - pa), 1e-300)
    if apart_along(va, vb, u) > t:
        return False
    out_a = 0.0 if np.all(pa @ ea[:, :3].T + ea[:, 3] <= 0) else origin_to_triangles(ta - pa)
    if origin_to_triangles(tb - pa) + out_a <= t:
        return True
    return None


def deep_point(ea, eb):
    """The point deepest in both of two convex hulls given by facet planes (a linear program), or None
    where it finds none. Its depth in both (depth_in, measured on the planes, so it holds whatever the
    solver's tolerance) bounds the penetration depth from below: moving one hull by less than that
    keeps the point in both, so they still overlap."""
    from scipy.optimize import linprog
    eq = np.concatenate([ea, eb])
    res = linprog([0, 0, 0, -1], A_ub=np.c_[eq[:, :3], np.ones(len(eq))], b_ub=-eq[:, 3],
                  bounds=[(None, None)] * 4, method="highs")
    return res.x[:3] if res.status == 0 else None


def depth_in(ea, eb, p):
    """The depth of point p in both hulls (facet planes): the least of its depths below the planes."""
    return float(min(np.min(-(ea[:, :3] @ p + ea[:, 3])), np.min(-(eb[:, :3] @ p + eb[:, 3]))))


class Part:
    """A part of a body that is not convex (or a convex piece beside one), in the body's frame: its
    closed, consistently wound surface (vertices, faces), its facet planes when it is a convex hull,
    and python-fcl's bounding-volume tree of its triangles, built once."""

    def __init__(self, v, faces, planes=None):
        import fcl
        self.v, self.faces, self.planes = v, np.asarray(faces, np.int64), planes
        self.bvh = fcl.BVHModel()
        self.bvh.beginModel(len(v), len(faces))
        self.bvh.addSubModel(v, self.faces.astype(np.int32))
        self.bvh.endModel()

    def at(self, lin, t):
        """The part placed by x -> lin x + t: (vertices, triangles, planes or None, fcl object)."""
        import fcl
        v = self.v @ lin.T + t
        eq = None
        if self.planes is not None:
            n = self.planes[:, :3] @ np.linalg.inv(lin)
            size = np.linalg.norm(n, axis=1)
            n = n / size[:, None]
            eq = np.c_[n, self.planes[:, 3] / size - n @ t]
        if np.abs(lin.T @ lin - np.eye(3)).max() < 1e-6:                 # a rotation: the tree, moved
            obj = fcl.CollisionObject(self.bvh, fcl.Transform(lin, t))
        else:                                                            # scaled: a tree of its own
            g = fcl.BVHModel()
            g.beginModel(len(v), len(self.faces))
            g.addSubModel(v, self.faces.astype(np.int32))
            g.endModel()
            obj = fcl.CollisionObject(g, fcl.Transform())
        return Placed(v, v[self.faces], eq, obj, self, lin, t)


class Placed:
    def __init__(self, v, tri, planes, obj, part=None, lin=None, t=None):
        self.v, self.tri, self.planes, self.obj = v, tri, planes, obj
        self.part, self.lin, self.t = part, lin, t

    def signed(self, points):
        """Exact depth of points inside this part (negative: their distance outside it)."""
        if self.planes is not None:
            h = -(points @ self.planes[:, :3].T + self.planes[:, 3])
            inn = h.min(1) >= 0
            d = np.sqrt(np.min(origin_to_each((self.tri[None] - points[:, None, None, :]).reshape(-1, 3, 3))
                               .reshape(len(points), -1), 1))
            return np.where(inn, h.min(1), -d)
        d = to_each(points, self.tri).min(1)
        return np.where(inside_mesh(points, self.tri), d, -d)


def inside_mesh(points, tri):
    """Whether each point is inside the closed surface of triangles tri: winding number by the solid
    angles of the triangles (Van Oosterom and Strackee), 1 inside, 0 outside."""
    out = np.empty(len(points), bool)
    step = max(1, 200000 // len(tri))
    for i in range(0, len(points), step):
        rel = tri[None] - points[i:i + step, None, None, :]              # (P,T,3,3)
        a, b, c = rel[:, :, 0], rel[:, :, 1], rel[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        num = np.einsum("pti,pti->pt", a, np.cross(b, c))
        den = la * lb * lc + (a * b).sum(2) * lc + (b * c).sum(2) * la + (c * a).sum(2) * lb
        out[i:i + step] = np.abs(np.arctan2(num, den).sum(1)) > np.pi   # 2 pi of 4 pi: winding 1
    return out


def to_each(points, tri):
    """Exact distance (P,T) from each point to each triangle."""
    out = np.empty((len(points), len(tri)))
    step = max(1, 200000 // len(tri))
    for i in range(0, len(points), step):
        rel = tri[None] - points[i:i + step, None, None, :]
        out[i:i + step] = np.sqrt(origin_to_each(rel.reshape(-1, 3, 3))).reshape(len(rel), -1)
    return out


def mesh_bounds(tri, mid, r, y, t):
    """For pieces of surface (N,3,3) with middles and radii, against a part y that is not convex: (the
    deepest corner's exact depth inside y or -inf, a bound no point of the piece is deeper than).
    Only y's facets whose boxes come within t + 2r of a piece's box are measured against it: a farther
    facet is farther than that from every point of the piece, so the distances it could lower are
    already past what decides (a corner deeper than t; a middle outside by more than r - t); the
    least of the measured ones bounds a point's distance to y from above, and capped there from below."""
    n = len(tri)
    reach = t + 2 * r
    blo, bhi = tri.min(1), tri.max(1)
    ylo, yhi = y.tri.min(1), y.tri.max(1)
    apart = np.maximum(0.0, np.maximum(ylo[None] - bhi[:, None], blo[:, None] - yhi[None]))   # (N,T,3)
    i, k = np.nonzero(np.einsum("ntj,ntj->nt", apart, apart) <= (reach ** 2)[:, None])
    pts = np.concatenate([tri, mid[:, None]], 1)                                        # (N,4,3)
    near, up = np.full((n, 4), np.inf), np.full(n, np.inf)
    for j in range(0, len(i), 50000):
        ij, kj = i[j:j + 50000], k[j:j + 50000]
        rel = y.tri[kj][:, None] - pts[ij][:, :, None, :]                                # (M,4,3,3)
        d = np.sqrt(origin_to_each(rel.reshape(-1, 3, 3))).reshape(-1, 4)
        for c in range(4):
            np.minimum.at(near[:, c], ij, d[:, c])                                     # >= the distance
        np.minimum.at(up, ij, d[:, :3].max(1))      # over measured facets: the farthest corner, the least
    capped = np.minimum(near, reach[:, None])                                           # <= the distance
    low = np.full(n, -np.inf)
    far = np.isinf(near[:, 3])           # no facet within reach: the piece is wholly inside or outside
    if far.any():
        low[far] = np.where(inside_mesh(mid[far], y.tri), reach[far], -np.inf)
        up[far] = np.where(np.isinf(low[far]), -np.inf, up[far])
    deep = np.nonzero((capped[:, :3] > t).any(1) & ~far)[0]
    if len(deep):
        inn = inside_mesh(tri[deep].reshape(-1, 3), y.tri).reshape(-1, 3)
        low[deep] = np.where(inn, capped[deep, :3], -np.inf).max(1)
    ask = np.nonzero((up > t) & ~far)[0]                                               # the middle's signed depth
    if len(ask):
        inn = inside_mesh(mid[ask], y.tri)
        up[ask] = np.minimum(up[ask], np.where(inn, near[ask, 3], -capped[ask, 3]) + r[ask])
    return low, up


def split4(tri):
    """Each triangle (N,3,3) cut into four by its edges' midpoints."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    ab, bc, ca = (a + b) / 2, (b + c) / 2, (c + a) / 2
    return np.concatenate([np.stack(q, 1) for q in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))])


FINEST = 1e-6      # a piece of surface this small whose bounds still straddle tau: within a micrometre of it
MOST = 400000      # pieces of surface measured at once, at most: beyond, the pair is reported as open


def deeper_than(x, y, t, open_count, seen=None):
    """Whether some point of x's surface lies deeper than t inside y (its distance to y's surface),
    exactly: x's triangles are cut in four until each is settled. A piece is settled when a corner is
    proven deeper than t (the answer: yes), or when its points are proven no deeper than t: inside y a
    point's depth is its distance to the nearest of y's facets, each a convex function that is
    largest at the piece's corners, so no point of the piece is deeper than, over y's facets, the
    least of the largest corner distance (for a convex y its facets' planes, linear); and none is
    deeper than the depth at the piece's middle plus its radius (the depth is 1-Lipschitz). Only the
    pieces within y's box shrunk by t can hold such a point. A piece smaller than FINEST still open
    is counted in open_count[0] and not deeper (within a micrometre of t). The piece that answered
    yes is kept in seen (its corners and middle, points of x's surface, in x's own frame) and measured
    first the next time the same parts meet: still deeper than t, it answers at once."""
    lo, hi = y.v.min(0) + t, y.v.max(0) - t
    if np.any(lo > hi):
        return False                                   # y thinner than 2t: no point of it that deep
    key = (id(x.part), id(y.part))
    if seen is not None and key in seen:
        if np.max(y.signed(seen[key] @ x.lin.T + x.t)) > t:
            return True
    tri = x.tri
    while len(tri):
        tri = tri[np.all(tri.max(1) >= lo, 1) & np.all(tri.min(1) <= hi, 1)]
        if not len(tri):
            return False
        if len(tri) > MOST:
            open_count[1] += 1
            return False
        mid = tri.mean(1)
        r = np.linalg.norm(tri - mid[:, None], axis=2).max(1)
        if y.planes is not None:
            h = -(tri @ y.planes[:, :3].T + y.planes[:, 3])           # (N,3,F) depth below each plane
            low = h.min(2).max(1)                                      # the deepest corner's exact depth
            up = h.max(1).min(1)
        else:
            low, up = mesh_bounds(tri, mid, r, y, t)
        if np.any(low > t):
            if seen is not None:
                j = int(np.argmax(low))
                seen[key] = np.linalg.solve(x.lin, (np.concatenate([tri[j], mid[j:j + 1]]) - x.t).T).T
            return True
        still = up > t
        small = still & (r < FINEST)
        open_count[0] += int(small.sum())
        tri = split4(tri[still & ~small])
    return False


def part_verdict(x, y, t, open_count, seen=None):
    """(penetrating, touching) of two placed parts, at least one not convex: touching when their
    surfaces come within t (python-fcl's exact distance of the two triangle trees) or one holds the
    other (a corner of one inside the other); penetrating when a point of either surface lies deeper
    than t inside the other (deeper_than)."""
    import fcl
    if box_gap(x.v, y.v) > t:
        return False, False
    gap = fcl.distance(x.obj, y.obj, fcl.DistanceRequest(), fcl.DistanceResult())
    if gap > t and not (holds(x, y.v[:1]) or holds(y, x.v[:1])):
        return False, False
    return deeper_than(x, y, t, open_count, seen) or deeper_than(y, x, t, open_count, seen), True


def holds(part, points):
    if part.planes is not None:
        return bool(np.all(points @ part.planes[:, :3].T + part.planes[:, 3] <= 0))
    return bool(inside_mesh(points, part.tri).all())


class Film:
    def __init__(self, path):
        z = np.load(path)
        self.names = [str(n) for n in z["names"]]
        self.F = int(z["frames"])
        self.ground, self.static, self.selfp = z["ground"], z["static"], z["self_propelled"]
        self.pieces, self.world, self.meshes, self.hulls = [], [], [], []
        self._parts = {}
        counts = z["meshes"] if "meshes" in z else np.zeros(len(self.names), int)
        for i in range(len(self.names)):
            self.pieces.append([hull_of(z[f"piece{i}_{k}"].astype(float)) for k in range(int(z["pieces"][i]))])
            self.hulls.append([hull3(z[f"piece{i}_{k}"].astype(float)) for k in range(int(z["pieces"][i]))])
            self.meshes.append([(z[f"mesh{i}_{k}_v"].astype(float), z[f"mesh{i}_{k}_f"])
                                for k in range(int(counts[i]))])
            self.world.append(z[f"world{i}"].astype(float))

    def parts(self, i):
        """Body i's convex pieces then its parts that are not convex, as Parts (built once)."""
        if i not in self._parts:
            self._parts[i] = ([Part(v, ConvexHull(v).simplices, eq) for v, eq in self.pieces[i]]
                              + [Part(v, f) for v, f in self.meshes[i]])
        return self._parts[i]

    def at(self, i, f):
        w = self.world[i]
        return w[f if len(w) > 1 else 0]

    def thickness(self, i, f):
        """Least width of the body (all its pieces) as placed at frame f (its scale counts)."""
        m = self.at(i, f)
        lin = m[:3, :3]
        verts = np.concatenate([v for v, _ in self.pieces[i]] + [v for v, _ in self.meshes[i]]) @ lin.T
        return least_width(*hull_of(verts))


def tau(la, lb):
    return max(0.001, min(0.005, 0.5 * min(la, lb)))


def verify(film: Film, with_fcl=False):
    B, F = len(film.names), film.F
    allv = [np.concatenate([v for v, _ in p] + [v for v, _ in m]) for p, m in zip(film.pieces, film.meshes)]
    lo, hi = np.zeros((B, F, 3)), np.zeros((B, F, 3))
    for i in range(B):
        w = film.world[i]
        wv = np.einsum("fij,vj->fvi", w[:, :3, :3], allv[i]) + w[:, None, :3, 3]
        lo[i], hi[i] = wv.min(1), wv.max(1)          # (1,3) for a static body: broadcast below
    scaled = [len(film.world[i]) > 1 and np.ptp(np.linalg.norm(film.world[i][:, :3, :3], axis=1), axis=0).max()
              > 1e-9 for i in range(B)]
    thick0 = [film.thickness(i, 0) for i in range(B)]
    penetrating, touching = set(), set()
    cache, queries = {}, []
    open_count, mesh_queries, axes_seen = [0, 0], 0, {}
    for a in range(B):
        for b in range(a + 1, B):
            if film.static[a] and film.static[b]:
                continue
            t0 = tau(thick0[a], thick0[b])
            margin = 0.0051 if (scaled[a] or scaled[b]) else t0
            near = np.all((lo[a] - margin <= hi[b]) & (lo[b] - margin <= hi[a]), axis=-1)
            near = np.broadcast_to(near, (F,))
            fr = np.nonzero(near)[0]
            if len(fr) == 0:
                continue
            # every near frame's pose at once; each distinct relative pose (bodies at rest: one) measured once
            wa_all = film.world[a][fr if len(film.world[a]) > 1 else np.zeros(len(fr), int)]
            wb_all = film.world[b][fr if len(film.world[b]) > 1 else np.zeros(len(fr), int)]
            rel_all = np.linalg.solve(wa_all, wb_all)        # B in A's frame (A's scale kept in wa)
            keys = np.ascontiguousarray(np.round(np.c_[rel_all[:, :3].reshape(len(fr), -1),
                                                       wa_all[:, :3, :3].reshape(len(fr), -1)], 9))
            rows = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).reshape(-1)
            _, first, inv = np.unique(rows, return_index=True, return_inverse=True)
            verdicts = np.zeros((len(first), 2), bool)
            for u, i in enumerate(first):
                f, wa, rel = int(fr[i]), wa_all[i], rel_all[i]
                key = (a, b, keys[i].tobytes())
                if key not in cache:
                    t = tau(film.thickness(a, f), film.thickness(b, f)) if (scaled[a] or scaled[b]) else t0
                    pen = touch = False
                    lin_a, lin_b, t_b = wa[:3, :3], wa[:3, :3] @ rel[:3, :3], wa[:3, :3] @ rel[:3, 3]

                    def place_a(v):
                        return v @ wa[:3, :3].T

                    def place_b(v):
                        return (v @ rel[:3, :3].T + rel[:3, 3]) @ wa[:3, :3].T
                    for ka, ha in enumerate(film.hulls[a]):
                        for kb, hb in enumerate(film.hulls[b]):
                            pa, pb = place_a(ha[0]), place_b(hb[0])
                            p, q = pair_verdict(pa, pb, ha, (lin_a, np.zeros(3)), hb, (lin_b, t_b), t,
                                                axes_seen, (a, b, ka, kb))
                            pen, touch = pen or p, touch or q
                            queries.append((pa, pb))
                    if film.meshes[a] or film.meshes[b]:
                        xs = [q.at(lin_a, np.zeros(3)) for q in film.parts(a)]
                        ys = [q.at(lin_b, t_b) for q in film.parts(b)]
                        for i_x, x in enumerate(xs):
                            for i_y, y in enumerate(ys):
                                if i_x < len(film.pieces[a]) and i_y < len(film.pieces[b]):
                                    continue                  # two convex pieces: measured above
                                p, q = part_verdict(x, y, t, open_count, axes_seen)
                                pen, touch = pen or p, touch or q
                                mesh_queries += 1
                    cache[key] = (pen, touch)
                verdicts[u] = cache[key]
            hit = verdicts[inv.reshape(-1)]
            penetrating.update((int(f), a, b) for f in fr[hit[:, 0]])
            touching.update((int(f), a, b) for f in fr[hit[:, 1]])
    floating = support(film, touching)
    out = {"penetration": sorted([f, film.names[a], film.names[b]] for f, a, b in penetrating),
           "floating": sorted([f, film.names[i]] for f, i in floating),
           "queries": len(queries), "pair_frames": int(sum(1 for _ in cache)), "mesh_queries": mesh_queries,
           "within_micrometre": open_count[0], "too_many_pieces": open_count[1]}
    if with_fcl:
        out["fcl_seconds"], out["fcl_queries"] = fcl_time(queries)
    return out


def support(film, touching):
    B, F = len(film.names), film.F
    source = film.ground | film.static | film.selfp
    sup = np.tile(source, (F, 1))
    edges = {}
    for f, a, b in touching:
        edges.setdefault(f, []).append((a, b))
    for f, es in edges.items():
        changed = True
        while changed:
            changed = False
            for a, b in es:
                if sup[f, a] != sup[f, b]:
                    sup[f, a] = sup[f, b] = True
                    changed = True
    judged = ~source
    return [(f, i) for f in range(F) for i in np.nonzero(judged & ~sup[f])[0]]


def fcl_time(queries):
    """Seconds python-fcl takes for the same piece-pair queries (signed distance, GJK/EPA)."""
    import fcl
    req = fcl.DistanceRequest(enable_signed_distance=True)
    hulls = {}

    def geom(v):
        k = v.tobytes()
        if k not in hulls:
            h = ConvexHull(v)
            hulls[k] = fcl.Convex(v, len(h.simplices), np.c_[np.full(len(h.simplices), 3), h.simplices].reshape(-1))
        return hulls[k]
    eye = fcl.Transform()
    pairs = [(fcl.CollisionObject(geom(a), eye), fcl.CollisionObject(geom(b), eye)) for a, b in queries]
    t = time.perf_counter()
    for oa, ob in pairs:
        fcl.distance(oa, ob, req, fcl.DistanceResult())
    return time.perf_counter() - t, len(pairs)


def main(argv):
    film = Film(argv[0])
    out = verify(film, "--fcl" in argv)
    with open(argv[1], "w") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
