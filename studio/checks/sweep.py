"""NoPenetration between frames: what happens on the way from one frame to the next.

Between two consecutive frames the film moves as `between.Motion` draws it
(positions linearly, rotations by slerp, joints linearly, links by forward
kinematics). A counted pair whose two frames both pass fails at that frame
pair if, somewhere in between, it reaches deeper than tau(A,B) (a body passing
through another reaches past tau on the way, unless both are thinner than 2·tau).
Depth between frames is the per-frame measure (the deepest surface sample
inside the other body; for two convex bodies their separating depth).

No fixed sub-samples: the sweep proves where nothing happens and measures
where something may. The gap (signed surface distance) changes no faster than
the bodies' points move relative to each other, a proven bound L per pair and
frame pair (`between.Motion.rates`, tightened by how far hull vertices go in
the other body's frame). So with lower bounds g0, g1 at the two ends of a
stretch of length h, the gap there is at least (g0 + g1 - L·h)/2: where that is
above -tau the stretch is done, else it is halved and its middle measured with
the checks' own exact pair query. Where one body is convex, each of its face
planes bounds the gap from below by the other body's hull vertices' height
above it, which changes only with the motion across that plane, so a box
sliding on a floor or carried in a hand is settled by its two frames. Resting
contacts are decided the same way: touching within tau at both frames, their
ends are measured again at a finer threshold (exact below it) and the bound
then holds for the stretch between; a contact that does not move relative to
the other body has L = 0 and is settled at once. A bound that stays within a
micrometre of tau is taken as passing.

A failing frame pair's evidence names both frames, the bodies, the time of
first contact (the surfaces first meet, to a thousandth of a frame; the first
frame itself when they already touch there) and the deepest point of the
sweep (time, depth, axis, point), found by branch and bound to 0.1 mm.

A frame pair still open after BUDGET stretches (or MAX_LEVELS halvings) fails
too, unsettled: its evidence names the bodies, the deepest measurement there
and the lowest gap the stretches left still allow, so no verdict passes on a
sweep that did not prove it.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, fields

import numpy as np

from studio.checks.between import Motion, hull_points, lengths, motion_of
from studio.checks.contacts import similar_inverse
from studio.checks.footage import Footage
from studio.checks.probe import RESOLUTION, TIME_RESOLUTION, Probe, earliest, envelope
from studio.checks.sweep_skins import skin_columns, sweep_skins
from studio.checks.sweep_bounds import PLANES, PairMotion, by_shapes, heights, hull_gap, mesh_distance

DEPTH_RESOLUTION = 1e-4     # metres: how exactly the deepest point is found
MAX_LEVELS = 40            # halvings of a frame pair: down to 2^-40 of a frame
BUDGET = 4096               # stretches one frame pair may take before it is left unsettled (and fails)
WINDOW = 1 << 20            # pair-frame pairs swept at once (a window of frame pairs of every counted pair)


@dataclass
class Stretches:
    """Stretches of frame pairs still to settle, one row each (arrays of one length)."""

    k: np.ndarray           # frame pair (index of its first frame)
    p: np.ndarray           # counted pair (index into the sweep's pairs)
    ta: np.ndarray          # the stretch's start and end, fractions of the frame pair
    tb: np.ndarray
    la: np.ndarray          # proven lower bounds of the gap at its ends
    lb: np.ndarray
    L: np.ndarray           # the gap's slope bound over the frame pair
    floor: np.ndarray       # a proven lower bound of the gap over the stretch
    tl: np.ndarray          # tau (the lower of the frame pair's two)
    side: np.ndarray        # plane certificates (see sweep_bounds.PairBounds)
    normals: np.ndarray
    offsets: np.ndarray
    stray: np.ndarray
    ha: np.ndarray          # lowest hull vertex above each plane at the stretch's ends
    hb: np.ndarray
    ba: np.ndarray          # whether la (lb) is only a threshold's band (not deeper than it), which a
    bb: np.ndarray          # finer threshold could raise

    def __len__(self) -> int:
        return len(self.k)

    def take(self, sel) -> "Stretches":
        return Stretches(*(getattr(self, f.name)[sel] for f in fields(self)))

    def settled(self) -> np.ndarray:
        """Stretches whose gap is proven above -tau (to RESOLUTION) all along."""
        return np.maximum(envelope(self.la, self.lb, self.L * (self.tb - self.ta)), self.floor) > \
            -self.tl - RESOLUTION


def sweep(film: Footage, motion: Motion | None = None) -> tuple[list[dict], dict]:
    """Evidence of every counted pair failing between two frames that both pass, and metrics.

    The frame pairs are swept a window at a time (about WINDOW pair-frame pairs each), so what the
    sweep holds does not grow with the film's length; each frame pair is settled on its own, so the
    windows give the verdicts of one pass over the whole film."""
    n = film.n_frames
    counted = np.nonzero(film.counted)[0]
    metrics = {"frame_pairs": max(n - 1, 0), "frame_pairs_with_penetration": 0, "pair_frame_pairs": 0,
               "settled_by_bounds": 0, "settled_by_planes": 0, "ends_measured": 0, "probes": 0,
               "not_swept": 0, "unresolved": [], "frame_pairs_unsettled": 0}
    if n < 2 or len(counted) == 0:
        return [], metrics
    motion = motion or motion_of(film)
    probe, rel = Probe(film, motion), PairMotion(film, motion)
    pairs = film.pairs[counted]
    a_all, b_all = pairs[:, 0], pairs[:, 1]
    skinned = skin_columns(film, a_all, b_all)
    skin_open = np.zeros((n - 1, len(counted)), bool) if skinned.any() else None
    c = film.contacts
    by_frame = np.argsort(c.frame, kind="stable")
    width = max(1, WINDOW // len(counted))
    evidence: list[dict] = []
    unresolved: list = []
    for k0 in range(0, n - 1, width):
        got, left = _window(film, probe, rel, motion, counted, a_all, b_all, k0, min(n - 1, k0 + width),
                            skinned, skin_open, by_frame, metrics)
        evidence += got
        unresolved += left
    if skin_open is not None:            # a deforming surface: swept by its vertices (checks.sweep_skins)
        skin_evidence, used, left = sweep_skins(film, motion, a_all, b_all, skin_open, film.tau_fp[:, counted])
        metrics["probes"] += used
        metrics["unresolved"] += left
        evidence = skin_evidence + evidence
    metrics["unresolved"] += unresolved
    return _finish(evidence, metrics)


def _window(film: Footage, probe: Probe, rel: PairMotion, motion: Motion, counted, a_all, b_all, k0: int,
            k1: int, skinned, skin_open, by_frame, metrics: dict) -> tuple[list[dict], list]:
    """The sweep of frame pairs k0..k1-1: their evidence (skins apart: their columns are marked in
    skin_open) and the frame pairs left unresolved; the counts are added to metrics."""
    taus = film.tau_fp[k0:k1 + 1, counted]                                           # (W+1,P)
    low = _frame_lows(film, counted, taus, k0, by_frame)                             # (W+1,P), nan: fails at the frame
    R = motion.rates
    tau_lo = np.minimum(taus[:-1], taus[1:])
    L = R.upper[a_all, k0:k1].T + R.upper[b_all, k0:k1].T   # (W,P) the chains' speeds: never below S (see below)
    l0, l1 = low[:-1], low[1:]
    open_ = ~(np.isnan(l0) | np.isnan(l1))
    if film.forms:                       # a body whose proportions change between the frames is not swept
        for bi, (_, which) in film.forms.items():
            changes = which[k0 + 1:k1 + 1] != which[k0:k1]
            touched = (a_all == bi) | (b_all == bi)
            metrics["not_swept"] += int((changes[:, None] & touched[None] & open_).sum())
            open_ &= ~(changes[:, None] & touched[None])
    # a glTF body moved by STEP keys jumps at the next frame, one moved by CUBICSPLINE keys follows its
    # curve: neither moves between frames as drawn here, so their pairs with moving bodies are left out
    step = np.array([film.scene.body(b).has("step_keys") for b in film.names])
    spline = np.array([film.scene.body(b).has("spline_keys") for b in film.names])
    if step.any() or spline.any():
        moves = R.S[:, k0:k1] > 0                                                # (B,W)
        odd = (spline[a_all] | spline[b_all])[None] | ((step[a_all] & ~step[b_all])[None] & moves[b_all].T) | \
            ((step[b_all] & ~step[a_all])[None] & moves[a_all].T)
        metrics["not_swept"] += int((odd & open_).sum())
        open_ &= ~odd & ~(step[a_all] | step[b_all])[None]     # a held body and a still one: nothing moves
    metrics["pair_frame_pairs"] += int(open_.sum())
    if skin_open is not None:
        skin_open[k0:k1] = open_ & skinned[None]
        open_ &= ~skinned[None]
    with np.errstate(invalid="ignore"):
        settled = envelope(l0, l1, L) > -tau_lo - RESOLUTION
        # where the chains' speeds did not settle it, the speeds the hulls' chords tighten (a lower
        # slope only ever settles more, so this is the same as taking those everywhere)
        fk, fp = np.nonzero(open_ & ~settled)
        L[fk, fp] = R.speed(a_all[fp], fk + k0) + R.speed(b_all[fp], fk + k0)
        settled[fk, fp] = envelope(l0[fk, fp], l1[fk, fp], L[fk, fp]) > -tau_lo[fk, fp] - RESOLUTION
    cand = open_ & ~settled
    metrics["settled_by_bounds"] += int((open_ & settled).sum())
    ks, ps = np.nonzero(cand)
    if len(ks) == 0:
        return [], []
    g0, g1, tl = l0[ks, ps], l1[ks, ps], tau_lo[ks, ps]
    ks = ks + k0                                                                     # frame pairs of the film
    # first each body by its box's corners, all pairs at once (cheap, looser), then by its hull where
    # that did not settle it
    L1, floor1, h0, h1 = rel.coarse(a_all[ps], b_all[ps], ks)
    by_plane = floor1 > -tl
    done = np.maximum(envelope(np.maximum(g0, h0), np.maximum(g1, h1), L1), floor1) > -tl - RESOLUTION
    metrics["settled_by_planes"] += int(by_plane.sum())
    metrics["settled_by_bounds"] += int((done & ~by_plane).sum())
    ks, ps, g0, g1, tl = ks[~done], ps[~done], g0[~done], g1[~done], tl[~done]
    s = _stretches(film, rel, a_all, b_all, ks, ps, g0, g1, tl)
    by_plane = s.floor > -s.tl
    metrics["settled_by_planes"] += int(by_plane.sum())
    done = s.settled()
    metrics["settled_by_bounds"] += int((done & ~by_plane).sum())
    s = s.take(~done)
    # a round body's floor (its centre's path), where the rest did not settle the frame pair
    groups: dict[tuple, list[np.ndarray]] = {}      # pairs of the same two shapes and least tau, at once
    for p in np.unique(s.p):
        sel = np.nonzero(s.p == p)[0]
        key = (film.shapes[a_all[p]].hash, film.shapes[b_all[p]].hash, float(np.min(s.tl[sel])))
        groups.setdefault(key, []).append(sel)
    for sel in (np.concatenate(g) for g in groups.values()):
        s.floor[sel] = np.maximum(s.floor[sel], rel.ball_floor(a_all[s.p[sel]], b_all[s.p[sel]], s.k[sel], s.tl[sel],
                                                               apart=s.la[sel] > 0))
    by_plane = s.floor > -s.tl
    metrics["settled_by_planes"] += int(by_plane.sum())
    done = s.settled()
    metrics["settled_by_bounds"] += int((done & ~by_plane).sum())
    s = s.take(~done)
    # touching or resting ends by their hulls' gap (a separating axis, fast)
    _hull_ends(film, a_all, b_all, s, apart=False)
    done = s.settled()
    metrics["settled_by_bounds"] += int(done.sum())
    s = s.take(~done)
    # ends apart: at least their distance (where no convex body's planes already bound them), first
    # with the heavier body's box for it (fast, never farther), then by the hulls' gap, then exact
    # where those did not settle
    rough = s.take(np.ones(len(s), bool))
    rough.la, rough.lb = _apart_ends(film, a_all, b_all, s, coarse=True)
    done = rough.settled()
    metrics["settled_by_bounds"] += int(done.sum())
    s = s.take(~done)
    _hull_ends(film, a_all, b_all, s, apart=True)
    done = s.settled()
    metrics["settled_by_bounds"] += int(done.sum())
    s = s.take(~done)
    s.la, s.lb = _apart_ends(film, a_all, b_all, s)
    done = s.settled()
    metrics["settled_by_bounds"] += int(done.sum())
    s = s.take(~done)
    # resting and sliding contacts: their ends measured again, exact below a finer threshold
    s.la, s.lb, measured = _measure_ends(probe, a_all, b_all, s)
    metrics["ends_measured"] += measured
    done = s.settled()
    metrics["settled_by_bounds"] += int(done.sum())
    found, halved, unresolved = _halve(probe, a_all, b_all, s.take(~done))
    metrics["probes"] += halved
    left = [[int(film.frames[k]), film.names[a_all[p]], film.names[b_all[p]]] for k, p in sorted(unresolved)]
    evidence = []
    for (k, p), (hit, L_k, floor_k) in sorted(found.items()):
        evidence.append(_evidence(film, probe, int(a_all[p]), int(b_all[p]), k, L_k, floor_k,
                                  float(l0[k - k0, p]), float(l1[k - k0, p]), hit))
    metrics["probes"] += sum(e.pop("_probes", 0) for e in evidence)
    evidence += [_unsettled(film, int(a_all[p]), int(b_all[p]), k, u) for (k, p), u in sorted(unresolved.items())]
    return evidence, left


def _finish(evidence: list[dict], metrics: dict) -> tuple[list[dict], dict]:
    """The evidence by frame, with the frame pairs that penetrate and those left unsettled counted apart."""
    metrics["frame_pairs_with_penetration"] = len({e["frame"] for e in evidence if not e.get("unsettled")})
    metrics["frame_pairs_unsettled"] = len({e["frame"] for e in evidence if e.get("unsettled")})
    return sorted(evidence, key=lambda e: e["frame"]), metrics


def _stretches(film, rel: PairMotion, a_all, b_all, ks, ps, g0, g1, tl) -> Stretches:
    """Whole frame pairs as stretches (frame pair, pair, the gap's lower bounds at its two frames, tau),
    with each pair's own bounds (slope, planes, balls)."""
    order = np.lexsort((ks, ps))
    ks, ps, tl = ks[order], ps[order], tl[order]
    b = rel.bound(a_all[ps], b_all[ps], ks, tl, balls=False)          # every pair at once
    # at each frame the lowest hull vertex above a plane of the other's hull bounds the gap there too
    la, lb = np.maximum(g0[order], b.h0.max(axis=1)), np.maximum(g1[order], b.h1.max(axis=1))
    n = len(ks)
    return Stretches(ks, ps, np.zeros(n), np.ones(n), la, lb, b.L, b.floor, tl, b.side, b.normals, b.offsets,
                     b.stray, b.h0, b.h1, la <= -tl, lb <= -tl)     # ba, bb: the per-frame measure's band


def _frame_lows(film: Footage, counted: np.ndarray, taus: np.ndarray, f0: int = 0,
                by_frame: np.ndarray | None = None) -> np.ndarray:
    """(W,P) a proven lower bound of each counted pair's gap at frames f0.. (as many as taus has rows),
    nan where it fails there: the boxes' distance, or what the per-frame measure proves (above tau, or
    not below -tau). by_frame: the measured pair-frames in order of frame, if known."""
    lo, hi = film.boxes
    f1 = f0 + len(taus)
    a, b = film.pairs[counted, 0], film.pairs[counted, 1]
    box = np.empty((len(taus), len(counted)))
    for i in range(0, len(counted), 256):         # a few pairs at a time: (W,3) temporaries stay small
        j = slice(i, i + 256)
        gap = np.maximum(lo[a[j], f0:f1] - hi[b[j], f0:f1], lo[b[j], f0:f1] - hi[a[j], f0:f1])
        box[:, j] = lengths(np.maximum(0.0, gap)).T
    box = np.where(box > 0, box, -np.inf)            # boxes apart bound the gap; overlapping ones, nothing
    low = box.copy()
    c = film.contacts
    if by_frame is None:
        by_frame = np.argsort(c.frame, kind="stable")
    at = by_frame[np.searchsorted(c.frame[by_frame], f0):np.searchsorted(c.frame[by_frame], f1)]
    col = np.full(len(film.pairs), -1)
    col[counted] = np.arange(len(counted))
    m = col[c.pair[at]] >= 0
    f, p, g = c.frame[at][m] - f0, col[c.pair[at][m]], c.gap[at][m]
    t = taus[f, p]
    proven = np.where(g < -t, np.nan, np.where(g <= t, -t, t))
    low[f, p] = np.where(np.isnan(proven), np.nan, np.maximum(box[f, p], proven))
    return low


def _apart_ends(film: Footage, a_all, b_all, s: Stretches, coarse: bool = False):
    """Ends where every sample is known to be outside the other body: at least the surfaces' distance
    (coarse: a lower bound of it, see mesh_distance)."""
    la, lb = s.la.copy(), s.lb.copy()
    if film.scale is not None:
        return la, lb
    # a convex body's planes already bound its distance from anything: the mesh distance is for the rest
    convex = np.array([sh.planes is not None for sh in film.shapes])
    free = ~(convex[a_all[s.p]] | convex[b_all[s.p]])
    todo = [(0, i, int(s.k[i])) for i in np.nonzero(free & (la > 0))[0]] + \
        [(1, i, int(s.k[i]) + 1) for i in np.nonzero(free & (lb > 0))[0]]
    if not todo:
        return la, lb
    end, i, f = (np.array(v) for v in zip(*todo))
    m = film.n_frames + 1
    code, inv = np.unique(s.p[i] * m + f, return_inverse=True)       # each (pair, frame) once, in order
    inv = inv.reshape(-1)
    d = np.zeros(len(code))
    for p in np.unique(code // m):
        sel = np.nonzero(code // m == p)[0]
        a, b = int(a_all[p]), int(b_all[p])
        fr = code[sel] % m
        d[sel] = mesh_distance(film.shapes[a], film.shapes[b], similar_inverse(film.world[b, fr]) @ film.world[a, fr],
                               coarse)
    got = d[inv]
    la[i[end == 0]] = np.maximum(la[i[end == 0]], got[end == 0])
    lb[i[end == 1]] = np.maximum(lb[i[end == 1]], got[end == 1])
    return la, lb


def _measure_ends(probe: Probe, a_all, b_all, s: Stretches):
    """Ends that are only known not to be deeper than tau, measured again at the coarsest of
    tau/2, /4, /8, /16 that could settle the stretch (exact below it)."""
    la, lb, tl, L = s.la.copy(), s.lb.copy(), s.tl, s.L
    theta = _threshold(tl, L)
    todo = []
    for end, lows, band, frames in ((0, la, s.ba, s.k), (1, lb, s.bb, s.k + 1)):
        for i in np.nonzero(band & (theta > 0) & (lows < -theta))[0]:
            todo.append((end, i, int(frames[i])))
    if not todo:
        return la, lb, 0
    end, i, f = (np.array(v) for v in zip(*todo))
    key = np.stack([s.p[i], f, np.round(theta[i] * 1e9)], axis=1)
    uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    q = i[first]
    res = probe.at(a_all[s.p[q]], b_all[s.p[q]], f[first], np.zeros(len(q)), theta[q])
    got, band = res["low"][inv], res["band"][inv]
    for e, lows, flags in ((0, la, s.ba), (1, lb, s.bb)):
        at = i[end == e]
        better = got[end == e] > lows[at]
        lows[at] = np.where(better, got[end == e], lows[at])
        flags[at] = np.where(better, band[end == e], flags[at])
    return la, lb, len(uniq)


def _threshold(tl: np.ndarray, lh: np.ndarray) -> np.ndarray:
    """The coarsest of tau/2, /4, /8, /16 under tau - L·h/2 (the ends' bound that settles a stretch
    of slope·length lh), 0 where none is."""
    theta = np.zeros(len(tl))
    for j in (4, 3, 2, 1):
        lv = tl * 0.5 ** j
        theta = np.where(lv < tl - 0.5 * lh, lv, theta)
    return theta


def _halve(probe: Probe, a_all, b_all, s: Stretches):
    """Halve every unsettled stretch, level by level: first by the convex body's planes at its middle,
    then by measuring the middle. (k, p) -> (the first deeper-than-tau measurement, L, floor), and
    the number of measurements."""
    film = probe.film
    found: dict[tuple[int, int], tuple] = {}
    probes = 0
    convex = np.array([sh.planes is not None for sh in film.shapes])
    spent: dict[tuple[int, int], int] = {}
    closest: dict[tuple[int, int], dict] = {}       # per frame pair: its deepest measurement so far
    unresolved: dict[tuple[int, int], dict] = {}
    for level in range(MAX_LEVELS + 1):
        s = s.take(~s.settled())
        if len(s) == 0:
            break
        if level == MAX_LEVELS:             # halved to 2^-40 of a frame and still not settled
            _give_up(s, set(zip(s.k.tolist(), s.p.tolist())) - set(found), closest, spent, unresolved)
            break
        # ends known only not to be deeper than tau (or left unmeasured while the planes were expected
        # to settle the stretch): measured at the coarsest threshold that could settle it now
        room = np.minimum(s.ha, s.hb).max(axis=1) + s.tl         # the planes may yet settle these
        theta = _threshold(s.tl, s.L * (s.tb - s.ta))            # the same for either end
        for end, flag in (("la", "ba"), ("lb", "bb")):
            lows, band = getattr(s, end), getattr(s, flag)
            bare = np.nonzero(~np.isfinite(lows) | (band & (theta > 0) & (lows < -theta) & ~(room > 0)))[0]
            if len(bare):
                t = s.ta[bare] if end == "la" else s.tb[bare]
                th = np.where(theta[bare] > 0, theta[bare], s.tl[bare] / 2.0)
                res = probe.at(a_all[s.p[bare]], b_all[s.p[bare]], s.k[bare], t, th)
                probes += int(res["ran"].sum())
                better = res["low"] > lows[bare]
                lows[bare] = np.where(better, res["low"], lows[bare])
                band[bare] = np.where(better, res["band"], band[bare])
        tm = 0.5 * (s.ta + s.tb)
        pw = probe.pair_world(a_all[s.p], b_all[s.p], s.k, tm)
        hm = _plane_heights(film, a_all, b_all, s, pw)
        quarter = s.stray * (0.5 * (s.tb - s.ta)) ** 2 / 8.0
        f1 = np.maximum(s.floor, np.minimum(s.ha, hm).max(axis=1) - quarter)
        f2 = np.maximum(s.floor, np.minimum(hm, s.hb).max(axis=1) - quarter)
        half = 0.5 * s.L * (s.tb - s.ta)
        # the middle's bound that would settle both halves
        need = np.maximum(half - 2.0 * s.tl - np.minimum(s.la, s.lb), -s.tl) + 1e-12
        need = np.where(f1 > -s.tl, np.where(f2 > -s.tl, -np.inf, half - 2.0 * s.tl - s.lb),
                        np.where(f2 > -s.tl, half - 2.0 * s.tl - s.la, need))
        theta = np.clip(-0.9 * need, s.tl / 16.0, s.tl / 2.0)
        theta = np.where(-0.9 * need < s.tl / 16.0, s.tl / 2.0, theta)
        # where the planes hold above -tau at the ends and the middle, halving alone will settle it
        # (the hull's stray from its chords shrinks with the square of the stretch): no measurement
        room = np.minimum(np.minimum(s.ha, hm), s.hb).max(axis=1) + s.tl
        held = (room > 0) & (s.stray * (s.tb - s.ta) ** 2 / (8.0 * 4.0 ** 8) < room)   # within eight halvings
        lm = hm.max(axis=1)                                       # the planes bound the middle too
        bm = np.zeros(len(s), bool)
        # touching by the planes (the hull at or just below one): a measurement could neither find a
        # failure there nor prove more than the planes do
        touching = (lm > -theta) & (lm <= 0)
        ask = np.nonzero(np.isfinite(need) & ~held & ~(lm > need) & ~touching)[0]
        if len(ask):
            # first by the hulls' gap at the middle (fast), as by the planes; where the hulls are apart, a
            # measurement is made only if the surfaces could be far enough apart to settle both halves
            hg, up = _hull_gaps(film, a_all, b_all, s.p[ask], pw[:, ask], high=True)
            lm[ask] = np.maximum(lm[ask], hg)
            touching = (lm > -theta) & (lm <= 0)
            # (or, nearer than half the threshold, a measurement at it could only find them touching)
            futile = (lm[ask] > 0) & ((np.maximum(up, theta[ask]) <= need[ask]) | (up <= 0.5 * theta[ask]))
            ask = ask[~(lm[ask] > need[ask]) & ~touching[ask] & ~futile]
        if len(ask):
            p = s.p[ask]
            res = probe.at(a_all[p], b_all[p], s.k[ask], tm[ask], theta[ask], need=need[ask], pair_w=pw[:, ask])
            probes += int(res["ran"].sum())
            both = convex[a_all[p]] & convex[b_all[p]]
            again = np.nonzero(both & (res["r"] < 0) & (res["r"] >= -res["tau"]) & (res["r"] < -theta[ask]))[0]
            if len(again):               # two convex bodies: their separating depth, as per frame
                res2 = probe.at(a_all[p[again]], b_all[p[again]], s.k[ask][again], tm[ask][again],
                                res["tau"][again], pair_w=pw[:, ask[again]])
                probes += len(again)
                for key in ("r", "axis", "point"):
                    res[key][again] = res2[key]
            bm[ask] = res["band"] & (res["low"] > lm[ask])
            lm[ask] = np.maximum(lm[ask], res["low"])
            for j in np.nonzero(np.isfinite(res["r"]) & (res["r"] < -theta[ask]))[0]:   # exact there
                key = (int(s.k[ask[j]]), int(s.p[ask[j]]))
                if key not in closest or res["r"][j] < closest[key]["r"]:
                    closest[key] = {"t": float(tm[ask[j]]), "r": float(res["r"][j]), "axis": res["axis"][j].copy(),
                                    "point": res["point"][j].copy(), "tau": float(res["tau"][j])}
            for j in np.nonzero(res["r"] < -res["tau"])[0]:
                i = ask[j]
                key = (int(s.k[i]), int(s.p[i]))
                if key not in found:
                    found[key] = ({"t": float(tm[i]), "r": float(res["r"][j]), "axis": res["axis"][j].copy(),
                                   "point": res["point"][j].copy(), "tau": float(res["tau"][j])},
                                  float(s.L[i]), -np.inf)
        keys = list(zip(s.k.tolist(), s.p.tolist()))
        for key in keys:
            spent[key] = spent.get(key, 0) + 1
        over = {key for key, v in spent.items() if v > BUDGET}
        _give_up(s, over - set(found) - set(unresolved), closest, spent, unresolved)
        go = np.nonzero([key not in found and key not in over for key in keys])[0]
        m = len(go)
        s = s.take(np.r_[go, go])                 # the left halves, then the right ones
        s.tb[:m], s.lb[:m], s.hb[:m], s.floor[:m], s.bb[:m] = tm[go], lm[go], hm[go], f1[go], bm[go]
        s.ta[m:], s.la[m:], s.ha[m:], s.floor[m:], s.ba[m:] = tm[go], lm[go], hm[go], f2[go], bm[go]
    return found, probes, unresolved


def _give_up(s: Stretches, keys: set, closest: dict, spent: dict, unresolved: dict) -> None:
    """Frame pairs left unsettled: the lowest gap their stretches still allow (a proven lower bound
    of the gap over the frame pair, below -tau), their deepest measurement and what it took."""
    if not keys:
        return
    bound = np.maximum(envelope(s.la, s.lb, s.L * (s.tb - s.ta)), s.floor)
    for i, key in enumerate(zip(s.k.tolist(), s.p.tolist())):
        if key in keys:
            u = unresolved.setdefault(key, {"bound": np.inf, "tau": float(s.tl[i]), "stretches": spent.get(key, 0),
                                            "closest": closest.get(key)})
            u["bound"] = min(u["bound"], float(bound[i]))


def _hull_ends(film: Footage, a_all, b_all, s: Stretches, apart: bool) -> None:
    """Raise the stretches' end bounds by the hulls' gap there: at the ends known apart (apart) or
    at the others."""
    w = film.world
    first, second = np.nonzero((s.la > 0) == apart)[0], np.nonzero((s.lb > 0) == apart)[0]
    if len(first) + len(second):                # both ends at once
        p, f = np.r_[s.p[first], s.p[second]], np.r_[s.k[first], s.k[second] + 1]
        got = _hull_gaps(film, a_all, b_all, p, np.stack([w[a_all[p], f], w[b_all[p], f]]))
        s.la[first] = np.maximum(s.la[first], got[:len(first)])
        s.lb[second] = np.maximum(s.lb[second], got[len(first):])


def _hull_gaps(film: Footage, a_all, b_all, p: np.ndarray, pair_w: np.ndarray, high: bool = False):
    """(n,) the hulls' gap (sweep_bounds.hull_gap, a proven lower bound) of counted pairs p at world
    poses pair_w (2,n,4,4); -inf where a body has no hull or bodies change size. high: also how far
    apart the surfaces are at most (inf where not known)."""
    out, up = np.full(len(p), -np.inf), np.full(len(p), np.inf)
    if film.scale is None and len(p):
        rel = similar_inverse(pair_w[1]) @ pair_w[0]
        for sel in by_shapes(film, a_all[p], b_all[p]):
            got = hull_gap(film.shapes[a_all[p[sel[0]]]], film.shapes[b_all[p[sel[0]]]], rel[sel], high=high)
            if high:
                out[sel], up[sel] = got
            else:
                out[sel] = got
    return (out, up) if high else out


def _plane_heights(film: Footage, a_all, b_all, s: Stretches, pw: np.ndarray) -> np.ndarray:
    """(n,k) the lowest hull vertex above each kept plane at the stretches' middles (-inf: no planes)."""
    out = np.full(s.ha.shape, -np.inf)
    for side in (0, 1):
        sel = np.nonzero(s.side == side)[0]
        if len(sel) == 0:
            continue
        this = a_all[s.p[sel]] if side == 0 else b_all[s.p[sel]]
        w_this, w_other = (pw[0, sel], pw[1, sel]) if side == 0 else (pw[1, sel], pw[0, sel])
        r = similar_inverse(w_other) @ w_this
        for at in by_shapes(film, this):
            out[sel[at]] = heights(hull_points(film.shapes[this[at[0]]]), r[at], s.normals[sel[at]], s.offsets[sel[at]])
    return out


def _unsettled(film: Footage, a: int, b: int, k: int, u: dict) -> dict:
    """A frame pair the sweep could not settle: it fails, naming the bodies, the lowest gap it could
    prove (depth_bound_m: never deeper than that) and the deepest it measured there (depth_m, with
    its time, axis and point); tau lies between the two."""
    near = u["closest"]
    bound = round(max(0.0, -u["bound"]), 6) if np.isfinite(u["bound"]) else None
    depth = 0.0 if near is None else max(0.0, -near["r"])
    axis = np.zeros(3) if near is None else np.asarray(near["axis"], float)
    point = np.zeros(3) if near is None else np.asarray(near["point"], float)
    a_name, b_name = film.names[a], film.names[b]
    if film.static[a] and not film.static[b]:     # name the body that can move first
        a_name, b_name, axis = b_name, a_name, -axis
    f0 = int(film.frames[k])
    return {"frame": f0, "frames": [f0, f0 + 1], "between": True, "unsettled": True, "a": a_name, "b": b_name,
            "depth_m": round(depth, 6), "depth_bound_m": bound,
            "tau_m": round(u["tau"], 6),
            "deepest_frame": round(f0 + (near["t"] if near else 0.5), 4), "stretches": int(u["stretches"]),
            "axis": [round(float(v), 6) for v in axis], "push_m": round(depth, 6),
            "point": [round(float(v), 6) for v in point]}


def _evidence(film: Footage, probe: Probe, a: int, b: int, k: int, L: float, floor: float,
              l0: float, l1: float, hit: dict) -> dict:
    """One failing frame pair: its time of first contact and the deepest point of its sweep."""
    count = [0]

    def measure(t: float, theta: float) -> dict:
        count[0] += 1
        res = probe.at([a], [b], [k], [t], [theta])
        return {key: v[0] for key, v in res.items()}

    tau_k = hit["tau"]
    best = (-hit["r"], hit["t"], hit["axis"], hit["point"], hit["tau"])
    # the deepest point: branch and bound over the frame pair, exact below -tau
    heap = []

    def push(ta, tb, ga, gb):
        bound = -max(float(envelope(ga, gb, L * (tb - ta))), floor)
        heapq.heappush(heap, (-bound, ta, tb, ga, gb))
    tm = hit["t"]
    push(0.0, tm, l0, hit["r"])
    push(tm, 1.0, hit["r"], l1)
    while heap and count[0] < 60:
        neg, ta, tb, ga, gb = heapq.heappop(heap)
        if -neg <= best[0] + DEPTH_RESOLUTION or tb - ta < TIME_RESOLUTION:
            break
        t = 0.5 * (ta + tb)
        m = measure(t, tau_k)
        g = m["low"]
        if -m["r"] > best[0]:
            best = (-m["r"], t, m["axis"], m["point"], m["tau"])
        push(ta, t, ga, g)
        push(t, tb, g, gb)
    depth, t_deep, axis, point, tau_d = best
    contact = _first_contact(measure, l0, L, t_deep)
    a_name, b_name = film.names[a], film.names[b]
    if film.static[a] and not film.static[b]:     # name the body that can move first
        a_name, b_name, axis = b_name, a_name, -np.asarray(axis)
    f0 = int(film.frames[k])
    return {"frame": f0, "frames": [f0, f0 + 1], "between": True, "a": a_name, "b": b_name,
            "contact_frame": round(f0 + contact, 4), "deepest_frame": round(f0 + t_deep, 4),
            "depth_m": round(float(depth), 6), "tau_m": round(float(tau_d), 6),
            "axis": [round(float(v), 6) for v in axis], "push_m": round(float(depth), 6),
            "point": [round(float(v), 6) for v in point], "_probes": count[0]}


def _first_contact(measure, l0: float, L: float, t_end: float) -> float:
    """Earliest fraction in [0, t_end] where the surfaces meet (gap at most a micrometre)."""
    eps = RESOLUTION

    def at(t: float, need: float) -> tuple[float, bool]:
        theta = max(need, eps)
        m = measure(t, theta)
        if m["r"] > theta:
            return max(theta, m["low"]), False
        if theta > eps:
            m = measure(t, eps)
            if m["r"] > eps:
                return max(eps, m["low"]), False
        return float(m["r"]), True
    g0, met0 = at(0.0, max(l0, eps))
    if met0:
        return 0.0
    t = earliest(lambda u, need: at(u * t_end, need), g0, -np.inf, L * t_end, 0.0)
    return t_end if t is None else t * t_end


