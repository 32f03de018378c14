"""Per-frame contact between pairs of rigid bodies: how deep they overlap or how far apart they are.

The work is split so that a one-minute film costs seconds:
1. broadphase: every body's world bounding box at every frame at once, and
   the pairs whose boxes come within a margin (tau) of each other;
2. identical relative poses are measured once: a pair at rest, carried, or
   re-verified after an edit elsewhere costs a dictionary look-up
   (`ContactCache`, keyed by the two meshes' content hashes and the pose);
3. narrowphase on what is left: one body's surface samples, cluster by
   cluster, are looked up in the other body's signed-distance grid, both ways;
4. where the grid's estimate lies within its error of tau (or above it, for
   exact evidence), the deepest samples are measured exactly on the mesh.

`gap` is the signed surface distance of a pair (negative: interpenetration
depth). The separating axis is a unit world vector that pushes A out of B
by `-gap`; the contact point is the deepest sample, in world coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.scene.transforms import invert

from .shape import Shape

EXACT_PER_QUERY = 8


def tau(la: float, lb: float) -> float:
    """The public scorer's threshold: max(1 mm, min(5 mm, half the thinner body's thickness))."""
    return max(0.001, min(0.005, 0.5 * min(la, lb)))


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


def world_boxes(shapes: list[Shape], world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World bounding boxes (B,F,3) min and max of every body at every frame; world is (B,F,4,4)."""
    lo = np.stack([s.lo for s in shapes])
    hi = np.stack([s.hi for s in shapes])
    corners = np.stack([np.where(np.array([(i >> k) & 1 for k in range(3)], bool), hi, lo)
                        for i in range(8)], axis=1)                      # (B,8,3)
    wc = np.einsum("bfij,bcj->bfci", world[..., :3, :3], corners) + world[:, :, None, :3, 3]
    return wc.min(axis=2), wc.max(axis=2)


