"""When an event is first met, between frames included.

A contact, grasp or reach may happen between two frames (a fast ball that
touches a domino and is gone by the next frame): the film moves there as
`between.Motion` draws it, and the event is met at the first time its
predicate holds (contact: surface distance <= tau + tolerance; grasp: the
named frame's origin within the tolerance of the body's surface; reach: two
origins within the tolerance). The time is found as the sweep finds contacts:
frame pairs whose proven lower bounds (the two frames, a slope bound, a
convex body's planes) keep the distance above the level are passed over, the
rest halved and measured, left first, to a hundredth of a frame. The frames are
searched up to the first frame that meets it, so the time is the first one.
"""
from __future__ import annotations

import numpy as np

from studio.scene.transforms import from_7

from studio.checks.between import hull_planes, hull_points, motion_of
from studio.checks.contacts import similar_inverse, tau, world_boxes
from studio.checks.footage import Footage
from studio.checks.probe import Probe, earliest, envelope
from studio.checks.shape import Shape
from studio.checks.sweep_bounds import PairMotion, fills_hull, hull_gap, mesh_distance

RESOLUTION_T = 0.01         # frames: how finely an event's first time is located (said to a tenth)


def _pairs_before(film: Footage, idx: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Frame pairs (index of the first frame) inside the window, up to its first hit."""
    stop = idx[np.nonzero(hits)[0][0]] if hits.any() else idx[-1]
    ks = np.arange(idx[0], stop)
    return ks[ks + 1 <= film.n_frames - 1]


def first_contact(film: Footage, a: str, b: str, level: float, idx: np.ndarray, gap: np.ndarray
                  ) -> float | None:
    """The first time (a fractional frame) before the window's first frame hit at which bodies a and b
    come within `level` of each other, or None. gap: their per-frame gap on window frames idx."""
    hits = gap <= level
    ks = _pairs_before(film, idx, hits)
    if len(ks) == 0 or film.n_frames < 2:
        return None
    ia, ib = film.index(a), film.index(b)
    motion = motion_of(film)
    t_ab = tau(film.shapes[ia].thickness, film.shapes[ib].thickness)
    sa, sb = film.shapes[ia], film.shapes[ib]
    # two bodies that fill their hulls: the hulls' gap is theirs but for a sliver and the surface
    # samples, so a measurement proves little more; it is made only where the search needs the answer
    rigid = film.scale is None and ia not in film.skins and ib not in film.skins    # hulls that hold them
    tight = rigid and fills_hull(sa) and fills_hull(sb)
    lows = _contact_lows(film, ia, ib, np.r_[ks, ks[-1] + 1], gap, idx, t_ab, tight, rigid)
    pm = PairMotion(film, motion)
    # frame pairs the box corners' bounds (cheap, looser) keep above the level are passed over; the
    # hulls' bounds are worked out for the rest
    keep = np.arange(len(ks))
    if rigid:
        L1, floor1, h0, h1 = pm.coarse(np.full(len(ks), ia), np.full(len(ks), ib), ks)
        keep = np.nonzero(np.maximum(envelope(np.maximum(lows[:-1], h0), np.maximum(lows[1:], h1), L1), floor1)
                          <= level)[0]
    ks, lows = ks[keep], np.c_[lows[:-1], lows[1:]][keep]
    bound = pm.bound(ia, ib, ks, np.full(len(ks), t_ab), balls=False)
    probe = Probe(film, motion)

    def meets(k: int, t: float, pw: np.ndarray, rel: np.ndarray):
        def ask() -> bool:
            if sample_within(sa, sb, rel[0], level):
                return True
            return bool(probe.at([ia], [ib], [k], [t], [level], pair_w=pw)["r"][0] <= level)
        return ask

    # the search asks only at multiples of its finest stretch: the poses there (and A's pose in B's
    # frame) are drawn at once
    steps = 1 << int(np.ceil(np.log2(1.0 / RESOLUTION_T)))
    grid: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def poses(k: int, t: float) -> tuple[np.ndarray, np.ndarray]:
        i = t * steps
        if abs(i - round(i)) > 1e-9:
            pw = probe.pair_world(np.array([ia]), np.array([ib]), np.array([k]), np.array([t]))
            return pw, similar_inverse(pw[1]) @ pw[0]
        if k not in grid:
            u = np.arange(steps + 1) / steps
            pw = probe.pair_world(np.full(len(u), ia), np.full(len(u), ib), np.full(len(u), k), u)
            grid[k] = (pw, similar_inverse(pw[1]) @ pw[0])
        j = int(round(i))
        return grid[k][0][:, j:j + 1], grid[k][1][j:j + 1]

    def fn(k: int):
        def at(t: float, need: float) -> tuple[float, object]:
            theta = max(need, level)
            pw, rel = poses(k, t)
            hull = float(hull_gap(sa, sb, rel)[0]) if rigid else -np.inf
            if hull > theta:
                return hull, False
            if tight:
                return (hull, False) if hull > level else (hull, meets(k, t, pw, rel))
            floor = plane_floor(film, ia, ib, pw[0], pw[1])      # a hull's planes, where they prove it apart
            if floor > theta:
                return floor, False
            if film.scale is None:
                # the surfaces' distance, which the pair query would take as its bound there anyway
                d = float(mesh_distance(film.shapes[ia], film.shapes[ib], rel)[0])
                if d > theta:
                    return d, False
                if not np.isfinite(theta):          # a query with no threshold proves nothing the one at
                    if d > level:                   # the level does not: that one alone, or the distance
                        return d, False
                    theta = level
            r = probe.at([ia], [ib], [k], [t], [theta], pair_w=pw)
            if r["r"][0] > theta:
                return float(r["low"][0]), False
            if theta > level:
                r = probe.at([ia], [ib], [k], [t], [level], pair_w=pw)
                if r["r"][0] > level:
                    return float(r["low"][0]), False
            return float(r["r"][0]), True
        return at
    near = np.nonzero(np.maximum(envelope(lows[:, 0], lows[:, 1], bound.L), bound.floor) <= level)[0]
    floor = bound.floor.copy()                 # and a round body's floor where the rest did not settle it
    floor[near] = np.maximum(floor[near], pm.ball_floor(ia, ib, ks[near], np.full(len(near), t_ab)))
    for j, k in enumerate(ks):
        la, lb = lows[j]
        if max(float(envelope(la, lb, bound.L[j])), float(floor[j])) > level:
            continue
        t = earliest(fn(int(k)), la, lb, float(bound.L[j]), level, met_b=False, resolution=RESOLUTION_T)
        if t is not None:
            return float(film.frames[k]) + t
    return None


def sample_within(sa: Shape, sb: Shape, rel: np.ndarray, level: float, few: int = 16) -> bool:
    """Whether one of A's surface samples is proven within `level` of B's surface (rel: A-local ->
    B-local, rigid): the pair query would then find the pair within it, since it measures every
    sample that may be exactly (checks.contacts). The few samples nearest B's hull are measured."""
    pts = sa.points @ rel[:3, :3].T + rel[:3, 3]
    planes = hull_planes(sb)
    if planes is not None:
        near = (pts @ planes[0].T - planes[1]).max(axis=1)
    else:
        near = np.linalg.norm(np.maximum(0.0, np.maximum(np.asarray(sb.lo) - pts, pts - np.asarray(sb.hi))), axis=1)
    pick = np.argsort(near)[:few]
    return bool(np.any(sb.surface_distance(pts[pick]) <= level))


def plane_floor(film: Footage, ia: int, ib: int, wa: np.ndarray, wb: np.ndarray) -> float:
    """A proven lower bound of the gap of bodies ia, ib at world poses wa, wb (1,4,4): the best over either
    body's hull planes of the other's lowest hull vertex above it (-inf where neither has planes)."""
    if film.scale is not None:
        return -np.inf
    best = -np.inf
    for this, other, w_this, w_other in ((ia, ib, wa, wb), (ib, ia, wb, wa)):
        planes = hull_planes(film.shapes[other])
        if planes is None:
            continue
        rel = similar_inverse(w_other) @ w_this
        pts = hull_points(film.shapes[this])
        normals, offsets = planes
        best = max(best, float((((pts @ rel[0, :3, :3].T + rel[0, :3, 3]) @ normals.T) - offsets).min(axis=0).max()))
    return best


def _contact_lows(film: Footage, ia: int, ib: int, frames: np.ndarray, gap: np.ndarray, idx: np.ndarray,
                  t_ab: float, tight: bool = False, hulls: bool = True) -> np.ndarray:
    """Proven lower bounds of the pair's gap at frames: above tau where the per-frame gap says so,
    the boxes' distance, and where they are apart the hulls' gap and (unless both bodies fill their
    hulls: tight) the meshes' exact distance; hulls: whether the bodies' hulls hold them (not a skin)."""
    per = dict(zip(idx.tolist(), gap.tolist()))
    w = film.world[[ia, ib]][:, frames]
    lo, hi = world_boxes([film.shapes[ia], film.shapes[ib]], w)
    box = np.linalg.norm(np.maximum(0.0, np.maximum(lo[0] - hi[1], lo[1] - hi[0])), axis=1)
    g = np.array([per.get(int(f), np.inf) for f in frames])
    low = np.where(box > 0, box, np.where(g > t_ab, t_ab, -np.inf))
    apart = np.nonzero((box > 0) | (g > t_ab))[0]
    if len(apart) and film.scale is None:
        rel = similar_inverse(w[1, apart]) @ w[0, apart]
        if hulls:
            low[apart] = np.maximum(low[apart], hull_gap(film.shapes[ia], film.shapes[ib], rel))
        if not tight:
            low[apart] = np.maximum(low[apart], mesh_distance(film.shapes[ia], film.shapes[ib], rel))
    return low


def first_near(film: Footage, a_point: tuple[str, np.ndarray], b: tuple[str, np.ndarray] | str, tol: float,
               idx: np.ndarray, dist: np.ndarray) -> float | None:
    """The first time before the window's first frame hit at which a point (body, local position)
    comes within tol of another point (reach) or of a body's surface (grasp, b a body name)."""
    hits = dist <= tol
    ks = _pairs_before(film, idx, hits)
    if len(ks) == 0 or film.n_frames < 2:
        return None
    motion = motion_of(film)
    body_a, pa = a_point
    Sa, _ = motion.point_rates(body_a, pa[None])
    if isinstance(b, str):
        ib = film.index(b)
        Sb = motion.rates.S[ib]
    else:
        Sb, _ = motion.point_rates(b[0], b[1][None])
    ia = film.index(body_a)
    wanted = [ia, film.index(b if isinstance(b, str) else b[0])]

    def value(k: int, t: float) -> float:
        W = motion.world(np.array([k]), np.array([t]), wanted)[:, 0]
        p = W[ia, :3, :3] @ pa + W[ia, :3, 3]
        if isinstance(b, str):
            wb = W[ib]
            k_b = float(np.cbrt(abs(np.linalg.det(wb[:3, :3]))))
            local = similar_inverse(wb[None])[0] @ np.r_[p, 1.0]
            return float(film.shapes[ib].exact_signed(local[None, :3])[0][0]) * k_b
        j = film.index(b[0])
        q = W[j, :3, :3] @ b[1] + W[j, :3, 3]
        return float(np.linalg.norm(p - q))
    per = dict(zip(idx.tolist(), dist.tolist()))
    for k in ks:
        L = float(Sa[k] + Sb[k])
        la, lb = per.get(int(k), -np.inf), per.get(int(k) + 1, -np.inf)
        if envelope(la, lb, L) > tol:
            continue
        t = earliest(lambda t, need, k=int(k): (lambda v: (v, v <= tol))(value(k, t)), la, lb, L, tol,
                     met_b=False, resolution=RESOLUTION_T)
        if t is not None:
            return float(film.frames[k]) + t
    return None


def named_point(film: Footage, name: str) -> tuple[str, np.ndarray]:
    """(body, local position) of a named frame's origin or a body's origin."""
    for f in film.scene.frames:
        if f.name == name:
            return f.body, from_7(np.asarray(f.local.as_list()))[:3, 3]
    if name in film.names:
        return name, np.zeros(3)
    raise KeyError(f"no named frame or body {name!r}")
