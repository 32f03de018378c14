"""A simple exact verifier for films of convex bodies (and bodies made of convex pieces), written for
the corpus benchmark with no code shared with studio/checks.

Run: .venv/bin/python bench/simple_verifier.py FILM.npz OUT.json [--fcl]
The .npz is the truth bench/corpus_films.py writes beside each .glb. Per body: its convex pieces' hulls
(scipy's Qhull) and its world matrix per frame. Per frame pair of bodies not both static: a broadphase
on world boxes (vectorised over all frames), then for each distinct relative pose (bodies at rest are
measured once) and each pair of pieces the Minkowski difference of the two hulls (Qhull): the origin
inside it means overlap, its depth the origin's distance to the nearest facet (the exact penetration
depth of two convex bodies); outside, the origin's exact distance to the hull (point to facet
triangles). tau = max(1 mm, min(5 mm, half the thinner body's thickness)), thickness the hull's least
width. A pair-frame penetrates when the depth passes tau and touches when the gap is within tau; a
moving body not self-propelled floats when no chain of touching bodies joins it to the ground or a
static body. With --fcl the same queries are also asked of python-fcl (GJK/EPA signed distance) and
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
    """Vertices, facet equations (n·x + o <= 0 inside) and facet triangles of the hull of points."""
    h = ConvexHull(points)
    return points[h.vertices], h.equations, points[h.simplices]


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
    """A hull (vertices, Qhull's facet equations, facet triangles) moved by x -> lin x + t."""
    v, eq, tri = hull
    n = eq[:, :3] @ np.linalg.inv(lin)                 # normals go by the inverse transpose
    size = np.linalg.norm(n, axis=1)
    n = n / size[:, None]
    off = eq[:, 3] / size - n @ t
    return v @ lin.T + t, np.c_[n, off], tri @ lin.T + t


def box_gap(va, vb):
    """Distance between the bounding boxes of two point sets: no more than the distance between them."""
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(va.min(0) - vb.max(0), vb.min(0) - va.max(0)))))


SMALL = 2000       # corners of the Minkowski difference below which the planes are not tried first


def pair_verdict(va, vb, ha, pose_a, hb, pose_b, t):
    """(penetrating: depth past t, touching: gap within t) of two placed convex hulls, exactly: first
    what their facet planes prove (a separation along a facet normal bounds the gap from below, the
    least overlap along them bounds the depth from above, a corner's distance to the facet of the
    other it lies beyond bounds the gap from above); the Minkowski difference (convex_gap) where
    those leave it open (and at once for small hulls, where Qhull is quicker than the planes)."""
    if box_gap(va, vb) > t:
        return False, False                            # boxes apart by more than t: so are the hulls
    if len(va) * len(vb) <= SMALL:                     # a small difference: Qhull answers at once
        gap = convex_gap(va, vb)
        return -gap > t, gap <= t
    (_, ea, ta), (_, eb, tb) = placed(ha, *pose_a), placed(hb, *pose_b)
    axes = np.concatenate([ea[:, :3], eb[:, :3]])
    pa, pb = va @ axes.T, vb @ axes.T
    lo_a, hi_a, lo_b, hi_b = pa.min(0), pa.max(0), pb.min(0), pb.max(0)
    if float(np.max(np.maximum(lo_b - hi_a, lo_a - hi_b))) > t:
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
    gap = convex_gap(va, vb)
    return -gap > t, gap <= t


def triangles_of(part):
    kind, v, f = part
    if kind == "hull":
        return v[ConvexHull(v).simplices]
    return v[f]


def samples_of(tri, n=600):
    """Vertices and points spread over the triangles by area (fixed seed)."""
    rng = np.random.default_rng(3)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    k = rng.choice(len(tri), size=n, p=area / area.sum())
    r1, r2 = rng.random(n), rng.random(n)
    flip = r1 + r2 > 1
    r1, r2 = np.where(flip, 1 - r1, r1), np.where(flip, 1 - r2, r2)
    t = tri[k]
    spread = t[:, 0] + r1[:, None] * (t[:, 1] - t[:, 0]) + r2[:, None] * (t[:, 2] - t[:, 0])
    return np.concatenate([np.unique(tri.reshape(-1, 3), axis=0), spread])     # each corner once


