"""NoPenetration between frames for the pairs that hold a skin, whose surface deforms as its bones move.

Between two frames the skin is drawn as the renderer draws it: its bones move as `between.Motion`
moves every body (roots linearly and by slerp, joints linearly, links by forward kinematics) and
the vertices follow by linear blend skinning. The rigid sweep's bounds (a body's hull points fixed
in it) do not hold for a deforming surface, so these pairs are swept here by the same branch and
bound on the gap with their own rate: the farthest any vertex of the skin moves relative to the
other body from one frame to the next (measured on the deformed vertices at the two frames, in the
other body's frame). With proven lower bounds of the gap at a stretch's ends (the exact per-frame
measure where the pair is within its threshold, else the distance of the deformed vertices' box
from the other body's box) the stretch is settled where the envelope stays above -tau; otherwise
its middle is measured (the bones posed there, the skin deformed, its samples measured in the other
body as the per-frame check does) and the halves are settled in turn, down to TIME_RESOLUTION.
A skin whose vertex moves along an arc between frames rather than its chord can go a little farther
than the chord says (by about r·θ²/8 for a bone turning θ at radius r; under 0.1 mm for the walk of
the generated human at 24 fps); that is not bounded apart. Evidence as the rigid sweep's: frame,
frames, between, a, b, contact_frame and deepest_frame (to the stretches measured), depth_m, tau_m,
axis, push_m, point.
"""
from __future__ import annotations

import numpy as np

from studio.checks.between import Motion
from studio.checks.contacts import world_boxes
from studio.checks.footage import Footage
from studio.checks.probe import RESOLUTION, TIME_RESOLUTION, envelope
from studio.checks.skinned import _into
from studio.scene.skin import deform
from studio.scene.transforms import invert

BUDGET = 256                # measurements one frame pair may take before it is left unresolved


def skin_columns(film: Footage, a_all: np.ndarray, b_all: np.ndarray) -> np.ndarray:
    """(P,) which counted pairs hold exactly one skin body (two skins are not measured: checks.skinned)."""
    if not film.skins:
        return np.zeros(len(a_all), bool)
    sk = np.array(sorted(film.skins))
    return np.isin(a_all, sk) ^ np.isin(b_all, sk)


