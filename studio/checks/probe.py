"""Measuring a pair of bodies between frames, and finding when something first happens there.

`Probe.at` measures pairs at fractions of frame pairs (the poses `between.Motion`
draws) with the checks' own pair query: with a threshold theta it is exact
below -theta, and above theta it proves the gap is above theta; the boxes'
distance and, where every sample is outside the other body, the surfaces'
exact distance (python-fcl) bound it from below. `envelope` is the lowest a
function with a slope bound can go between two lower bounds; `earliest`
finds the first time a function meets a level from such bounds, halving only
where the bound does not already exclude it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.checks.between import Motion
from studio.checks.contacts import pair_query, similar_inverse, tau, world_boxes
from studio.checks.footage import Footage
from studio.checks.sweep_bounds import mesh_distance

RESOLUTION = 1e-6           # metres: a lower bound within this of the threshold counts as meeting it
TIME_RESOLUTION = 1e-3      # frames: how finely a time of first contact is located
CHUNK = 2048


def envelope(la, lb, lh):
    """Lowest value a function with ends >= la, lb and slope <= L can take over a stretch (lh = L·h)."""
    la, lb, lh = np.asarray(la, float), np.asarray(lb, float), np.asarray(lh, float)
    cross = 0.5 * (la + lb - lh)
    return np.where(np.abs(la - lb) <= lh, cross, np.maximum(la, lb) - lh)



@dataclass
class Probe:
    """Measurements of pairs of bodies at fractions of frame pairs, by the checks' own pair query."""

    film: Footage
    motion: Motion

    def at(self, a, b, k, t, theta, need=None, pair_w=None) -> dict:
        """Per query (bodies a, b at fraction t of frame pair k), with threshold theta:
        r, the pair query's gap (exact below -theta; above theta only known to be above it),
        low, a proven lower bound of the gap (the boxes' distance, or what r proves),
        axis and point (world), tau at that time, whether the query ran (not when the
        boxes alone prove `need`), and whether low is only theta's band (-theta). pair_w: the two bodies' world matrices (2,Q,4,4) if known."""
        a, b, k = (np.atleast_1d(np.asarray(v, np.int64)) for v in (a, b, k))
        t, theta = (np.atleast_1d(np.asarray(v, float)) for v in (t, theta))
        Q = len(a)
        theta = np.broadcast_to(theta, (Q,)).astype(float)
        need = np.full(Q, np.inf) if need is None else np.broadcast_to(np.asarray(need, float), (Q,))
        out = {"r": np.full(Q, np.inf), "low": np.zeros(Q), "axis": np.zeros((Q, 3)), "point": np.zeros((Q, 3)),
               "tau": np.zeros(Q), "ran": np.zeros(Q, bool), "band": np.zeros(Q, bool)}
        for s in range(0, Q, CHUNK):
            part = slice(s, s + CHUNK)
            pw = self.pair_world(a[part], b[part], k[part], t[part]) if pair_w is None else pair_w[:, part]
            self._chunk(a[part], b[part], k[part], t[part], theta[part], need[part], pw,
                        {key: v[part] for key, v in out.items()})
        return out

    def pair_world(self, a, b, k, t) -> np.ndarray:
        """(2,Q,4,4) world matrices of bodies a and b at fraction t of frame pair k."""
        out = np.empty((2, len(a), 4, 4))
        for s in range(0, len(a), CHUNK):
            part = slice(s, s + CHUNK)
            pair = self.motion.pair_world(a[part], b[part], k[part], t[part])     # two free bodies: those alone
            if pair is not None:
                out[:, part] = pair
                continue
            W = self.motion.world(k[part], t[part], np.r_[a[part], b[part]])      # (B,Q,4,4)
            idx = np.arange(len(W[0]))
            out[0, part], out[1, part] = W[a[part], idx], W[b[part], idx]
        return out

    def _chunk(self, a, b, k, t, theta, need, pair_w, out) -> None:
        film = self.film
        shapes = film.shapes
        lo = np.empty((2, len(a), 3))
        hi = np.empty((2, len(a), 3))
        for side, bodies in ((0, a), (1, b)):
            for body in np.unique(bodies):
                sel = bodies == body
                l, h = world_boxes([shapes[body]], pair_w[side, sel][None])
                lo[side, sel], hi[side, sel] = l[0], h[0]
        box = np.linalg.norm(np.maximum(0.0, np.maximum(lo[0] - hi[1], lo[1] - hi[0])), axis=1)
        box = np.where(box > 0, box, -np.inf)                        # boxes apart bound the gap; overlapping, nothing
        ka, kb = np.ones(len(a)), np.ones(len(a))
        if film.scale is not None:
            n = film.n_frames
            k1 = np.minimum(k + 1, n - 1)
            ka = film.scale[a, k] + (film.scale[a, k1] - film.scale[a, k]) * t
            kb = film.scale[b, k] + (film.scale[b, k1] - film.scale[b, k]) * t
        th = np.array([s.thickness for s in shapes])
        out["tau"][:] = tau(th[a] * ka, th[b] * kb)
        r = np.full(len(a), np.inf)
        dist = np.zeros(len(a))
        run = box <= need
        keys = np.stack([a, b], axis=1)
        for ab in np.unique(keys[run], axis=0):
            sel = np.nonzero(run & (a == ab[0]) & (b == ab[1]))[0]
            wa, wb = pair_w[0, sel], pair_w[1, sel]
            rel = similar_inverse(wb) @ wa
            # the same relative pose is measured once (a body at rest, a carried one)
            key = np.round(np.c_[rel[:, :3, :4].reshape(-1, 12), ka[sel], kb[sel], theta[sel]] * 1e7)
            _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
            inv = inv.reshape(-1)
            q = sel[first]
            g, ax, pt = pair_query(shapes[ab[0]], shapes[ab[1]], rel[first], theta[q], theta[q], ka[q], kb[q])
            g, ax, pt = g[inv], ax[inv], pt[inv]
            r[sel] = g
            if film.scale is None:      # every sample outside: at least the surfaces' exact distance apart
                apart = np.nonzero(g > theta[sel])[0]
                if len(apart):
                    dist[sel[apart]] = mesh_distance(shapes[ab[0]], shapes[ab[1]], rel[apart])
            out["axis"][sel] = np.einsum("qij,qj->qi", wb[:, :3, :3], ax) / kb[sel, None]
            out["point"][sel] = np.einsum("qij,qj->qi", wb[:, :3, :3], pt) + wb[:, :3, 3]
        out["r"][:] = r
        out["ran"][:] = run
        proven = np.where(r < -theta, r, np.where(r <= theta, -theta, np.maximum(theta, dist)))
        out["low"][:] = np.where(run, np.maximum(box, proven), box)
        # known only not to be deeper than theta: a finer threshold could say more
        out["band"][:] = run & (r >= -theta) & (r <= theta) & (out["low"] <= -theta)