def broadphase(lo: np.ndarray, hi: np.ndarray, pairs: np.ndarray, margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(frame, pair) indices whose boxes come within `margin` (per pair) of each other."""
    if len(pairs) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = pairs[:, 0], pairs[:, 1]
    m = margin[:, None, None]
    hit = np.all((lo[a] - m <= hi[b]) & (lo[b] - m <= hi[a]), axis=-1)   # (P,F)
    p, f = np.nonzero(hit)
    return f, p


def measure(shapes: list[Shape], world: np.ndarray, pairs: np.ndarray, taus: np.ndarray,
            margins: np.ndarray, cache: ContactCache | None = None) -> Contacts:
    """Gap, axis and point of every (frame, pair) the broadphase keeps."""
    cache = cache if cache is not None else ContactCache()
    lo, hi = world_boxes(shapes, world)
    f_all, p_all = broadphase(lo, hi, pairs, margins)
    K = len(f_all)
    gap, axis, point = np.zeros(K), np.zeros((K, 3)), np.zeros((K, 3))
    order = np.argsort(p_all, kind="stable")
    f_all, p_all = f_all[order], p_all[order]
    bounds = np.searchsorted(p_all, np.arange(len(pairs) + 1))
    for p in range(len(pairs)):
        sl = slice(bounds[p], bounds[p + 1])
        if sl.start == sl.stop:
            continue
        a, b = pairs[p]
        frames = f_all[sl]
        wa, wb = world[a, frames], world[b, frames]
        rel = invert(wb) @ wa                                            # A-local -> B-local
        key = np.round(rel[:, :3, :4].reshape(-1, 12) * 1e7).astype(np.int64)
        uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        tag = (shapes[a].hash, shapes[b].hash, round(float(taus[p]) * 1e7), round(float(margins[p]) * 1e7))
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
            g, ax, pt = pair_query(shapes[a], shapes[b], rel[first[todo]], float(taus[p]), float(margins[p]))
            res[todo, 0], res[todo, 1:4], res[todo, 4:7] = g, ax, pt
            for j, u in enumerate(todo):
                cache.results[tag + (uniq[u].tobytes(),)] = tuple(res[u])
        r = res[inv]
        gap[sl] = r[:, 0]
        axis[sl] = np.einsum("fij,fj->fi", wb[:, :3, :3], r[:, 1:4])
        point[sl] = np.einsum("fij,fj->fi", wb[:, :3, :3], r[:, 4:7]) + wb[:, :3, 3]
    return Contacts(f_all, p_all, gap, axis, point)


def pair_query(sa: Shape, sb: Shape, rel: np.ndarray, tau_ab: float, margin: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gap (Q,), axis (Q,3) and point (Q,3), both in B's frame, for relative poses rel (Q,4,4)."""
    Q = len(rel)
    inv = invert(rel)
    ga = _one_way(sa, sb, rel, margin)       # A's samples in B
    gb = _one_way(sb, sa, inv, margin)       # B's samples in A
    gap = np.full(Q, np.inf)
    axis = np.zeros((Q, 3))
    axis[:, 2] = 1.0
    point = np.zeros((Q, 3))
    for side, (qq, p, est, err) in enumerate((ga, gb)):
        if len(qq) == 0:
            continue
        smin, at = _segment_argmin(qq, est, Q)
        better = smin < gap
        if not np.any(better):
            continue
        qs = np.nonzero(better)[0]
        gap[qs] = smin[qs]
        idx = at[qs]
        target = sb if side == 0 else sa
        grad = _gradient(target, p[idx])
        if side == 0:
            axis[qs], point[qs] = grad, p[idx]
        else:   # B's sample inside A: push A away from it; express in B's frame
            axis[qs] = -np.einsum("qij,qj->qi", rel[qs, :3, :3], grad)
            point[qs] = np.einsum("qij,qj->qi", rel[qs, :3, :3], p[idx]) + rel[qs, :3, 3]
    _exact(sa, sb, rel, tau_ab, ga, gb, gap, axis, point)
    return gap, axis, point


def _one_way(sa: Shape, sb: Shape, rel: np.ndarray, margin: float):
    """A's samples that may lie within `margin` of B: (query index, point in B, estimate, error)."""
    rot, t = rel[:, :3, :3], rel[:, :3, 3]
    reps = np.einsum("qij,cj->qci", rot, sa.reps) + t[:, None]
    s = sb.signed(reps) - sb.error_at(reps)
    keep = s - sa.radii[None] <= margin
    q_idx, c_idx = np.nonzero(keep)
    counts = sa.starts[c_idx + 1] - sa.starts[c_idx]
    total = int(counts.sum())
    if total == 0:
        z = np.zeros(0)
        return z.astype(np.int64), np.zeros((0, 3)), z, z
    qq = np.repeat(q_idx, counts)
    offs = np.repeat(sa.starts[c_idx] - np.cumsum(counts) + counts, counts) + np.arange(total)
    pts = sa.points[offs]
    p = np.empty_like(pts)
    step = 400_000
    for i in range(0, total, step):
        j = slice(i, i + step)
        p[j] = np.einsum("nij,nj->ni", rot[qq[j]], pts[j]) + t[qq[j]]
    return qq, p, sb.signed(p), sb.error_at(p)


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
    """Unit outward direction of the grid distance at local points (central differences)."""
    h = np.maximum(shape.grid_step.min() * 0.5, 1e-5)
    g = np.stack([shape.signed(p + h * e) - shape.signed(p - h * e) for e in np.eye(3)], axis=-1)
    n = np.linalg.norm(g, axis=-1, keepdims=True)
    return np.where(n > 1e-12, g / np.maximum(n, 1e-12), np.array([0.0, 0.0, 1.0]))


def _exact(sa: Shape, sb: Shape, rel: np.ndarray, tau_ab: float, ga, gb, gap, axis, point) -> None:
    """Measure exactly the samples that could be deeper than tau (the grid is not sure of them)."""
    best = np.full(len(rel), -np.inf)     # exact depth found so far per query
    for side, (qq, p, est, err) in enumerate((ga, gb)):
        cand = est - err <= -tau_ab
        if not np.any(cand):
            continue
        qc, pc, ec = qq[cand], p[cand], est[cand] - err[cand]
        o = np.lexsort((ec, qc))
        qc, pc = qc[o], pc[o]
        starts = np.nonzero(np.r_[True, qc[1:] != qc[:-1]])[0]
        rank = np.arange(len(qc)) - np.repeat(starts, np.diff(np.r_[starts, len(qc)]))
        sel = rank < EXACT_PER_QUERY
        qc, pc = qc[sel], pc[sel]
        target = sb if side == 0 else sa
        d, closest = target.exact_signed(pc)
        depth = -d
        for i in np.argsort(-depth):
            q = qc[i]
            if depth[i] <= best[q]:
                continue
            best[q] = depth[i]
            direction = closest[i] - pc[i]
            n = np.linalg.norm(direction)
            direction = direction / n if n > 1e-12 else _gradient(target, pc[i:i + 1])[0]
            if depth[i] < 0:
                direction = -direction
            if side == 0:
                axis[q], point[q] = direction, pc[i]
            else:
                axis[q] = -rel[q, :3, :3] @ direction
                point[q] = rel[q, :3, :3] @ pc[i] + rel[q, :3, 3]
    done = best > -np.inf
    gap[done] = -best[done]