def sweep_skins(film: Footage, motion: Motion, a_all: np.ndarray, b_all: np.ndarray, open_: np.ndarray,
                taus: np.ndarray) -> tuple[list[dict], int, list]:
    """Evidence of the skin pairs (columns of open_, (F-1,P)) failing between frames; the number of
    measurements taken and the frame pairs left unresolved."""
    n = film.n_frames
    evidence, probes, unresolved = [], 0, []
    lo, hi = world_boxes(film.shapes, film.world[:, :n], film.forms)
    c = film.contacts
    for p in np.nonzero(open_.any(axis=0))[0]:
        a, b = int(a_all[p]), int(b_all[p])
        s, r = (a, b) if a in film.skins else (b, a)
        skin, bones = film.skins[s]
        verts = skin.at(np.arange(n), np.swapaxes(film.world[bones, :n], 0, 1))          # (F,N,3), cached
        inv = invert(film.world[r, :n])
        rel = np.einsum("fij,fnj->fni", inv[:, :3, :3], verts) + inv[:, None, :3, 3]
        rate = np.linalg.norm(rel[1:] - rel[:-1], axis=2).max(axis=1)                      # (F-1,)
        vlo, vhi = verts.min(axis=1), verts.max(axis=1)
        box = np.linalg.norm(np.maximum(0.0, np.maximum(vlo - hi[r], lo[r] - vhi)), axis=1)
        tau_p = taus[:, p]
        low = box.copy()
        pair = film.pair_index(film.names[a], film.names[b])[0]
        m = c.pair == pair
        fm, g = c.frame[m], c.gap[m]
        low[fm] = np.where(np.isfinite(g), g, np.maximum(box[fm], tau_p[fm]))   # exact, or beyond its threshold
        for k in np.nonzero(open_[:, p])[0]:
            t_lo = float(min(tau_p[k], tau_p[k + 1]))
            l0, l1, L = float(low[k]), float(low[k + 1]), float(rate[k])
            if envelope(l0, l1, L) > -t_lo - RESOLUTION:
                continue
            hit, used, left = _halve(film, motion, skin.skin, bones, s, r, int(k), l0, l1, L, t_lo)
            probes += used
            if left:                     # not settled either way: it fails, saying what it reached
                unresolved.append([int(film.frames[k]), film.names[a], film.names[b]])
                bound, near = left
                f0 = int(film.frames[k])
                axis = np.zeros(3) if near is None else (-near[2] if s != a else near[2])
                evidence.append({"frame": f0, "frames": [f0, f0 + 1], "between": True, "unsettled": True,
                                 "a": film.names[a], "b": film.names[b],
                                 "depth_m": round(max(0.0, -near[0]), 6) if near is not None else 0.0,
                                 "depth_bound_m": round(max(0.0, -bound), 6) if np.isfinite(bound) else None,
                                 "tau_m": round(t_lo, 6),
                                 "deepest_frame": round(f0 + (near[1] if near is not None else 0.5), 4),
                                 "stretches": used, "axis": [round(float(x), 6) for x in axis],
                                 "push_m": round(max(0.0, -near[0]), 6) if near is not None else 0.0,
                                 "point": [round(float(x), 6) for x in (near[3] if near is not None else np.zeros(3))]})
                continue
            if hit is not None:
                t_hit, depth, axis, point, first = hit
                if s != a:
                    axis = -axis
                f0 = int(film.frames[k])
                evidence.append({"frame": f0, "frames": [f0, f0 + 1], "between": True, "a": film.names[a],
                                 "b": film.names[b], "contact_frame": round(f0 + first, 3),
                                 "deepest_frame": round(f0 + t_hit, 3), "depth_m": round(depth, 6),
                                 "tau_m": round(t_lo, 6), "axis": [round(float(x), 6) for x in axis],
                                 "push_m": round(depth, 6), "point": [round(float(x), 6) for x in point]})
    return evidence, probes, unresolved


def _halve(film, motion, skin, bones, s, r, k, l0, l1, L, tau_):
    """Branch and bound over frame pair k: (deepest hit or None, measurements, unresolved?)."""
    margin = max(2 * tau_, 0.01)
    wanted = np.r_[np.asarray(bones, np.int64), r]          # only the skin's bones and the other body are posed

    def measure(t: float):
        w = motion.world(np.array([k]), np.array([t]), wanted)                          # (B,1,4,4)
        v = deform(skin, w[bones, 0])
        f = skin.faces
        pts = np.concatenate([v, (v[f[:, 0]] + v[f[:, 1]] + v[f[:, 2]]) / 3.0])[None]
        g, ax, pt = _into(film.shapes[r], w[r], pts, margin)
        return float(g[0]), ax[0], pt[0]

    stack, used, worst, first, near = [(0.0, 1.0, l0, l1)], 0, None, None, None
    if l0 <= 0:
        first = 0.0
    while stack:
        ta, tb, la, lb = stack.pop()
        if envelope(la, lb, L * (tb - ta)) > -tau_ - RESOLUTION or tb - ta < TIME_RESOLUTION:
            continue
        if used >= BUDGET:
            if worst is not None:
                return worst[:4] + (first if first is not None else worst[0],), used, False
            # unsettled: the lowest gap the open stretches allow, and the closest measurement
            bound = min(float(envelope(x[2], x[3], L * (x[1] - x[0]))) for x in stack + [(ta, tb, la, lb)])
            return None, used, (bound, near)
        tm = 0.5 * (ta + tb)
        g, ax, pt = measure(tm)
        used += 1
        if np.isfinite(g) and (near is None or g < near[0]):
            near = (g, tm, ax, pt)
        if g <= 0 and (first is None or tm < first):
            first = tm
        if g < -tau_ and (worst is None or -g > worst[1]):
            worst = (tm, -g, ax, pt, 0.0)
        gl = margin if np.isinf(g) else g
        stack += [(ta, tm, la, gl), (tm, tb, gl, lb)]
    if worst is not None:
        worst = worst[:4] + (first if first is not None else worst[0],)
    return worst, used, False