def earliest(fn, la: float, lb: float, L: float, level: float, met_b: bool = True,
             resolution: float = TIME_RESOLUTION) -> float | None:
    """The earliest fraction t in (0, 1] where fn says a function meets `level` (at or below it).

    fn(t, need) -> (a proven lower bound at t, whether it meets the level there, or a function of
    no arguments that says so, asked only where the answer is needed: at a stretch the search stops
    halving); `need` is the bound that would settle both halves around t. la, lb: lower bounds at the ends; L: the
    function's slope bound over the whole stretch; met_b: whether it meets the level at t = 1.
    Stretches whose bound stays above the level are passed over; the rest are halved, left first,
    down to `resolution` (a fraction of the stretch)."""
    stack = [(0.0, 1.0, la, lb, met_b)]
    while stack:
        ta, tb, ga, gb, mb = stack.pop()
        h = tb - ta
        if h <= resolution or 0.5 * L * h <= RESOLUTION or envelope(ga, gb, L * h) > level:
            if mb() if callable(mb) else mb:
                return tb
            continue
        tm = 0.5 * (ta + tb)
        need = 0.5 * L * h - min(ga, gb) + 2 * level
        gm, mm = fn(tm, max(need, level))
        stack.append((tm, tb, gm, gb, mb))
        stack.append((ta, tm, ga, gm, mm))
    return None
