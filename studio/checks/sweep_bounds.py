"""Proven bounds on a pair's gap over a frame pair, from the two frames alone.

- The slope: how fast the gap can change is how fast one body's points move
  in the other's frame. A hull vertex's chord in that frame (exact, from the
  two frames' relative poses) plus half its relative acceleration bound:
  |z''| <= M_A + M_B + (dW_B + W_B^2)·lambda + 2·W_B·|z'| (lambda: how far A's
  points are from B's origin), so |z'| <= (chord + K/2) / (1 - W_B).
- Planes: a body lies behind each face plane of its convex hull, so the gap
  is at least the other body's lowest hull vertex above that plane (a sample
  inside the body is no deeper in it than in its hull; one of the body's inside
  the other puts the other's hull that deep behind the plane; and the convex
  separating depth is at most that overlap); each vertex strays from its chord
  by at most an eighth of its acceleration bound.
- Balls: a body held between two spheres about its centre (a tessellated
  ball, R_in <= |x - c| <= R_out) is at least as far from anything as its
  centre is, less R_out. Its centre's path in the other body's frame keeps
  within a eighth of its acceleration bound of the chord between its frames,
  and that chord's distance to the other's surface is exact (python-fcl,
  segment against the mesh), so a rolling ball is settled by its two frames.
- Distances: two bodies whose surfaces are apart are at least their exact
  mesh distance (python-fcl) apart, sample by sample; a body that fills nine
  tenths of its bounding box is measured by the box, which holds it.
"""
from __future__ import annotations

from dataclasses import dataclass

import fcl
import numpy as np

from studio.checks.between import Motion, farthest, hull_planes, hull_points, lengths
from studio.checks.contacts import similar_inverse
from studio.checks.footage import Footage
from studio.checks.obb import Hull
from studio.checks.shape import Shape

PLANES = 4                  # face planes of a convex body kept as certificates, those facing the other first
_MODELS: dict[str, fcl.BVHModel] = {}
_PROXIES: dict[str, tuple] = {}
_BALLS: dict[str, tuple[np.ndarray, float, float]] = {}
_BOX_PROXIES: dict[str, tuple] = {}


def model(shape: Shape) -> fcl.BVHModel:
    """The shape's mesh as a python-fcl bounding-volume tree (built once per mesh)."""
    m = _MODELS.get(shape.hash)
    if m is None:
        m = fcl.BVHModel()
        v = np.asarray(shape.mesh.vertices, float)
        f = np.asarray(shape.mesh.faces, np.int32)
        m.beginModel(len(v), len(f))
        m.addSubModel(v, f)
        m.endModel()
        _MODELS[shape.hash] = m
    return m


def proxy(shape: Shape) -> tuple[object, np.ndarray]:
    """What python-fcl measures the shape by, and where it sits in the shape's frame: its bounding
    box where the body fills nine tenths of it (a box, which holds the body, measures fast and no
    farther than the body), else its mesh."""
    got = _PROXIES.get(shape.hash)
    if got is None:
        got = (model(shape), np.eye(4))
        extents = np.asarray(shape.hi, float) - np.asarray(shape.lo, float)
        try:
            full = closed_volume(shape.mesh.vertices, shape.mesh.faces) >= 0.9 * float(np.prod(extents)) > 0
        except Exception:       # a degenerate mesh: its mesh it is
            full = False
        if full:
            place = np.eye(4)
            place[:3, 3] = 0.5 * (np.asarray(shape.hi, float) + np.asarray(shape.lo, float))
            got = (fcl.Box(*extents), place)
        _PROXIES[shape.hash] = got
    return got


def closed_volume(vertices, faces) -> float:
    """The volume a triangle surface encloses (by the divergence theorem), or 0 unless it is closed
    and consistently wound (every directed edge met once, and its reverse once)."""
    v, f = np.asarray(vertices, float), np.asarray(faces, np.int64).reshape(-1, 3)
    if len(f) < 4:
        return 0.0
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    n = int(directed.max()) + 1
    code = directed[:, 0] * n + directed[:, 1]
    back = directed[:, 1] * n + directed[:, 0]
    u = np.unique(code)
    if len(u) != len(code) or not np.all(np.isin(back, u)):
        return 0.0
    t = v[f]
    return abs(float(np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum()) / 6.0)


