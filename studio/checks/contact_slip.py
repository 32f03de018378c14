"""ContactSlip (advisory): a held or resting body does not slide on what holds it.

Carrying (between a plan grasp and its release, or over a hold a motion tool
recorded; overlapping holds of one body by one carrier judged once): the
carried body's centroid, seen from the carrier, should not move; a move of
more than 2 mm between two frames is slip. Resting (a dynamic body touching a static one on two frames
in a row): the material point of the dynamic body at the contact moves
tangentially by more than 2 mm between the frames (rolling moves it by ~0).
Evidence: frame, body, support, slip_m.
"""
from __future__ import annotations

import numpy as np

from studio.checks.contacts import similar_inverse as invert

from studio.checks.footage import Footage
from studio.checks.report import Report
from studio.checks.supported import carries

NAME = "ContactSlip"
SLIP_M = 0.002


def verify(film: Footage) -> Report:
    if film.n_frames < 2:
        return Report(NAME, "not_applicable", [], {"reason": "fewer than two frames"})
    ev = []
    for carrier, body, idx in held_runs(film):
        ic, ib = film.index(carrier), film.index(body)
        rel = invert(film.world[ic, idx]) @ film.world[ib, idx]
        c = np.einsum("fij,j->fi", rel[:, :3, :3], film.shapes[ib].centroid) + rel[:, :3, 3]
        step = np.linalg.norm(np.diff(c, axis=0), axis=1)
        for k in np.nonzero(step > SLIP_M)[0]:
            ev.append({"frame": int(film.frames[idx[k + 1]]), "body": body, "support": carrier,
                       "slip_m": round(float(step[k]), 6), "while": "carried"})
    touching = film.touching
    c = film.contacts
    for p, (a, b) in enumerate(film.pairs):
        if film.static[a] == film.static[b]:
            continue
        dyn = b if film.static[a] else a
        touch = touching[:, p]
        both = np.nonzero(touch[:-1] & touch[1:])[0]
        if len(both) == 0:
            continue
        sel = np.nonzero(c.pair == p)[0]
        at = {int(f): k for f, k in zip(c.frame[sel], sel)}
        ks = np.array([at[f] for f in both])
        point, normal = c.point[ks], c.axis[ks]
        w0, w1 = film.world[dyn, both], film.world[dyn, both + 1]
        local = np.einsum("fij,fj->fi", invert(w0)[:, :3, :3], point) + invert(w0)[:, :3, 3]
        moved = np.einsum("fij,fj->fi", w1[:, :3, :3], local) + w1[:, :3, 3] - point
        tangential = moved - np.sum(moved * normal, axis=1, keepdims=True) * normal
        slip = np.linalg.norm(tangential, axis=1)
        for k in np.nonzero(slip > SLIP_M)[0]:
            ev.append({"frame": int(film.frames[both[k] + 1]), "body": film.names[dyn],
                       "support": film.names[b if dyn == a else a], "slip_m": round(float(slip[k]), 6),
                       "while": "resting"})
    ev.sort(key=lambda e: e["frame"])
    return Report(NAME, "fail" if ev else "pass", ev, {"slips": len(ev)})


def held_runs(film: Footage) -> list[tuple[str, str, np.ndarray]]:
    """(carrier, carried, frame indices) for every unbroken run of frames a carrier holds a body.
    A hold the plan's events say and the same hold a motion tool recorded overlap; their union is
    judged once, so one slip is one row."""
    spans: dict[tuple[str, str], np.ndarray] = {}
    for carrier, body, first, last in carries(film):
        held = spans.setdefault((carrier, body), np.zeros(film.n_frames, bool))
        held |= (film.frames >= first) & (film.frames <= last)
    out = []
    for (carrier, body), held in spans.items():
        edges = np.flatnonzero(np.diff(np.concatenate([[0], held.astype(int), [0]])))
        out += [(carrier, body, np.arange(a, b)) for a, b in zip(edges[::2], edges[1::2])]
    return out
