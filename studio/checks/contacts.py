"""Per-frame contact between pairs of rigid bodies: how deep they overlap or how far apart they are.

The work is split so that a one-minute film costs seconds:
1. broadphase: every body's world bounding box at every frame at once (a body
   that never moves boxed once), pairs whose boxes over the whole film never
   meet dropped, and the pair-frames whose boxes come within a margin (tau);
2. identical relative poses are measured once: a pair at rest, carried, or
   re-verified after an edit elsewhere costs a dictionary look-up
   (`ContactCache`, keyed by the two meshes' content hashes and the pose);
3. narrowphase on what is left: one body's surface samples, cluster by
   cluster, are bounded in the other body, both ways: by its face planes if
   it is convex (exact inside, a proven lower bound outside), otherwise by
   its signed-distance grid; a cluster is passed over only on a proven bound;
4. the grid holds exact distances at its corners, so each sample's distance
   lies in a proven interval (distance is 1-Lipschitz); every sample whose
   interval reaches below -tau is measured exactly (inside a convex body by
   its face planes, otherwise on the mesh), with no budget: no sample deeper
   than tau is missed and its depth is exact. Near +tau likewise: where no
   bound proves a pair touching (gap <= tau) or apart, samples are measured
   exactly (outside a convex body: the plane distance where the sample's foot
   lies on the body, else the mesh), so both verdicts are exact. Other
   samples report the grid's estimate held within their interval;
5. two convex polytopes of few face and edge directions (boxes, cards,
   prisms) skip the samples: their face normals and the cross products of
   their edges hold every facet of the Minkowski difference, so the least
   overlap over those axes, all frames at once, is the exact penetration
   depth, and apart the largest separation a proven lower bound, measured
   exactly (a vertex's foot on a face, else the Minkowski difference) where
   it does not pass tau (`convex_pair`); convex bodies of many faces take
   only the edge pairs whose arcs cross on the Gauss map (`convex_gauss`)
   where a face axis shows them perhaps deeper than tau;
6. a sample lies at most half a body's thickness inside it, so for two
   convex bodies whose samples overlap by no more than tau the exact
   separating depth is taken (bounded first along the contact direction
   and the face normals, then the Minkowski difference where a bound passes
   tau): thin cards overlapping past tau count.

Bodies may be scaled uniformly per frame (animated glTF scale): the world
matrices are then similarities, grid distances scale exactly with the body,
and tau follows the thickness at each frame.

`gap` is the signed surface distance of a pair (negative: interpenetration
depth: the deepest sample's distance inside the other body, or the separating
depth of steps 5 and 6 where that is larger). The separating axis is a unit world vector that pushes A out of B
by `-gap`; the contact point is the deepest sample (two polytopes measured on their axes: the vertex
of A deepest along the axis), in world coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.checks.shape import FEW_PLANES, Shape



def tau(la: float, lb: float) -> float:
    """The public scorer's threshold: max(1 mm, min(5 mm, half the thinner body's thickness))."""
    t = np.maximum(0.001, np.minimum(0.005, 0.5 * np.minimum(la, lb)))
    return float(t) if np.ndim(t) == 0 else t


@dataclass
class Contacts:
    """Measured pair-frames (only those the broadphase kept)."""

    frame: np.ndarray      # (K,) frame index into the evaluated frames
    pair: np.ndarray       # (K,) pair index
    gap: np.ndarray        # (K,) signed surface distance, metres (negative: depth)
    axis: np.ndarray       # (K,3) unit world vector pushing A out of B
    point: np.ndarray      # (K,3) world contact point


class ContactCache:
    """Measured relative poses, reused across runs (edits elsewhere, bodies at rest)."""

    def __init__(self) -> None:
        self.results: dict[tuple, tuple] = {}

    def __len__(self) -> int:
        return len(self.results)


def world_boxes(shapes: list[Shape], world: np.ndarray, forms: dict | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """World bounding boxes (B,F,3) min and max of every body at every frame; world is (B,F,4,4).
    A body with several forms (forms[b] = (shapes, which frame has which)) is boxed by their union."""
    lo = np.stack([s.lo for s in shapes])
    hi = np.stack([s.hi for s in shapes])
    for b, (variants, _) in (forms or {}).items():
        lo[b] = np.min([v.lo for v in variants], axis=0)
        hi[b] = np.max([v.hi for v in variants], axis=0)
    corners = np.stack([np.where(np.array([(i >> k) & 1 for k in range(3)], bool), hi, lo)
                        for i in range(8)], axis=1)                      # (B,8,3)
    B, F = world.shape[:2]
    out_lo, out_hi = np.empty((B, F, 3)), np.empty((B, F, 3))
    still = np.all(world == world[:, :1], axis=(1, 2, 3)) if F else np.zeros(B, bool)
    for group, frames in ((np.nonzero(still)[0], slice(0, 1)), (np.nonzero(~still)[0], slice(None))):
        if len(group):                          # a body that never moves is boxed once
            w = world[group, frames]
            wc = np.einsum("bfij,bcj->bfci", w[..., :3, :3], corners[group]) + w[:, :, None, :3, 3]
            out_lo[group], out_hi[group] = wc.min(axis=2), wc.max(axis=2)
    return out_lo, out_hi


def broadphase(lo: np.ndarray, hi: np.ndarray, pairs: np.ndarray, margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(frame, pair) indices whose boxes come within `margin` (per pair) of each other."""
    if len(pairs) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = pairs[:, 0], pairs[:, 1]
    film_lo, film_hi = lo.min(axis=1), hi.max(axis=1)                  # each body's box over the whole film
    ever = np.nonzero(np.all((film_lo[a] - margin[:, None] <= film_hi[b])
                             & (film_lo[b] - margin[:, None] <= film_hi[a]), axis=1))[0]
    a, b = a[ever], b[ever]                    # only pairs whose film-long boxes meet are tested frame by frame
    m = margin[ever, None, None]
    hit = np.all((lo[a] - m <= hi[b]) & (lo[b] - m <= hi[a]), axis=-1)   # (P',F)
    p, f = np.nonzero(hit)
    return f, ever[p]


