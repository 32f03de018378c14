"""NoPenetration (required): no two bodies interpenetrate deeper than tau(A,B) at any frame.

tau(A,B) = max(1 mm, min(5 mm, 0.5·min(l_A, l_B))), l = thickness (smallest
extent of the oriented bounding box), as in the paper's public scorer. Pairs
that never count: declared overlaps (scene.allowed_overlaps), the two links
of one joint, liquids and effects, consumable bodies, two static bodies.
A body wholly inside another counts (its samples lie deep in the other's
distance field). Evidence per counted pair-frame: frame, a, b, depth_m, tau_m,
axis (unit, pushes a out of b), push_m, point; when one body is static, a is
the other one (the one a repair can move). The penetration rate (frames
with at least one counted pair / frames) is the scorer's P_m.

Between frames (`sweep`): a counted pair whose two frames both pass fails at
that frame pair when the motion between them (as the renderer interpolates it)
takes it deeper than tau; its evidence has frame (the first of the two),
frames, between: true, contact_frame (when the surfaces first meet),
deepest_frame, and the depth, axis and point of the deepest moment. Those frame
pairs are counted apart (frame_pairs_with_penetration, between_rate); P_m stays
per frame, as the paper's scorer counts it. A frame pair the sweep cannot
settle either way fails too (unsettled: true, with the deepest it measured and
the lowest gap it proved, depth_bound_m), counted in frame_pairs_unsettled: a
verdict never passes on a sweep it did not prove.
"""
from __future__ import annotations

import numpy as np

from studio.checks.footage import Footage
from studio.checks.report import Report
from studio.checks.sweep import sweep

NAME = "NoPenetration"


def verify(film: Footage) -> Report:
    counted = np.nonzero(film.counted)[0]
    if len(counted) == 0 or film.n_frames == 0:
        return Report(NAME, "not_applicable", [], {"penetration_rate": 0.0, "frames": film.n_frames,
                                                   "reason": "no pair of bodies that could count"})
    c = film.contacts
    tau_k = film.tau_fp[c.frame, c.pair]
    hit = film.counted[c.pair] & (-c.gap > tau_k)
    idx = np.nonzero(hit)[0]
    idx = idx[np.lexsort((c.pair[idx], c.frame[idx]))]
    evidence = []
    for k in idx:
        a, b = film.pairs[c.pair[k]]
        axis = c.axis[k]
        if film.static[a] and not film.static[b]:     # name the body that can move first
            a, b, axis = b, a, -axis
        depth = float(-c.gap[k])
        evidence.append({"frame": int(film.frames[c.frame[k]]), "a": film.names[a], "b": film.names[b],
                         "depth_m": round(depth, 6), "tau_m": round(float(tau_k[k]), 6),
                         "axis": [round(float(v), 6) for v in axis], "push_m": round(depth, 6),
                         "point": [round(float(v), 6) for v in c.point[k]]})
    bad_frames = np.unique(c.frame[idx])
    rate = len(bad_frames) / film.n_frames
    between, swept = sweep(film)
    pairs = max(film.n_frames - 1, 1)
    metrics = {"penetration_rate": rate, "frames": film.n_frames, "frames_with_penetration": len(bad_frames),
               "pair_frames": int(len(counted) * film.n_frames), "pair_frames_measured": int(len(c.frame)),
               "max_depth_m": round(float(max((e["depth_m"] for e in evidence), default=0.0)), 6),
               "frame_pairs_with_penetration": swept["frame_pairs_with_penetration"],
               "between_rate": swept["frame_pairs_with_penetration"] / pairs,
               "frame_pairs_unsettled": swept["frame_pairs_unsettled"],
               "max_depth_between_m": round(float(max((e["depth_m"] for e in between if not e.get("unsettled")),
                                                      default=0.0)), 6),
               "sweep": swept}
    evidence = sorted(evidence + between, key=lambda e: (e["frame"], "between" in e))
    return Report(NAME, "fail" if evidence else "pass", evidence, metrics)