def signed_to(points, tri):
    """Exact signed distance of points to the closed surface of triangles tri (negative inside: winding
    number by the solid angles of the triangles, Van Oosterom and Strackee)."""
    out = np.empty(len(points))
    step = max(1, 20000 // len(tri))
    for i in range(0, len(points), step):
        rel = tri[None] - points[i:i + step, None, None, :]              # (P,T,3,3)
        n = len(rel)
        d = np.sqrt(origin_to_each(rel.reshape(-1, 3, 3)).reshape(n, -1).min(1))
        a, b, c = rel[:, :, 0], rel[:, :, 1], rel[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        num = np.einsum("pti,pti->pt", a, np.cross(b, c))
        den = la * lb * lc + (a * b).sum(2) * lc + (b * c).sum(2) * la + (c * a).sum(2) * lb
        inside = np.abs(np.arctan2(num, den).sum(1)) > np.pi           # winding number 1 (2 pi of 4 pi)
        out[i:i + step] = np.where(inside, -d, d)
    return out


def sampled_gap(x, y):
    """Gap of two parts at least one of which is not convex: the least signed distance of either's
    surface samples to the other (negative: the deepest sample's depth)."""
    tx, ty = triangles_of(x), triangles_of(y)
    return min(float(signed_to(samples_of(tx), ty).min()), float(signed_to(samples_of(ty), tx).min()))


class Film:
    def __init__(self, path):
        z = np.load(path)
        self.names = [str(n) for n in z["names"]]
        self.F = int(z["frames"])
        self.ground, self.static, self.selfp = z["ground"], z["static"], z["self_propelled"]
        self.pieces, self.world, self.meshes, self.hulls = [], [], [], []
        counts = z["meshes"] if "meshes" in z else np.zeros(len(self.names), int)
        for i in range(len(self.names)):
            self.pieces.append([hull_of(z[f"piece{i}_{k}"].astype(float)) for k in range(int(z["pieces"][i]))])
            self.hulls.append([hull3(z[f"piece{i}_{k}"].astype(float)) for k in range(int(z["pieces"][i]))])
            self.meshes.append([(z[f"mesh{i}_{k}_v"].astype(float), z[f"mesh{i}_{k}_f"])
                                for k in range(int(counts[i]))])
            self.world.append(z[f"world{i}"].astype(float))

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
                    for ha in film.hulls[a]:
                        for hb in film.hulls[b]:
                            pa, pb = place_a(ha[0]), place_b(hb[0])
                            p, q = pair_verdict(pa, pb, ha, (lin_a, np.zeros(3)), hb, (lin_b, t_b), t)
                            pen, touch = pen or p, touch or q
                            queries.append((pa, pb))
                    parts_a = [("hull", place_a(v), None) for v, _ in film.pieces[a]]
                    parts_b = [("hull", place_b(v), None) for v, _ in film.pieces[b]]
                    mesh_a = [("mesh", place_a(v), f) for v, f in film.meshes[a]]
                    mesh_b = [("mesh", place_b(v), f) for v, f in film.meshes[b]]
                    gap = np.inf
                    for x in mesh_a:
                        for y in parts_b + mesh_b:
                            if box_gap(x[1], y[1]) <= t:              # parts whose boxes are apart by more
                                gap = min(gap, sampled_gap(x, y))     # than t are apart by more than t
                    for y in mesh_b:
                        for x in parts_a:
                            if box_gap(x[1], y[1]) <= t:
                                gap = min(gap, sampled_gap(x, y))
                    cache[key] = (pen or -gap > t, touch or gap <= t)
                verdicts[u] = cache[key]
            hit = verdicts[inv.reshape(-1)]
            penetrating.update((int(f), a, b) for f in fr[hit[:, 0]])
            touching.update((int(f), a, b) for f in fr[hit[:, 1]])
    floating = support(film, touching)
    out = {"penetration": sorted([f, film.names[a], film.names[b]] for f, a, b in penetrating),
           "floating": sorted([f, film.names[i]] for f, i in floating),
           "queries": len(queries), "pair_frames": int(sum(1 for _ in cache))}
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