def similar_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of similarity transforms (rotation times a uniform scale, then a translation)."""
    m = np.asarray(m, float)
    out = np.empty(m.shape)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, m[..., :3, 3])
    out[..., 3, :3] = 0.0
    out[..., 3, 3] = 1.0
    c = m[..., :3, 0]
    if np.any(np.abs(c[..., 0] ** 2 + c[..., 1] ** 2 + c[..., 2] ** 2 - 1.0) > 1e-12):   # scaled: by k^2
        out[..., :3, :4] = out[..., :3, :4] / (c[..., 0] ** 2 + c[..., 1] ** 2 + c[..., 2] ** 2)[..., None, None]
    return out


def measure(shapes: list[Shape], world: np.ndarray, pairs: np.ndarray, taus: np.ndarray,
            margins: np.ndarray, cache: ContactCache | None = None, scale: np.ndarray | None = None,
            forms: dict | None = None, boxes: tuple[np.ndarray, np.ndarray] | None = None) -> Contacts:
    """Gap, axis and point of every (frame, pair) the broadphase keeps.

    world may scale a body uniformly (scale (B,F), its factor per frame): distances in its
    grid scale exactly, and tau then follows the thickness at that frame. A body whose shape
    changes has forms[b] = (shapes, (F,) index of the shape at each frame). boxes: world_boxes of
    these shapes and world, if already made."""
    cache = cache if cache is not None else ContactCache()
    forms = forms or {}
    lo, hi = world_boxes(shapes, world, forms) if boxes is None else boxes
    F = world.shape[1]
    k = np.ones((len(shapes), F)) if scale is None else np.asarray(scale, float)[:, :F]
    wide = margins.copy()
    if (scale is not None or forms) and len(pairs):
        th = np.array([max([s.thickness] + [v.thickness for v in forms.get(b, ([], None))[0]])
                       for b, s in enumerate(shapes)]) * k.max(axis=1)
        wide = margins + np.maximum(0.0, tau(th[pairs[:, 0]], th[pairs[:, 1]]) - taus)
    f_all, p_all = broadphase(lo, hi, pairs, wide)
    K = len(f_all)
    gap, axis, point = np.zeros(K), np.zeros((K, 3)), np.zeros((K, 3))
    order = np.argsort(p_all, kind="stable")
    f_all, p_all = f_all[order], p_all[order]
    bounds = np.searchsorted(p_all, np.arange(len(pairs) + 1))
    for p in range(len(pairs)):
        if bounds[p] == bounds[p + 1]:
            continue
        a, b = pairs[p]
        at = np.arange(bounds[p], bounds[p + 1])
        frames = f_all[at]
        va = forms[a][1][frames] if a in forms else np.zeros(len(frames), np.int64)
        vb = forms[b][1][frames] if b in forms else np.zeros(len(frames), np.int64)
        for ua, ub in set(zip(va.tolist(), vb.tolist())):
            sel = (va == ua) & (vb == ub)
            sa = forms[a][0][ua] if a in forms else shapes[a]
            sb = forms[b][0][ub] if b in forms else shapes[b]
            fr = frames[sel]
            gap[at[sel]], axis[at[sel]], point[at[sel]] = _pair_frames(
                sa, sb, world[a, fr], world[b, fr], k[a, fr], k[b, fr], float(taus[p]), float(margins[p]), cache)
    return Contacts(f_all, p_all, gap, axis, point)


def _pair_frames(sa: Shape, sb: Shape, wa: np.ndarray, wb: np.ndarray, ka: np.ndarray, kb: np.ndarray,
                 tau_p: float, margin_p: float, cache: ContactCache):
    """Gap, world axis and world point of one pair of shapes at several frames; each distinct
    relative pose (and scale) is measured once, then kept in the cache."""
    rel = similar_inverse(wb) @ wa                                       # A-local -> B-local
    tau_q = tau(sa.thickness * ka, sb.thickness * kb)
    margin_q = margin_p + (tau_q - tau_p)
    key = np.round(np.c_[rel[:, :3, :4].reshape(-1, 12), ka, kb] * 1e7).astype(np.int64)
    run = np.r_[0, np.cumsum(np.any(key[1:] != key[:-1], axis=1))]      # frames in a row at one pose: one run
    heads = np.nonzero(np.r_[True, run[1:] != run[:-1]])[0]
    uniq, first, inv = np.unique(key[heads], axis=0, return_index=True, return_inverse=True)
    first, inv = heads[first], inv.reshape(-1)[run]
    tag = (sa.hash, sb.hash, round(tau_p * 1e7), round(margin_p * 1e7))
    res = np.zeros((len(uniq), 7))
    todo = []
    for u in range(len(uniq)):
        hit = cache.results.get(tag + (uniq[u].tobytes(),))
        if hit is None:
            todo.append(u)
        else:
            res[u] = hit
    if todo:
        todo = np.asarray(todo)
        q = first[todo]
        g, ax, pt = pair_query(sa, sb, rel[q], tau_q[q], margin_q[q], ka[q], kb[q])
        res[todo, 0], res[todo, 1:4], res[todo, 4:7] = g, ax, pt
        for u in todo:
            cache.results[tag + (uniq[u].tobytes(),)] = tuple(res[u])
    r = res[inv]
    axis = np.einsum("fij,fj->fi", wb[:, :3, :3], r[:, 1:4]) / kb[:, None]
    point = np.einsum("fij,fj->fi", wb[:, :3, :3], r[:, 4:7]) + wb[:, :3, 3]
    return r[:, 0], axis, point


def pair_query(sa: Shape, sb: Shape, rel: np.ndarray, tau_ab, margin, ka=None, kb=None, gauss: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gap (Q,), axis (Q,3) and point (Q,3), both in B's frame, for relative poses rel (Q,4,4).

    Every sample whose proven interval of signed distance reaches below -tau is measured
    exactly (the plane distance inside a convex body, the mesh distance otherwise), so no
    sample deeper than tau is missed and its depth is exact; likewise near +tau wherever no
    bound proves the pair touching (gap <= tau) or apart, so both verdicts are exact. Other
    samples report the grid's estimate held within their proven interval (a convex body's:
    its proven lower bound). ka, kb: the bodies' uniform scale."""
    Q = len(rel)
    tau_ab = np.broadcast_to(np.asarray(tau_ab, float), (Q,))
    margin = np.broadcast_to(np.asarray(margin, float), (Q,))
    ka = np.ones(Q) if ka is None else np.asarray(ka, float)
    kb = np.ones(Q) if kb is None else np.asarray(kb, float)
    if Q and np.all(margin <= tau_ab + 1e-12) and few_axes(sa, sb):
        return convex_pair(sa, sb, rel, tau_ab, kb)
    if gauss and Q and np.all(margin <= tau_ab + 1e-12) and gauss_work(sa, sb) <= GAUSS_WORK:
        # where a face of either body shows them no deeper than tau the samples answer at little cost;
        # where they may be deeper, the samples would measure many exactly: the Gauss map answers
        deep = np.nonzero(_face_offset(sa, sb, rel) * kb > tau_ab)[0]
        if len(deep) == Q:
            return convex_gauss(sa, sb, rel, tau_ab, kb)
        if len(deep):
            rest = np.ones(Q, bool)
            rest[deep] = False
            rest = np.nonzero(rest)[0]           # the others, ascending (as setdiff1d, without its sort)
            gap, axis, point = np.empty(Q), np.empty((Q, 3)), np.empty((Q, 3))
            gap[deep], axis[deep], point[deep] = convex_gauss(sa, sb, rel[deep], tau_ab[deep], kb[deep])
            gap[rest], axis[rest], point[rest] = pair_query(sa, sb, rel[rest], tau_ab[rest], margin[rest],
                                                            ka[rest], kb[rest], gauss=False)
            return gap, axis, point
    gap = np.full(Q, np.inf)
    axis = np.zeros((Q, 3))
    axis[:, 2] = 1.0
    point = np.zeros((Q, 3))
    touching = np.zeros(Q, bool)                  # proven within tau of touching
    sides = [(0, sa, sb, rel, ka, kb), (1, sb, sa, similar_inverse(rel), kb, ka)]
    sides.sort(key=lambda s: s[2].planes is None)  # convex targets first: their figures are exact
    for side, s_from, s_into, r, k_from, k_into in sides:
        qq, p = _one_way(s_from, s_into, r, margin / k_into, -tau_ab / k_into, k_from / k_into)
        if len(qq) == 0:
            continue
        kq = k_into[qq]
        if s_into.planes is not None:             # convex: its face planes, no grid
            d, closest, exact = _convex_distance(s_into, p, tau_ab[qq] / kq, qq)
            d = d * kq
            touching[qq[exact & (d <= tau_ab[qq])]] = True
            _take_min(gap, axis, point, rel, side, s_into, qq[exact], p[exact], d[exact], closest[exact])
            _take_min(gap, axis, point, rel, side, s_into, qq[~exact], p[~exact], d[~exact])
            continue
        est, _, low = s_into.lookup(p, floor=True)
        est, low, high = est * kq, low * kq, np.full(len(qq), np.inf)
        band = np.nonzero(low <= tau_ab[qq])[0]   # the cell's floor allows touching: the corners' bound
        if len(band):
            lo_n, hi_n = s_into.proven(p[band])
            low[band], high[band] = lo_n * kq[band], hi_n * kq[band]
        deep = low <= -tau_ab[qq]                 # could be deeper than tau: measured exactly
        if np.any(deep):
            # the deepest sample of a query is among those whose low bound is under the query's best high
            best = np.full(Q, np.inf)
            np.minimum.at(best, qq[deep], high[deep])
            deep &= low <= np.maximum(best[qq], -tau_ab[qq])
        touching[qq[high <= tau_ab[qq]]] = True
        exact = np.zeros(len(qq), bool)

        def measure(at: np.ndarray) -> None:
            """Exact distance at samples `at`, taken into the gaps."""
            d, closest = s_into.exact_signed(p[at])
            d = d * kq[at]
            exact[at] = True
            touching[qq[at[d <= tau_ab[qq[at]]]]] = True
            _take_min(gap, axis, point, rel, side, s_into, qq[at], p[at], d, closest)
        if np.any(deep):
            measure(np.nonzero(deep)[0])
        # touching or not, where no bound decides it: first each query's likeliest sample, then the rest
        for first in (True, False):
            open_ = np.nonzero((low <= tau_ab[qq]) & ~touching[qq] & ~exact)[0]
            if first and len(open_):
                o = open_[np.lexsort((est[open_], qq[open_]))]
                open_ = o[np.r_[True, qq[o[1:]] != qq[o[:-1]]]]
            if len(open_):
                measure(open_)
        rest = ~exact
        _take_min(gap, axis, point, rel, side, s_into, qq[rest], p[rest],
                  np.minimum(np.maximum(est[rest], low[rest]), high[rest]))
    if sa.planes is not None and sb.planes is not None:
        # a sample's depth is at most half the body it is in: convex bodies also get their exact
        # penetration depth (the shortest translation that separates them) where it may pass tau
        for q in np.nonzero((gap < 0) & (-gap <= tau_ab))[0]:
            depth, push = _separation(sa, sb, rel[q], tau_ab[q] / kb[q], axis[q])
            if depth * kb[q] > -gap[q]:
                gap[q], axis[q] = -depth * kb[q], push
    return gap, axis, point


