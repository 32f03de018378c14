"""SupportMargin (advisory): a standing character keeps its centre of mass over its feet.

A character is a group of bodies joined by joints. At each frame where some
of its bodies touch a static body, the support polygon is the convex hull
(in the ground plane) of its lowest surface samples there (within 1 cm of
the lowest), and the margin is how far the mass-weighted centre of mass lies
inside it (negative: outside). Evidence: frame, group, margin_m.
"""
from __future__ import annotations

import numpy as np

from studio.checks.footage import Footage
from studio.checks.report import Report

NAME = "SupportMargin"


def characters(film: Footage) -> dict[str, list[int]]:
    """Root body -> indices of the bodies in its joint tree (trees with at least one joint)."""
    out: dict[str, list[int]] = {}
    for j in film.scene.joints:
        out.setdefault(film.scene.group_root(j.child), [])
    for i, n in enumerate(film.names):
        r = film.scene.group_root(n)
        if r in out:
            out[r].append(i)
    return out


def verify(film: Footage) -> Report:
    groups = characters(film)
    if not groups or film.n_frames == 0:
        return Report(NAME, "not_applicable", [], {"reason": "no articulated character"})
    touching = film.touching
    ev, judged = [], 0
    for root, members in groups.items():
        mset = set(members)
        feet = [p for p, (a, b) in enumerate(film.pairs)
                if (a in mset and film.static[b]) or (b in mset and film.static[a])]
        if not feet:
            continue
        mass = np.array([film.scene.body(film.names[i]).mass for i in members])
        com = sum(m * (np.einsum("fij,j->fi", film.world[i, :, :3, :3], film.shapes[i].centroid)
                       + film.world[i, :, :3, 3]) for m, i in zip(mass, members)) / mass.sum()
        for f in np.nonzero(touching[:, feet].any(axis=1))[0]:
            bodies = {int(film.pairs[p, 0] if film.pairs[p, 0] in mset else film.pairs[p, 1])
                      for p in feet if touching[f, p]}
            pts = np.concatenate([np.einsum("ij,cj->ci", film.world[i, f, :3, :3], film.shapes[i].reps)
                                  + film.world[i, f, :3, 3] for i in bodies])
            low = pts[pts[:, 2] <= pts[:, 2].min() + 0.01, :2]
            margin = inside_margin(low, com[f, :2])
            judged += 1
            if margin < 0:
                ev.append({"frame": int(film.frames[f]), "group": root, "margin_m": round(float(margin), 5)})
    if judged == 0:
        return Report(NAME, "not_applicable", [], {"reason": "no character touches the ground"})
    return Report(NAME, "fail" if ev else "pass", ev, {"frames_judged": judged, "frames_outside": len(ev)})


def inside_margin(points: np.ndarray, p: np.ndarray) -> float:
    """Signed distance of p inside the convex hull of 2-D points (negative outside)."""
    hull = _hull(points)
    if len(hull) < 3:
        if len(hull) == 1:
            return -float(np.linalg.norm(p - hull[0]))
        a, b = hull[0], hull[1]
        t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-12), 0, 1)
        return -float(np.linalg.norm(p - (a + t * (b - a))))
    e = np.roll(hull, -1, axis=0) - hull
    n = np.stack([e[:, 1], -e[:, 0]], 1) / np.linalg.norm(e, axis=1, keepdims=True)   # outward (ccw hull)
    d = np.einsum("ij,ij->i", p - hull, n)
    if np.all(d <= 0):
        return float(-d.max())
    t = np.clip(np.einsum("ij,ij->i", p - hull, e) / np.einsum("ij,ij->i", e, e), 0, 1)
    return -float(np.min(np.linalg.norm(p - (hull + t[:, None] * e), axis=1)))


def _hull(pts: np.ndarray) -> np.ndarray:
    """Convex hull (counter-clockwise) by the monotone chain."""
    pts = np.unique(np.round(pts, 9), axis=0)
    if len(pts) < 3:
        return pts

    def half(seq):
        out = []
        for q in seq:
            while len(out) >= 2 and _cross(out[-1] - out[-2], q - out[-2]) <= 0:
                out.pop()
            out.append(q)
        return out
    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])