def box_proxy(shape: Shape) -> tuple[object, np.ndarray]:
    """The shape's bounding box as python-fcl measures it, and where it sits in the shape's frame."""
    got = _BOX_PROXIES.get(shape.hash)
    if got is None:
        place = np.eye(4)
        place[:3, 3] = 0.5 * (np.asarray(shape.hi, float) + np.asarray(shape.lo, float))
        got = (fcl.Box(*np.maximum(np.asarray(shape.hi, float) - np.asarray(shape.lo, float), 1e-9)), place)
        _BOX_PROXIES[shape.hash] = got
    return got


def mesh_distance(sa: Shape, sb: Shape, rel: np.ndarray, coarse: bool = False) -> np.ndarray:
    """(Q,) a proven lower bound, exact for meshes, of the distance between the two surfaces for
    relative poses rel (A-local -> B-local, rigid); 0 where they (or their boxes) touch or cross.
    coarse: the body of more vertices is measured by its bounding box, which holds it (fast, and
    never farther than the body)."""
    (ga, pa), (gb, pb) = proxy(sa), proxy(sb)
    if coarse:
        if len(sa.mesh.vertices) >= len(sb.mesh.vertices):
            ga, pa = box_proxy(sa)
        else:
            gb, pb = box_proxy(sb)
    oa = fcl.CollisionObject(ga, fcl.Transform())
    ob = fcl.CollisionObject(gb, fcl.Transform(pb[:3, :3], pb[:3, 3]))
    out = np.zeros(len(rel))
    place = rel @ pa
    for q in range(len(rel)):
        oa.setTransform(fcl.Transform(place[q, :3, :3], place[q, :3, 3]))
        d = fcl.distance(oa, ob, fcl.DistanceRequest(), fcl.DistanceResult())
        out[q] = max(float(d), 0.0)
    return out