def few_axes(sa: Shape, sb: Shape) -> bool:
    """Whether two bodies are convex polytopes of few face directions and edge directions (boxes,
    cards, prisms): their exact gap is then found on the separating axes, all frames at once."""
    if sa.planes is None or sb.planes is None:
        return False
    ea, eb = sa.edge_directions, sb.edge_directions
    k = len(sa.planes[0]) + len(sb.planes[0]) + len(ea) * len(eb)
    return k * (len(sa.corners) + len(sb.corners)) <= AXES_WORK


AXES_WORK = 40_000                  # axes x vertices per query above which the samples answer instead


def convex_pair(sa: Shape, sb: Shape, rel: np.ndarray, tau_ab: np.ndarray, kb: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact gap (Q,), axis (Q,3) and point (Q,3), in B's frame, of two convex polytopes at relative poses rel.

    The Minkowski difference of two convex polytopes has its facets normal to a face of A, a face of
    B, or the cross product of an edge of each; so the separating-axis test over exactly those
    directions gives the penetration depth exactly (the least overlap: the shortest translation that
    separates them) and, apart, a proven lower bound of the distance. Where that bound does not
    already exceed tau the distance is measured exactly: the origin's distance to the Minkowski
    difference (Qhull) of the two. A's vertices carry its scale relative to B (rel is a similarity)."""
    Q = len(rel)
    va, vb = sa.corners, sb.corners
    nb_, ea, eb = sb.planes[0], sa.edge_directions, sb.edge_directions
    gap, axis, point = np.empty(Q), np.empty((Q, 3)), np.empty((Q, 3))
    per = (len(sa.planes[0]) + len(nb_) + len(ea) * len(eb)) * (len(va) + len(vb))
    step = max(1, (1 << 22) // max(per, 1))
    for i in range(0, Q, step):
        r = rel[i:i + step]
        rot = r[:, :3, :3]
        k = np.cbrt(np.linalg.det(rot))[:, None, None]
        pa = np.einsum("qij,vj->qvi", rot, va) + r[:, None, :3, 3]               # A in B's frame
        na = np.einsum("qij,nj->qni", rot / k, sa.planes[0])
        cross = np.cross(np.einsum("qij,ej->qei", rot / k, ea)[:, :, None, :], eb[None, None, :, :])
        cross = cross.reshape(len(r), -1, 3)
        length = np.linalg.norm(cross, axis=2, keepdims=True)
        cross = np.where(length > 1e-9, cross / np.maximum(length, 1e-300), na[:, :1])   # parallel: a repeat
        axes = np.concatenate([np.broadcast_to(nb_, (len(r),) + nb_.shape), na, cross], axis=1)   # (q,K,3)
        sa_ = np.einsum("qki,qvi->qkv", axes, pa)
        sb_ = np.einsum("qki,vi->qkv", axes, vb)
        low = sa_.max(2) - sb_.min(2)            # A pushed along -n by this separates them
        high = sb_.max(2) - sa_.min(2)           # A pushed along +n by this separates them
        over = np.minimum(low, high)
        best = np.argmin(over, axis=1)
        q = np.arange(len(r))
        depth = over[q, best]
        n = axes[q, best]
        sign = np.where(low[q, best] <= high[q, best], -1.0, 1.0)[:, None]
        gap[i:i + step] = -depth                 # apart: -depth is the largest separation, a lower bound
        axis[i:i + step] = sign * n
        point[i:i + step] = _contact_point(sa, sb, r, pa, sa_[q, best], sb_[q, best], sign[:, 0] < 0,
                                           gap[i:i + step])
    return _apart(sa, sb, rel, tau_ab, kb, gap, axis, point)


def gauss_work(sa: Shape, sb: Shape) -> float:
    """Work per query of `convex_gauss` (inf unless both bodies are convex): edge pairs tested on the
    Gauss map plus face normals projected on the other body's corners."""
    if sa.planes is None or sb.planes is None:
        return np.inf
    return (len(sa.sharp_edges) * len(sb.sharp_edges) + len(sa.planes[0]) * len(sb.corners)
            + len(sb.planes[0]) * len(sa.corners))


# work per query above which the samples answer (measured: two 64-sided discs, 63,000, ran 7% slower
# on the Gauss map than on their samples; a 320-face ball on a box, 15,000, 1.1-2.5x faster)
GAUSS_WORK = 60_000


def convex_gauss(sa: Shape, sb: Shape, rel: np.ndarray, tau_ab: np.ndarray, kb: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`convex_pair` for convex polytopes of many faces and edges (spheres, discs, cylinders).

    The same exact figures: the facets of the Minkowski difference M = A - B are A's faces, B's faces
    turned round, and the pairs of an edge of A and an edge of B whose arcs on the Gauss map cross
    (a's two face normals, and B's two negated). Only those pairs are taken: for each, the facet's
    outward normal n is the cross product of the two edges (turned to A's side of its arc) and its
    offset h_M(n) = n·(a point of A's edge - a point of B's edge), both edges being the bodies'
    supports along n and -n. The least offset over every facet is the penetration depth; apart, the
    largest -offset is a proven lower bound of the distance, measured exactly near tau as there."""
    Q = len(rel)
    va, vb = sa.corners, sb.corners
    (na_l, oa), (nb, ob) = sa.planes, sb.planes
    ea, eb = sa.sharp_edges, sb.sharp_edges
    an, bn = sa.sharp_normals, sb.sharp_normals
    bxa_l = np.cross(an[:, 1], an[:, 0])                        # A's arcs' great circles (A's frame)
    da_l = ea[:, 1] - ea[:, 0]
    c, d = -bn[:, 0], -bn[:, 1]                                 # -B's arcs
    dxc = np.cross(d, c)
    ub, ib = np.unique(bn.reshape(-1, 3), axis=0, return_inverse=True)   # B's face normals, each once
    ib = ib.reshape(-1, 2)
    db = eb[:, 1] - eb[:, 0]
    gap, axis, point = np.empty(Q), np.empty((Q, 3)), np.empty((Q, 3))
    tau_b = np.asarray(tau_ab, float) / np.asarray(kb, float)
    per = len(ea) * (len(eb) + len(ub)) + len(na_l) * len(vb) + len(nb) * len(va) + 1
    step = max(1, (1 << 22) // per)
    for i in range(0, Q, step):
        r = rel[i:i + step]
        n_q = len(r)
        rot, t = r[:, :3, :3], r[:, :3, 3]
        k = np.cbrt(np.linalg.det(rot))
        R = rot / k[:, None, None]
        pa = _turn(va, rot) + t[:, None]                                    # A's corners in B's frame
        na = _turn(na_l, R)
        h_a = (k[:, None] * oa[None] + np.einsum("qni,qi->qn", na, t)) - (na.reshape(-1, 3) @ vb.T).reshape(
            n_q, len(na_l), len(vb)).min(axis=2)
        h_b = ob[None] - (pa.reshape(-1, 3) @ nb.T).reshape(n_q, len(va), len(nb)).min(axis=1)
        faces = np.concatenate([h_b, h_a], axis=1)                           # B's first, as convex_pair
        best = np.argmin(faces, axis=1)
        q = np.arange(n_q)
        h = faces[q, best]
        m = np.where((best < len(nb))[:, None], -nb[np.minimum(best, len(nb) - 1)],
                     na[q, np.maximum(best - len(nb), 0)])                 # M's outward facet normal
        w = np.nonzero(-h <= tau_b[i:i + step])[0]       # the others are proven apart beyond tau already
        if len(ea) and len(eb) and len(w):
            Rw, rw, tw = R[w], rot[w], t[w]
            a_, b_, bxa = _turn(an[:, 0], Rw), _turn(an[:, 1], Rw), _turn(bxa_l, Rw).reshape(-1, 3)
            side = bxa @ ub.T                    # B's face normals against A's great circles (w*Ea, U)
            sign = (side > 0).view(np.int8) - (side < 0).view(np.int8)
            row, fi = np.nonzero(sign[:, ib[:, 0]] * sign[:, ib[:, 1]] < 0)   # B's arc crosses A's circle
            qi, ei = np.divmod(row, len(ea))
            cba = -side[row, ib[fi, 0]]
            adc = np.einsum("ki,ki->k", a_[qi, ei], dxc[fi])
            bdc = np.einsum("ki,ki->k", b_[qi, ei], dxc[fi])
            keep = (adc * bdc < 0) & (cba * bdc > 0)                          # and A's arc crosses B's
            qi, ei, fi = qi[keep], ei[keep], fi[keep]
            n = np.cross(np.einsum("qij,qj->qi", Rw[qi], da_l[ei]), db[fi])
            length = np.linalg.norm(n, axis=1)
            ok = length > 1e-9 * np.linalg.norm(da_l[ei], axis=1) * np.linalg.norm(db[fi], axis=1)
            qi, ei, fi, n = qi[ok], ei[ok], fi[ok], n[ok] / length[ok, None]
            if len(qi):
                n *= np.sign(np.einsum("qi,qi->q", n, a_[qi, ei] + b_[qi, ei]))[:, None]
                pa_e = np.einsum("qij,qj->qi", rw[qi], ea[ei, 0]) + tw[qi]
                h_e = np.einsum("qi,qi->q", n, pa_e - eb[fi, 0])
                low, at = _segment_argmin(qi, h_e, len(w))
                edge = np.nonzero(low < h[w])[0]
                h[w[edge]] = low[edge]
                m[w[edge]] = n[at[edge]]
        gap[i:i + step] = -h                     # apart: -h is the largest separation, a lower bound
        axis[i:i + step] = -m
        proj_a = np.einsum("qvi,qi->qv", pa, m)
        proj_b = np.einsum("vi,qi->qv", vb, m)
        point[i:i + step] = _contact_point(sa, sb, r, pa, proj_a, proj_b, np.ones(n_q, bool), gap[i:i + step])
    return _apart(sa, sb, rel, tau_ab, kb, gap, axis, point)


def _face_offset(sa: Shape, sb: Shape, rel: np.ndarray) -> np.ndarray:
    """Per pose (B's units): the least offset h_M over the Minkowski difference's facets normal to a face
    of A or of B, an upper bound of the penetration depth (negative: apart by at least its size)."""
    (na_l, oa), (nb, ob) = sa.planes, sb.planes
    va, vb = sa.corners, sb.corners
    out = np.empty(len(rel))
    step = max(1, (1 << 21) // (len(na_l) * len(vb) + len(nb) * len(va) + 1))
    for i in range(0, len(rel), step):
        r = rel[i:i + step]
        rot, t = r[:, :3, :3], r[:, :3, 3]
        k = np.cbrt(np.linalg.det(rot))
        pa = _turn(va, rot) + t[:, None]
        na = _turn(na_l, rot / k[:, None, None])
        h_a = (k[:, None] * oa[None] + np.einsum("qni,qi->qn", na, t)) - (na.reshape(-1, 3) @ vb.T).reshape(
            len(r), len(na_l), len(vb)).min(axis=2)
        h_b = ob[None] - (pa.reshape(-1, 3) @ nb.T).reshape(len(r), len(va), len(nb)).min(axis=1)
        out[i:i + step] = np.minimum(h_a.min(axis=1), h_b.min(axis=1))
    return out


def _turn(x: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Points or vectors x (N,3) under each of Q matrices rot (Q,3,3): (Q,N,3), as one matrix product."""
    return np.ascontiguousarray((x @ rot.reshape(-1, 3).T).reshape(len(x), len(rot), 3).transpose(1, 0, 2))


def _apart(sa: Shape, sb: Shape, rel: np.ndarray, tau_ab: np.ndarray, kb: np.ndarray,
           gap: np.ndarray, axis: np.ndarray, point: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two polytopes' gaps from their separating axes, with those apart yet within tau measured exactly."""
    kb = np.asarray(kb, float)
    near = np.nonzero((gap > 0) & (gap * kb <= tau_ab))[0]
    if len(near):                               # apart yet perhaps touching: is the bound the distance?
        limit = gap[near] * (1 + 1e-9) + 1e-12
        upper = _vertex_distance(sa, sb, rel[near], limit)
        k = _scale(rel[near])
        upper = np.minimum(upper, _vertex_distance(sb, sa, similar_inverse(rel[near]), limit / k) * k)
        for q in near[upper > limit]:
            gap[q], axis[q], point[q] = _polytope_distance(sa, sb, rel[q], gap[q])
    return gap * kb, axis, point


def _contact_point(sa: Shape, sb: Shape, r: np.ndarray, pa: np.ndarray, proj_a: np.ndarray,
                   proj_b: np.ndarray, a_below: np.ndarray, gap: np.ndarray) -> np.ndarray:
    """Where two polytopes meet along their axis (Q,3, B's frame): the middle of the corners that
    meet — A's furthest along the axis into B and B's furthest into A, each kept only where it lies
    in (or within the gap of) the other body — so a face resting on a face gives the middle of the
    smaller face (a box on a floor: its foot, not a corner of the floor); where no corner lies in
    the other body (two edges crossing) A's deepest corner stands."""
    vb = sb.corners
    q = np.arange(len(r))
    rot, t = r[:, :3, :3], r[:, :3, 3]
    deepest = pa[q, np.where(a_below, np.argmax(proj_a, axis=1), np.argmin(proj_a, axis=1))]
    slack = (np.maximum(gap, 0.0) + 1e-6 * (proj_a.max(1) - proj_a.min(1)) + 1e-9)[:, None]

    def tied(proj, top):
        ext = np.where(top, proj.max(1), proj.min(1))[:, None]
        return np.abs(proj - ext) <= 1e-9 * (proj.max(1) - proj.min(1))[:, None] + 1e-12
    use_a, use_b = tied(proj_a, a_below), tied(proj_b, ~a_below)      # then kept where in the other body
    qa, ia = np.nonzero(use_a)
    use_a[qa, ia] = sb.plane_distance(pa[qa, ia], which=False)[0] <= slack[qa, 0]
    qb, ib = np.nonzero(use_b)
    pb_a = np.einsum("kij,kj->ki", np.linalg.inv(rot[qb]), vb[ib] - t[qb])                # B's corners in A
    k = np.cbrt(np.linalg.det(rot[qb]))
    use_b[qb, ib] = sa.plane_distance(pb_a, which=False)[0] * k <= slack[qb, 0]
    n = use_a.sum(1) + use_b.sum(1)
    total = (pa * use_a[..., None]).sum(1) + (vb[None] * use_b[..., None]).sum(1)
    return np.where((n > 0)[:, None], total / np.maximum(n, 1)[:, None], deepest)


def _polytope_distance(sa: Shape, sb: Shape, rel: np.ndarray, lower: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Exact distance (B's units) of two convex polytopes apart, the unit direction pushing A away from
    B, and A's nearest point (B's frame): the closest points of two polytopes lie on a corner and a
    face, or on two edges, so the least of every corner-to-face and edge-to-edge distance is it."""
    rot, t = rel[:3, :3], rel[:3, 3]
    ca, cb = sa.corners @ rot.T + t, sb.corners
    ta, tb = sa.mesh.triangles @ rot.T + t, sb.mesh.triangles
    ea, eb = sa.sharp_edges @ rot.T + t, sb.sharp_edges
    best, pa, pb = np.inf, None, None
    for points, tri, flip in ((ca, tb, False), (cb, ta, True)):        # a corner of one, a face of the other
        foot = _nearest_on_triangles((tri[None] - points[:, None, None, :]).reshape(-1, 3, 3))
        foot = foot.reshape(len(points), len(tri), 3)
        d = np.einsum("pti,pti->pt", foot, foot)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        if d[i, j] < best:
            near, far = points[i], points[i] + foot[i, j]
            best, pa, pb = float(d[i, j]), (far if flip else near), (near if flip else far)
    if len(ea) and len(eb):                                             # an edge of each
        qa, qb = _segment_closest(ea[:, None, 0], ea[:, None, 1], eb[None, :, 0], eb[None, :, 1])
        d = np.einsum("abi,abi->ab", qb - qa, qb - qa)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        if d[i, j] < best:
            best, pa, pb = float(d[i, j]), qa[i, j], qb[i, j]
    dist = float(np.sqrt(best))
    if not dist > 0:
        return lower, np.array([0.0, 0.0, 1.0]), pa
    return max(dist, lower), (pa - pb) / dist, pa


def _segment_closest(p0, p1, q0, q1):
    """Closest points of segments p0-p1 and q0-q1 (broadcast), clamped to both (Ericson 5.1.9)."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a, e = np.einsum("...i,...i", d1, d1), np.einsum("...i,...i", d2, d2)
    f, c, b = np.einsum("...i,...i", d2, r), np.einsum("...i,...i", d1, r), np.einsum("...i,...i", d1, d2)
    a, e, f, c, b = np.broadcast_arrays(a, e, f, c, b)
    den = a * e - b * b
    with np.errstate(all="ignore"):
        s = np.where(den > 1e-300, np.clip((b * f - c * e) / den, 0, 1), 0.0)
        tt = np.where(e > 1e-300, (b * s + f) / e, 0.0)
        s = np.where(tt < 0, np.where(a > 1e-300, np.clip(-c / a, 0, 1), 0.0), s)
        s = np.where(tt > 1, np.where(a > 1e-300, np.clip((b - c) / a, 0, 1), 0.0), s)
        tt = np.clip(tt, 0, 1)
    return p0 + s[..., None] * d1, q0 + tt[..., None] * d2


def _scale(rel: np.ndarray) -> np.ndarray:
    return np.cbrt(np.linalg.det(rel[:, :3, :3]))


def _vertex_distance(sa: Shape, sb: Shape, rel: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Per pose (B's units): the least exact distance from a vertex of A to convex B over the vertices
    whose foot on B's nearest face plane lies on B, among those no further than `limit` (per pose; an
    upper bound of the two bodies' distance; +inf where no vertex shows one). Bodies resting face to
    face meet their lower bound here."""
    normals, offsets = sb.planes
    size = 1e-9 * (1.0 + float(np.abs(sb.hi - sb.lo).max()))
    out = np.full(len(rel), np.inf)
    V, F = len(sa.corners), len(normals)
    step = max(1, (1 << 21) // max(V * F, 1))
    for i in range(0, len(rel), step):
        r = rel[i:i + step]
        pa = _turn(sa.corners, r[:, :3, :3]) + r[:, None, :3, 3]
        v = (pa.reshape(-1, 3) @ normals.T).reshape(len(r), V, F)
        v -= offsets
        d = v.max(axis=2)
        q, j = np.nonzero((d > 0) & (d <= limit[i:i + step, None]))    # only these can lower the bound
        if len(q) == 0:
            continue
        foot = pa[q, j] - d[q, j, None] * normals[np.argmax(v[q, j], axis=1)]
        on = (foot @ normals.T - offsets).max(axis=1) <= size
        np.minimum.at(out, i + q[on], d[q[on], j[on]])
    return out


def _nearest_on_triangles(tri: np.ndarray) -> np.ndarray:
    """The point of each triangle (T,3,3) nearest the origin (Ericson's regions)."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    ab, ac = b - a, c - a
    d1, d2 = -(ab * a).sum(1), -(ac * a).sum(1)
    d3, d4 = -(ab * b).sum(1), -(ac * b).sum(1)
    d5, d6 = -(ab * c).sum(1), -(ac * c).sum(1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(all="ignore"):
        den = va + vb + vc
        out = a + ab * (vb / den)[:, None] + ac * (vc / den)[:, None]
        done = np.zeros(len(a), bool)
        for m, v in (((d1 <= 0) & (d2 <= 0), a), ((d3 >= 0) & (d4 <= d3), b),
                     ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * (d1 / (d1 - d3))[:, None]),
                     ((d6 >= 0) & (d5 <= d6), c), ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + ac * (d2 / (d2 - d6))[:, None]),
                     ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0),
                      b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))[:, None])):
            m = m & ~done
            out[m] = v[m]
            done |= m
    return out


def _separation(sa: Shape, sb: Shape, rel: np.ndarray, tau_b: float, hint: np.ndarray) -> tuple[float, np.ndarray]:
    """Penetration depth of two convex bodies (B's units) and the unit direction (B's frame) that
    pushes A out. The overlap along any direction bounds it from above (first the samples' contact
    direction `hint`, then every face normal); only where those bounds pass tau_b is it computed
    exactly: the origin's distance to the boundary of the Minkowski difference."""
    va = sa.mesh.vertices @ rel[:3, :3].T + rel[:3, 3]
    vb = np.asarray(sb.mesh.vertices, float)
    pa, pb = va @ hint, vb @ hint
    if min(pa.max() - pb.min(), pb.max() - pa.min()) <= tau_b:
        return 0.0, np.zeros(3)                        # no deeper than tau: the samples' depth stands
    na = sa.planes[0] @ rel[:3, :3].T
    axes = np.concatenate([sb.planes[0], na / np.linalg.norm(na, axis=1, keepdims=True)])
    pa, pb = va @ axes.T, vb @ axes.T
    overlap = np.minimum(pa.max(0) - pb.min(0), pb.max(0) - pa.min(0))
    upper = float(overlap.min())
    if upper <= tau_b:
        return 0.0, np.zeros(3)                        # no deeper than tau: the samples' depth stands
    from scipy.spatial import ConvexHull, QhullError
    diff = np.unique(np.round((va[:, None, :] - vb[None, :, :]).reshape(-1, 3), 12), axis=0)
    try:
        eq = ConvexHull(diff).equations                # n·x + o <= 0 inside, n outward
    except QhullError:
        return 0.0, np.zeros(3)
    k = int(np.argmax(eq[:, 3]))                       # the facet nearest the origin
    return float(-eq[k, 3]), -eq[k, :3]


def _convex_distance(shape: Shape, p: np.ndarray, touch: np.ndarray, qq: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signed distance to a convex body at local points (N,3), the closest surface points, and which
    are exact. Inside, the distance is exactly max(n·p - o) over its face planes; outside, that is a
    proven lower bound, exact where the point's foot on that plane lies on the body, and otherwise
    measured on the mesh wherever it is within `touch` (per point) of touching.

    qq (the query of each point, ascending): a point is left at its bound (not exact) where that bound
    already exceeds the figure of another point of its query (the first point of least bound, measured
    first), or equals it after that point (a tie goes to the first), or exceeds an exact distance of its
    query: the least of a query's distances, its point, and whether it touches are then the same
    without it (faces resting on faces: every sample of the face but one)."""
    size = 1e-12 * (1.0 + float(np.abs(shape.hi - shape.lo).max()))
    if len(shape.planes[1]) <= FEW_PLANES:        # few planes: all of them at once
        d, at = shape.plane_distance(p)
        near, dn = np.arange(len(p)), d
    else:
        d = shape.plane_floor(p)
        near = np.nonzero(d <= touch)[0]          # the others are proven further than touching
        if qq is not None and len(near):
            figure, first = _query_figure(shape, p, touch, qq, near, d, size)
            f, q = d[near], qq[near]
            near = near[(f < figure[q]) | ((f == figure[q]) & (near <= first[q]))]
        dn, at = shape.plane_distance(p[near])
    closest = p.copy()
    exact = np.zeros(len(p), bool)
    d[near] = dn
    closest[near] = p[near] - dn[:, None] * shape.planes[0][at]
    exact[near] = dn <= 0
    out = near[(dn > 0) & (dn <= touch[near])]    # outside, yet perhaps within touch
    if len(out):
        foot, _ = shape.plane_distance(closest[out], which=False)
        exact[out[foot <= size]] = True
        far = out[~exact[out] & (d[out] <= touch[out])]
        if len(far) and qq is not None:
            best = np.full(int(qq.max()) + 1, np.inf)
            np.minimum.at(best, qq[exact], d[exact])
            far = far[d[far] <= best[qq[far]]]
        if len(far):
            d[far], closest[far] = shape.exact_signed(p[far])
            exact[far] = True
    return d, closest, exact


def _query_figure(shape: Shape, p: np.ndarray, touch: np.ndarray, qq: np.ndarray, near: np.ndarray,
                  floor: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray]:
    """Per query (index qq): the figure `_convex_distance` gives the first point of `near` whose bound
    (floor) is least, where it is known without the mesh: its plane distance, inside, beyond touch,
    or outside with its foot on the body (+inf otherwise, and for queries with no such point); and
    that point (index into p)."""
    Q = int(qq.max()) + 1
    _, at = _segment_argmin(qq[near], floor[near], Q)
    has = np.zeros(Q, bool)
    has[qq[near]] = True
    q = np.nonzero(has)[0]
    j = near[at[q]]
    dj, pj = shape.plane_distance(p[j])
    known = (dj <= 0) | (dj > touch[j])
    out = np.nonzero(~known)[0]
    if len(out):
        foot, _ = shape.plane_distance(p[j[out]] - dj[out, None] * shape.planes[0][pj[out]], which=False)
        known[out] = foot <= size
    figure = np.full(Q, np.inf)
    figure[q[known]] = dj[known]
    first = np.full(Q, len(p))
    first[q] = j
    return figure, first


def _take_min(gap, axis, point, rel, side, target, qq, p, d, closest=None) -> None:
    """Lower each query's gap to the smallest of d (grouped by qq, ascending) with its axis and point."""
    if len(qq) == 0:
        return
    if np.any(qq[1:] < qq[:-1]):                  # the samples come grouped by query: seldom needed
        order = np.argsort(qq, kind="stable")
        qq, p, d = qq[order], p[order], d[order]
        closest = closest[order] if closest is not None else None
    smin, at = _segment_argmin(qq, d, len(gap))
    qs = np.nonzero(smin < gap)[0]
    if len(qs) == 0:
        return
    idx = at[qs]
    gap[qs] = smin[qs]
    if closest is not None:
        direction = closest[idx] - p[idx]
        n = np.linalg.norm(direction, axis=1, keepdims=True)
        flat = n[:, 0] < 1e-12
        direction = np.where(flat[:, None], _gradient(target, p[idx]), direction / np.maximum(n, 1e-12))
        direction = np.where((smin[qs] > 0)[:, None], -direction, direction)   # outside: away from the surface
    else:
        direction = _gradient(target, p[idx])
    if side == 0:                 # A's sample inside B: push A out along B's outward direction
        axis[qs], point[qs] = direction, p[idx]
    else:                         # B's sample inside A: push A the other way; express in B's frame
        flipped = -np.einsum("qij,qj->qi", rel[qs, :3, :3], direction)
        axis[qs] = flipped / np.maximum(np.linalg.norm(flipped, axis=1, keepdims=True), 1e-12)
        point[qs] = np.einsum("qij,qj->qi", rel[qs, :3, :3], p[idx]) + rel[qs, :3, 3]


def _one_way(sa: Shape, sb: Shape, rel: np.ndarray, margin: np.ndarray, deep: np.ndarray, ratio: np.ndarray):
    """A's samples that may lie within `margin` (per query, B's units) of B: (query index, point in B).
    Parent spheres, then leaf spheres, then the leaves' samples; a sphere is opened when its
    proven low bound (a convex body's face planes, else the grid cell's floor) minus its radius
    (times ratio, A's scale over B's) comes within the margin or reaches `deep` (-tau in B's units)."""
    rot, t = rel[:, :3, :3], rel[:, :3, 3]
    rt = np.swapaxes(rot, 1, 2)

    def near(points, radii, q):
        if sb.planes is not None:                 # convex: its face planes bound the distance from below
            low = sb.plane_floor(points)
            s, e = low, 0.0
        else:
            _, _, low = sb.lookup(points, floor=True)
            s, e = low, 0.0                       # proven: no sample within the margin is passed over
        r = radii * ratio[q][:, None]
        return (s - e - r <= margin[q][:, None]) | (low - r <= deep[q][:, None])
    q1, c1 = np.nonzero(near(np.einsum("qij,cj->qci", rot, sa.parent_reps) + t[:, None],
                             np.broadcast_to(sa.parent_radii[None], (len(rel), len(sa.parent_radii))),
                             np.arange(len(rel))))
    if len(q1):
        kids = sa.children[c1]                                           # (K, GROUP)
        k, g = np.nonzero(near(np.matmul(sa.reps[kids], rt[q1]) + t[q1][:, None, :], sa.radii[kids], q1))
        q2, c2 = q1[k], kids[k, g]
        if len(q2) and kids.shape[1] > 1:                              # short parents repeat a leaf
            fresh = np.r_[True, (q2[1:] != q2[:-1]) | (c2[1:] != c2[:-1])]
            q2, c2 = q2[fresh], c2[fresh]
    else:
        q2 = c2 = np.zeros(0, np.int64)
    if len(q2) == 0:
        return np.zeros(0, np.int64), np.zeros((0, 3))
    p = (np.matmul(sa.cpoints[c2], rt[q2]) + t[q2][:, None, :]).reshape(-1, 3)
    qq = np.repeat(q2, sa.cpoints.shape[1])
    return qq, p


def _segment_argmin(qq: np.ndarray, v: np.ndarray, Q: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query (qq sorted ascending): the smallest value and its index into v."""
    out, at = np.full(Q, np.inf), np.zeros(Q, np.int64)
    starts = np.nonzero(np.r_[True, qq[1:] != qq[:-1]])[0]
    mins = np.minimum.reduceat(v, starts)
    q = qq[starts]
    out[q] = mins
    # index of the minimum within each segment
    is_min = v == np.repeat(mins, np.diff(np.r_[starts, len(v)]))
    first = np.nonzero(is_min)[0]
    seg = np.searchsorted(starts, first, side="right") - 1
    keep = np.r_[True, seg[1:] != seg[:-1]]
    at[q[seg[keep]]] = first[keep]
    return out, at


def _gradient(shape: Shape, p: np.ndarray) -> np.ndarray:
    """Unit outward direction of the distance at local points: a convex body's nearest face
    plane, else the grid's central differences."""
    if shape.planes is not None:
        return shape.planes[0][shape.plane_distance(p)[1]]
    h = np.maximum(shape.grid_step.min() * 0.5, 1e-5)
    g = np.stack([shape.signed(p + h * e) - shape.signed(p - h * e) for e in np.eye(3)], axis=-1)
    n = np.linalg.norm(g, axis=-1, keepdims=True)
    return np.where(n > 1e-12, g / np.maximum(n, 1e-12), np.array([0.0, 0.0, 1.0]))
