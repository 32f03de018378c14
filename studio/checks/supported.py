"""Supported (advisory): no dynamic body floats.

A per-frame support graph: its nodes are the bodies, its sources the ground
(bodies of kind ground/static or flagged static) and the exempt bodies
(self_propelled, buoyant), its edges resting contact (surface distance <=
tau), joints and pivots (always), declared attachments (an allowed overlap
with reason "attachment") and carrying (from the frame a plan `grasp` first
holds to its `release`, or over a hold a motion tool recorded, the grasped body
hangs on the body carrying the named frame). A dynamic body is supported when it reaches a source. Liquids and
effects are not judged. The floating rate F_m is unsupported dynamic
body-frames / dynamic body-frames (exempt bodies are in neither).
"""
from __future__ import annotations

import numpy as np

from studio.checks import events as event_checks
from studio.checks.footage import Footage, excluded_body
from studio.checks.report import Report

NAME = "Supported"


def support(film: Footage) -> tuple[np.ndarray, np.ndarray]:
    """(F,B) supported, and (B,) judged (dynamic, not exempt, not a liquid or effect)."""
    scene, F, B = film.scene, film.n_frames, len(film.names)
    exempt = np.array([scene.body(n).has("self_propelled") or scene.body(n).has("buoyant") for n in film.names], bool)
    gone = np.array([excluded_body(scene, n) for n in film.names], bool)
    judged = ~film.static & ~exempt & ~gone
    sup = np.zeros((F, B), bool)
    sup[:, film.static | exempt] = True
    edges: list[tuple[int, int, np.ndarray]] = []
    always = np.ones(F, bool)
    for j in scene.joints:
        edges.append((film.index(j.parent), film.index(j.child), always))
    for o in scene.allowed_overlaps:
        if o.reason == "attachment":
            edges.append((film.index(o.a), film.index(o.b), always))
    touching = film.touching
    for p, (a, b) in enumerate(film.pairs):
        if touching[:, p].any():
            edges.append((int(a), int(b), touching[:, p]))
    for carrier, body, first, last in carries(film):
        mask = (film.frames >= first) & (film.frames <= last)
        edges.append((film.index(carrier), film.index(body), mask))
    if edges:
        ea = np.array([e[0] for e in edges])
        eb = np.array([e[1] for e in edges])
        em = np.stack([e[2] for e in edges], axis=1)          # (F,E)
        for _ in range(B):
            before = sup.sum()
            np.logical_or.at(sup, (slice(None), ea), sup[:, eb] & em)
            np.logical_or.at(sup, (slice(None), eb), sup[:, ea] & em)
            if sup.sum() == before:
                break
    return sup, judged


def carries(film: Footage) -> list[tuple[str, str, int, int]]:
    """(carrier body, carried body, first frame, last frame) from the plan's grasp/release events
    and from the holds the motion tools recorded (film.extra["attachments"])."""
    held = _tool_holds(film)
    plan_events = list((film.plan or {}).get("events", []) or [])
    if not plan_events or film.n_frames == 0:
        return held
    result = event_checks.evaluate(film, plan_events)
    frames = {f.name: f.body for f in film.scene.frames}
    out = []
    for g in plan_events:
        if g.get("kind") != "grasp" or not (result.get(g["id"]) or (None,))[0]:
            continue
        fr, body = list(g.get("subjects", []))[:2]
        if fr not in frames or body not in film.names:
            continue
        last = int(film.frames[-1])
        for r in plan_events:
            if r.get("kind") == "release" and list(r.get("subjects", []))[:2] == [fr, body]:
                rr = result.get(r["id"])
                if rr and rr[0]:
                    last = rr[1]
        out.append((frames[fr], body, result[g["id"]][1], last))
    return out + [h for h in held if h not in out]


def _tool_holds(film: Footage) -> list[tuple[str, str, int, int]]:
    """Carries the motion tools recorded. A hand on a part that hangs on a joint (a door's knob, a
    drawer's pull) drives the part, it does not carry it: the joint supports the part, and the hold
    is judged by EventsSatisfied's hold check, not as a carry."""
    frames = {f.name: f.body for f in film.scene.frames}
    free = set(film.scene.roots)
    out = []
    for a in film.extra.get("attachments", []) or []:
        if a.get("body") not in free:
            continue
        carrier = frames.get(a.get("frame"), a.get("frame"))
        if carrier in film.names and a.get("body") in film.names and a.get("end", -1) >= a.get("start", 0):
            out.append((carrier, a["body"], int(a["start"]), int(a["end"])))
    return out


def verify(film: Footage) -> Report:
    sup, judged = support(film)
    n = int(judged.sum()) * film.n_frames
    if n == 0:
        return Report(NAME, "not_applicable", [], {"floating_rate": 0.0, "body_frames": 0,
                                                   "reason": "no dynamic body to judge"})
    floating = ~sup & judged[None, :]
    f_idx, b_idx = np.nonzero(floating)
    evidence = [{"frame": int(film.frames[f]), "body": film.names[b]} for f, b in zip(f_idx, b_idx)]
    rate = len(evidence) / n
    return Report(NAME, "fail" if evidence else "pass", evidence,
                  {"floating_rate": rate, "body_frames": n, "floating_body_frames": len(evidence)})