def segment_distance(sb: Shape, p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """(Q,) exact distance from each segment p0..p1 (B-local) to B's surface; 0 where it touches it."""
    ob = fcl.CollisionObject(model(sb), fcl.Transform())
    out = np.zeros(len(p0))
    d = p1 - p0
    length = np.linalg.norm(d, axis=1)
    z = np.where(length[:, None] > 1e-12, d / np.maximum(length, 1e-300)[:, None], [0.0, 0.0, 1.0])
    x = np.cross(z, np.where(np.abs(z[:, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    rot = np.stack([x, np.cross(z, x), z], axis=2)               # columns x, y, z: the capsule along z
    mid = 0.5 * (p0 + p1)
    request = fcl.DistanceRequest()
    for q in range(len(p0)):
        seg = fcl.CollisionObject(fcl.Capsule(0.0, float(length[q])), fcl.Transform(rot[q], mid[q]))
        out[q] = max(float(fcl.distance(seg, ob, request, fcl.DistanceResult())), 0.0)
    return out


_CONVEX: dict[str, object] = {}
_GJK = fcl.DistanceRequest(enable_nearest_points=True, enable_signed_distance=True,
                           gjk_solver_type=fcl.GJKSolverType.GST_INDEP)


def convex_model(shape: Shape):
    """The convex hull of the shape's hull points as a python-fcl convex shape (None where it has none)."""
    got = _CONVEX.get(shape.hash, False)
    if got is False:
        try:
            hull = Hull(hull_points(shape))
            faces = np.c_[np.full(len(hull.faces), 3), hull.faces].astype(np.int64).ravel()
            got = fcl.Convex(np.asarray(hull.vertices, float), len(hull.faces), faces)
        except Exception:       # flat or degenerate: no hull
            got = None
        _CONVEX[shape.hash] = got
    return got


_FILLS: dict[str, bool] = {}


def fills_hull(shape: Shape, share: float = 0.99) -> bool:
    """Whether the body fills `share` of its hull's volume (a closed mesh; none does that is flat):
    its hull's distance to anything is then its own but for a sliver."""
    got = _FILLS.get(shape.hash)
    if got is None:
        try:
            hull = Hull(hull_points(shape)).volume
            got = bool(hull > 0 and closed_volume(shape.mesh.vertices, shape.mesh.faces) >= share * hull)
        except Exception:       # flat or degenerate
            got = False
        _FILLS[shape.hash] = got
    return got


_MIDDLES: dict[str, np.ndarray] = {}


def hull_middle(shape: Shape) -> np.ndarray:
    """(3,) the mean of the shape's hull points (kept per shape)."""
    got = _MIDDLES.get(shape.hash)
    if got is None:
        got = _MIDDLES[shape.hash] = hull_points(shape).mean(axis=0)
    return got


def _convex_objects(sa: Shape, sb: Shape):
    """python-fcl objects of the two hulls (None where a body has none), kept per shape and side: the
    first is placed for each query, the second stays at B's origin."""
    got = []
    for side, shape in ((0, sa), (1, sb)):
        key = (shape.hash, side)
        obj = _CONVEX_OBJECTS.get(key, False)
        if obj is False:
            c = convex_model(shape)
            obj = _CONVEX_OBJECTS[key] = None if c is None else fcl.CollisionObject(c, fcl.Transform())
        got.append(obj)
    return got


_CONVEX_OBJECTS: dict[tuple[str, int], object] = {}


def hull_gap(sa: Shape, sb: Shape, rel: np.ndarray, high: bool = False):
    """(Q,) a proven lower bound of the pair's gap at relative poses rel (A-local -> B-local, rigid),
    tight for bodies that fill their hulls: their separation along one axis n, min over A's hull
    points of n·x less max over B's of n·x. Any axis bounds the gap from below (apart along n, every
    point of A is that far from B; overlapping, moving A that far along n parts them, and no sample
    is deeper in the other body, nor is a convex pair's separating depth larger than that move). The
    axes tried are those of python-fcl's GJK/EPA between the two hulls (their nearest points, both
    ways round) and the line between the hulls' middles; the figure is taken from the points
    themselves, so it holds whatever the solver's tolerance. -inf where a body has no hull.
    high: also (Q,) how far apart the surfaces are at most where the hulls are apart (the nearest
    points' distance plus each one's distance to its body's surface; inf elsewhere): what a
    measurement there could prove at best."""
    Q = len(rel)
    oa, ob = _convex_objects(sa, sb) if Q else (None, None)
    if Q == 0 or oa is None or ob is None:
        return (np.full(Q, -np.inf), np.full(Q, np.inf)) if high else np.full(Q, -np.inf)
    pa, pb = hull_points(sa), hull_points(sb)
    axes = np.empty((Q, 2, 3))
    axes[:, 1] = rel[:, :3, :3] @ hull_middle(sa) + rel[:, :3, 3] - hull_middle(sb)
    near = np.empty((Q, 2, 3))
    for q in range(Q):
        oa.setTransform(fcl.Transform(rel[q, :3, :3], rel[q, :3, 3]))
        res = fcl.DistanceResult()
        fcl.distance(oa, ob, _GJK, res)
        near[q] = res.nearest_points
    axes[:, 0] = near[:, 0] - near[:, 1]
    size = lengths(axes)[..., None]
    axes = np.where(size > 1e-12, axes / np.maximum(size, 1e-300), np.array([0.0, 0.0, 1.0]))   # (Q,2,3) in B's frame
    # each axis both ways round: along -n, A's lowest point is minus its highest along n, B's highest
    # minus its lowest
    on_a = (axes @ rel[:, :3, :3]) @ pa.T                                         # (Q,2,V) A's points along n
    on_b = axes @ pb.T
    lift = np.einsum("qki,qi->qk", axes, rel[:, :3, 3])
    low = np.maximum((on_a.min(axis=2) + lift - on_b.max(axis=2)).max(axis=1),
                     (-(on_a.max(axis=2) + lift) + on_b.min(axis=2)).max(axis=1))
    if not high:
        return low
    up = np.full(Q, np.inf)
    apart = np.nonzero(low > 0)[0]
    if len(apart):
        in_a = np.einsum("qji,qj->qi", rel[apart, :3, :3], near[apart, 0] - rel[apart, :3, 3])   # A-local
        up[apart] = lengths(near[apart, 0] - near[apart, 1]) + sa.surface_distance(in_a) + \
            sb.surface_distance(near[apart, 1])
    return low, up


_BOXES: dict[str, np.ndarray] = {}


def box_corners(shape: Shape) -> np.ndarray:
    """(8,3) the corners of the shape's local bounding box, which holds its hull."""
    got = _BOXES.get(shape.hash)
    if got is None:
        lo, hi = np.asarray(shape.lo, float), np.asarray(shape.hi, float)
        got = np.array([[(hi if (i >> j) & 1 else lo)[j] for j in range(3)] for i in range(8)], float)
        _BOXES[shape.hash] = got
    return got


def ball(shape: Shape) -> tuple[np.ndarray, float, float]:
    """(centre, R_in, R_out): the body lies within R_out of its centre and holds the ball of R_in
    (R_in 0 when the centre is not inside it)."""
    got = _BALLS.get(shape.hash)
    if got is None:
        c = np.asarray(shape.centroid, float)
        r_out = float(np.max(np.linalg.norm(np.asarray(shape.mesh.vertices, float) - c, axis=1)))
        d = float(shape.exact_signed(c[None])[0][0])         # negative inside
        r_in = -d if d < 0 else 0.0
        got = (c, r_in, r_out)
        _BALLS[shape.hash] = got
    return got


def inside(triangles: np.ndarray, p: np.ndarray) -> bool:
    """Whether point p is inside a closed triangle mesh: its winding number (the solid angle the
    triangles subtend at p, over 4 pi) is 1 inside and 0 outside."""
    a, b, c = triangles[:, 0] - p, triangles[:, 1] - p, triangles[:, 2] - p
    la, lb, lc = (np.linalg.norm(v, axis=1) for v in (a, b, c))
    num = np.einsum("ij,ij->i", a, np.cross(b, c))
    den = la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", b, c) * la + \
        np.einsum("ij,ij->i", c, a) * lb
    return bool(np.sum(np.arctan2(num, den)) / (2.0 * np.pi) > 0.5)


@dataclass
class PairBounds:
    """Bounds of a pair over frame pairs (arrays over them): the gap's slope L, a floor under the gap
    over the whole frame pair, and the face planes that give it, kept to bound parts of the pair."""

    L: np.ndarray                 # (n,)
    floor: np.ndarray             # (n,) -inf where nothing gives one
    side: np.ndarray              # (n,) -1: no convex body; 0: the first body's hull under the second's planes; 1: reverse
    normals: np.ndarray           # (n,k,3) the convex body's planes (its frame)
    offsets: np.ndarray           # (n,k)
    stray: np.ndarray             # (n,) acceleration bound of the hull in the convex body's frame
    h0: np.ndarray                # (n,k) lowest hull vertex above each plane at the first frame
    h1: np.ndarray                # (n,k) and at the second


class PairMotion:
    """Relative motion of pairs of bodies over frame pairs."""

    def __init__(self, film: Footage, motion: Motion):
        self.film, self.motion = film, motion

    def bound(self, a, b, ks: np.ndarray, taus: np.ndarray, balls: bool = True) -> PairBounds:
        """Bounds over frame pairs ks of bodies a, b (taus: each frame pair's tau); balls: with the
        round bodies' floor (`ball_floor`, which may be added later where the rest did not settle).
        Without it, a and b may be arrays as long as ks (several pairs at once, of any shapes: what
        depends on a shape is worked out for each of its groups)."""
        film, R = self.film, self.motion.rates
        n = len(ks)
        both = R.speed(a, ks) + R.speed(b, ks)          # the two bodies' speeds: the slope's first bound
        out = PairBounds(both, np.full(n, -np.inf), np.full(n, -1), np.zeros((n, PLANES, 3)),
                         np.zeros((n, PLANES)), np.zeros(n), np.full((n, PLANES), -np.inf),
                         np.full((n, PLANES), -np.inf))
        if film.scale is not None or n == 0:
            return out
        w = film.world
        t0 = similar_inverse(w[b, ks]) @ w[a, ks]                   # A-local -> B-local at frame k
        t1 = similar_inverse(w[b, ks + 1]) @ w[a, ks + 1]
        a, b = np.broadcast_to(a, (n,)), np.broadcast_to(b, (n,))
        best = np.full(n, -np.inf)
        for side, (this, other, r0, r1) in enumerate(((a, b, t0, t1), (b, a, similar_inverse(t0), similar_inverse(t1)))):
            L_rel, acc = np.empty(n), np.empty(n)
            for sel in by_shapes(film, this):
                L_rel[sel], acc[sel] = self._relative(this[sel], other[sel], ks[sel], hull_points(film.shapes[this[sel[0]]]),
                                                      r0[sel], r1[sel], both[sel])
            out.L = np.minimum(out.L, L_rel)
            for sel in by_shapes(film, this, other):
                shape = film.shapes[this[sel[0]]]
                planes = hull_planes(film.shapes[other[sel[0]]])
                if planes is None:
                    continue
                pts = hull_points(shape)
                nrm, off = _facing(planes, r0[sel, :3, :3] @ hull_middle(shape) + r0[sel, :3, 3])
                h0, h1 = heights(pts, r0[sel], nrm, off), heights(pts, r1[sel], nrm, off)
                value = np.minimum(h0, h1).max(axis=1) - acc[sel] / 8.0
                take = value > best[sel]
                at = sel[take]
                best[at] = value[take]
                out.side[at] = side
                out.normals[at], out.offsets[at], out.stray[at] = nrm[take], off[take], acc[at]
                out.h0[at], out.h1[at] = h0[take], h1[take]
        out.floor = np.maximum(out.floor, best)
        if balls:
            out.floor = np.maximum(out.floor, self.ball_floor(a, b, ks, taus, t0, t1))
        return out

    def ball_floor(self, a, b, ks: np.ndarray, taus: np.ndarray, t0: np.ndarray | None = None,
                   t1: np.ndarray | None = None, apart: np.ndarray | None = None) -> np.ndarray:
        """(n,) the round bodies' floor under the pair's gap over frame pairs ks (-inf where neither
        body is round within the least of taus); t0, t1: A-local -> B-local at the two frames, if
        known; apart: where the two are known apart at the first frame (a round body's centre, inside
        it, is then outside the other). a and b may be arrays as long as ks, of bodies of one shape
        each (several pairs at once)."""
        film = self.film
        out = np.full(len(ks), -np.inf)
        if film.scale is not None or len(ks) == 0:
            return out
        least = float(np.min(taus))
        round_ = []                 # the sides whose body is round within tau
        for side, body in enumerate((a, b)):
            _, r_in, r_out = ball(film.shapes[int(np.ravel(body)[0])])
            if r_out - r_in < least:
                round_.append(side)
        if not round_:              # neither is: no floor
            return out
        if t0 is None:
            w = film.world
            t0 = similar_inverse(w[b, ks]) @ w[a, ks]
            t1 = similar_inverse(w[b, ks + 1]) @ w[a, ks + 1]
        a, b = np.broadcast_to(a, (len(ks),)), np.broadcast_to(b, (len(ks),))
        for side in round_:
            this, other = (a, b) if side == 0 else (b, a)
            r0, r1 = (t0, t1) if side == 0 else (similar_inverse(t0), similar_inverse(t1))
            c, r_in, r_out = ball(film.shapes[this[0]])
            out = np.maximum(out, self._ball_floor(this, other, ks, r0, r1, c, r_out,
                                                   None if apart is None or r_in <= 0 else apart))
        return out
    def coarse(self, a: np.ndarray, b: np.ndarray, ks: np.ndarray) -> tuple[np.ndarray, ...]:
        """Looser bounds than `bound`, cheap, for many pairs at once (bodies a, b, frame pairs ks, arrays
        of one length): each body stands for its box's 8 corners (the box holds the hull, so every bound
        still holds) and no ball bound. The slope L, the planes' floor, and at either frame the lowest
        corner above the best plane (h0, h1: the gap's bound there)."""
        film, R = self.film, self.motion.rates
        n = len(ks)
        L = both = R.speed(a, ks) + R.speed(b, ks)
        floor, h0, h1 = np.full(n, -np.inf), np.full(n, -np.inf), np.full(n, -np.inf)
        if film.scale is not None or n == 0:
            return L, floor, h0, h1
        w = film.world
        t0 = similar_inverse(w[b, ks]) @ w[a, ks]
        t1 = similar_inverse(w[b, ks + 1]) @ w[a, ks + 1]
        corners = np.stack([box_corners(sh) for sh in film.shapes])                 # (B,8,3)
        for this, other, r0, r1 in ((a, b, t0, t1), (b, a, similar_inverse(t0), similar_inverse(t1))):
            pts = corners[this]
            p0 = pts @ r0[:, :3, :3].transpose(0, 2, 1) + r0[:, None, :3, 3]    # (n,8,3) in other's frame
            p1 = pts @ r1[:, :3, :3].transpose(0, 2, 1) + r1[:, None, :3, 3]
            chord = lengths(p1 - p0).max(axis=1)
            reach = np.maximum(lengths(p0).max(axis=1), lengths(p1).max(axis=1))
            lam = reach + 0.5 * both
            Wo = R.W[other, ks]
            K = R.M[this, ks] + R.M[other, ks] + (R.dW[other, ks] + Wo ** 2) * lam
            with np.errstate(divide="ignore", invalid="ignore"):
                speed = np.where(Wo < 1.0, (chord + 0.5 * K) / np.maximum(1.0 - Wo, 1e-300), np.inf)
            acc = K + 2.0 * Wo * speed
            L = np.minimum(L, speed)
            for at in by_shapes(film, other):         # the other bodies' planes, shape by shape
                planes = hull_planes(film.shapes[other[at[0]]])
                if planes is None:
                    continue
                nrm, off = _facing(planes, p0[at].mean(axis=1))                 # (m,k,3), (m,k)
                e0 = (nrm @ p0[at].transpose(0, 2, 1)).min(axis=2) - off          # lowest corner above
                e1 = (nrm @ p1[at].transpose(0, 2, 1)).min(axis=2) - off          # each plane, per frame
                floor[at] = np.maximum(floor[at], np.minimum(e0, e1).max(axis=1) - acc[at] / 8.0)
                h0[at], h1[at] = np.maximum(h0[at], e0.max(axis=1)), np.maximum(h1[at], e1.max(axis=1))
        return L, floor, h0, h1

    def _relative(self, this: int, other: int, ks: np.ndarray, pts: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                  both: np.ndarray):
        """Speed and acceleration bounds of this body's hull points in the other's frame (relative poses
        r0, r1 at the two frames; both: the two bodies' speeds, summed)."""
        R = self.motion.rates
        n = len(ks)
        got = farthest(pts, np.concatenate([r1[:, :3, :3] - r0[:, :3, :3], r0[:, :3, :3], r1[:, :3, :3]]),
                       np.concatenate([r1[:, :3, 3] - r0[:, :3, 3], r0[:, :3, 3], r1[:, :3, 3]]))    # in one product
        chord, reach = got[:n], np.maximum(got[n:2 * n], got[2 * n:])
        lam = reach + 0.5 * both
        Wo = R.W[other, ks]
        K = R.M[this, ks] + R.M[other, ks] + (R.dW[other, ks] + Wo ** 2) * lam
        with np.errstate(divide="ignore", invalid="ignore"):
            speed = np.where(Wo < 1.0, (chord + 0.5 * K) / np.maximum(1.0 - Wo, 1e-300), np.inf)
        return speed, K + 2.0 * Wo * speed

    def _ball_floor(self, this: np.ndarray, other: np.ndarray, ks: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                    c: np.ndarray, r_out: float, outside: np.ndarray | None = None) -> np.ndarray:
        film = self.film
        c0 = r0[:, :3, :3] @ c + r0[:, :3, 3]
        c1 = r1[:, :3, :3] @ c + r1[:, :3, 3]
        S, M = np.empty(len(ks)), np.empty(len(ks))
        for body in np.unique(this):                  # the centre's rates, body by body
            at = np.nonzero(this == body)[0]
            S_b, M_b = self.motion.point_rates(film.names[body], c[None])
            S[at], M[at] = S_b[ks[at]], M_b[ks[at]]
        R = self.motion.rates
        lam = np.maximum(np.linalg.norm(c0, axis=1), np.linalg.norm(c1, axis=1)) + 0.5 * (S + R.speed(other, ks))
        Wo = R.W[other, ks]
        K = M + R.M[other, ks] + (R.dW[other, ks] + Wo ** 2) * lam
        with np.errstate(divide="ignore", invalid="ignore"):
            speed = np.where(Wo < 1.0, (np.linalg.norm(c1 - c0, axis=1) + 0.5 * K) / np.maximum(1.0 - Wo, 1e-300),
                             np.inf)
        stray = (K + 2.0 * Wo * speed) / 8.0
        d = segment_distance(film.shapes[other[0]], c0, c1)
        out = np.full(len(ks), -np.inf)
        at = np.nonzero((d > 0) & np.isfinite(stray))[0]
        if len(at):
            known = np.zeros(len(at), bool) if outside is None else np.asarray(outside, bool)[at]
            known[~known] = self._outside_of(int(other[0]), c0[at[~known]])
            out[at[known]] = d[at[known]] - stray[at[known]] - r_out
        return out

    def _outside_of(self, other: int, points: np.ndarray) -> np.ndarray:
        """(n,) whether local points of the other body lie outside it: by its face planes if it is
        convex, by its distance grid's proven interval where that is above zero, else by the winding
        number of its triangles."""
        shape = self.film.shapes[other]
        if shape.planes is not None:
            normals, offsets = shape.planes
            return (points @ normals.T - offsets).max(axis=1) > 0
        out = np.zeros(len(points), bool)
        if shape.grid is not None:
            out = shape.proven(points)[0] > 0
        triangles = None
        for i in np.nonzero(~out)[0]:
            if triangles is None:
                triangles = np.asarray(shape.mesh.triangles, float)
            out[i] = not inside(triangles, points[i])
        return out


def by_shapes(film: Footage, *bodies: np.ndarray) -> list[np.ndarray]:
    """Indices of the entries of body arrays (one length) grouped by their bodies' shapes (all of them
    alike within a group), in order within each group."""
    if len(bodies[0]) == 0:
        return []
    code: dict[str, int] = {}
    ids = np.array([code.setdefault(sh.hash, len(code)) for sh in film.shapes])
    key = np.zeros(len(bodies[0]), np.int64)
    for body in bodies:
        key = key * len(code) + ids[body]
    order = np.argsort(key, kind="stable")
    cuts = np.nonzero(np.diff(key[order]))[0] + 1
    return np.split(order, cuts)


def _facing(planes, middle: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The PLANES face planes of a hull that a body whose points' middle is at `middle` (n,3) stands
    farthest above (the separating planes, if any): (n,k,3), (n,k)."""
    normals, offsets = planes
    above = middle @ normals.T - offsets                             # (n,P)
    if above.shape[1] > PLANES:
        pick = np.argpartition(-above, PLANES - 1, axis=1)[:, :PLANES]    # (n,k)
    else:
        pick = np.argsort(-above, axis=1)[:, :PLANES]
    nrm, off = normals[pick], offsets[pick]
    if nrm.shape[1] < PLANES:                                        # fewer planes than slots: repeat the first
        extra = PLANES - nrm.shape[1]
        nrm = np.concatenate([nrm, np.repeat(nrm[:, :1], extra, axis=1)], axis=1)
        off = np.concatenate([off, np.repeat(off[:, :1], extra, axis=1)], axis=1)
    return nrm, off


def heights(pts: np.ndarray, rel: np.ndarray, normals: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(n,k) the lowest of local points pts (V,3), placed by rel (n,4,4), above each plane (n,k):
    n.(R a + t) - o = (R^T n).a + n.t - o, one product for all."""
    local = normals @ rel[:, :3, :3]                                          # (n,k,3) normals in pts' frame
    lift = np.einsum("nkj,nj->nk", normals, rel[:, :3, 3]) - offsets          # (n,k)
    n, k = lift.shape
    flat = local.reshape(n * k, 3)
    step = max(1, (1 << 22) // max(len(pts), 1))                              # bounded memory
    low = np.concatenate([(flat[i:i + step] @ pts.T).min(axis=1) for i in range(0, n * k, step)]) if n else \
        np.zeros(0)                                                           # (each plane's row reduced whole)
    return low.reshape(n, k) + lift
