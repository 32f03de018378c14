"""EventsSatisfied (required): each plan event's predicate holds inside its window.

Predicates, evaluated on the frames of the window that were evaluated:
- contact [A, B]: surface distance <= tau(A,B) + params.tolerance (default 0)
  at some frame.
- grasp [named_frame, body]: the frame's origin within params.tolerance
  (default 0.03 m) of the body's surface (or inside it) at some frame.
- release [named_frame, body]: at the window's last frame the origin is
  farther than the tolerance (default 0.03 m) from the body, and a grasp of
  the same pair held before that frame.
- reach [a, b] (named frames or bodies): origins within params.tolerance
  (default 0.05 m) at some frame.
- enter_region [body], params {min, max}: the body's origin inside the box
  at some frame.
- pass_through [body], params {point, normal}: the body's centroid is on the
  negative side of the plane at one frame and on the positive side at the next.
- order [event ids]: each holds, and their first frames never decrease.
An event with `after` must first hold no earlier than those events' first frames.
An event whose window misses the evaluated frames is not evaluated.

Contact, grasp and reach are also met between two frames of the window, as the
film moves there (`event_times`): where no frame meets one, or where its first
time is ordered against another event's (order, after), the first time is then
a fraction of a frame (metrics first_frames, and met_between: "ball touches
domino_1 at 1034.6"); else it is the first frame that meets it.

Besides the plan's events, every hold the motion tools recorded is judged at
every frame and between frames (`studio.checks.holds`): an effector that
drifts from its grip beyond the hold's tolerance fails this check. The report
is not_applicable only when no event and no hold is evaluable.
"""
from __future__ import annotations

import numpy as np

from studio.scene.kinematics import frame_world

from studio.checks.contacts import tau
from studio.checks.event_times import first_contact, first_near, named_point
from studio.checks.footage import Footage
from studio.checks.holds import check_holds
from studio.checks.report import Report

NAME = "EventsSatisfied"
DEFAULT_TOL = {"grasp": 0.03, "release": 0.03, "reach": 0.05, "contact": 0.0}


def verify(film: Footage) -> Report:
    events = list((film.plan or {}).get("events", []) or [])
    outcome = evaluate(film, events)
    evidence, evaluated, held = [], 0, 0
    for e in events:
        ok, first, reason = outcome[e["id"]]
        if ok is None:
            continue
        evaluated += 1
        held += bool(ok)
        if not ok:
            evidence.append({"event": e["id"], "kind": e.get("kind"), "window": list(e.get("window", [])),
                             "reason": reason})
    drifting, hold_metrics = check_holds(film)
    evidence += drifting
    metrics = {"events": len(events), "evaluated": evaluated, "held": held,
               "first_frames": {k: v[1] for k, v in outcome.items() if v[1] is not None},
               "met_between": dict(film.extra.get("met_between", {})), **hold_metrics}
    if evaluated == 0 and not hold_metrics["holds"] and not drifting:
        return Report(NAME, "not_applicable", [], dict(metrics, reason="no event window and no hold covers the "
                                                                        "evaluated frames"))
    return Report(NAME, "fail" if evidence else "pass", evidence, metrics)


def evaluate(film: Footage, events: list[dict]) -> dict[str, tuple[bool | None, int | None, str]]:
    """Per event id: (holds or None if not evaluable, first frame it holds, reason if not); kept on the footage."""
    if "events" in film.extra:
        return film.extra["events"]
    out: dict[str, tuple] = {}
    film.extra["events"] = out
    for e in events:
        if e.get("kind") != "order":
            out[e["id"]] = _one(film, e, out)
    for e in events:   # grasps are evaluated before releases above; order needs every other first
        if e.get("kind") == "order":
            out[e["id"]] = _order(e, out)
    for e in events:
        ok, first, _ = out[e["id"]]
        if not ok:
            continue
        for dep in e.get("after", []) or []:
            d = out.get(dep)
            if d is None or d[0] is None:
                continue
            if not d[0]:
                out[e["id"]] = (False, first, f"must follow {dep!r}, which never holds")
            elif first < d[1]:
                out[e["id"]] = (False, first, f"first holds at frame {first}, before {dep!r} (frame {d[1]})")
    return out


def window_frames(film: Footage, e: dict) -> np.ndarray:
    """Indices of evaluated frames inside the event's window (empty when it cannot be judged here)."""
    try:
        f0, f1 = int(e["window"][0]), int(e["window"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return np.zeros(0, np.int64)
    if film.extra.get("whole_windows") and not (f0 >= film.frames[0] and f1 <= film.frames[-1]):
        return np.zeros(0, np.int64)
    return np.nonzero((film.frames >= f0) & (film.frames <= f1))[0]


def origin(film: Footage, name: str) -> np.ndarray:
    """(F,3) world origin of a named frame or a body."""
    names = {f.name for f in film.scene.frames}
    if name in names:
        return frame_world(film.scene, {b: film.world[i] for i, b in enumerate(film.names)}, name)[:, :3, 3]
    if name in film.names:
        return film.world[film.index(name), :, :3, 3]
    raise KeyError(f"no named frame or body {name!r}")


def surface_distance(film: Footage, body: str, points: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Signed distance (negative inside) of world points (len(idx),3) to `body` at frames idx."""
    b = film.index(body)
    w = film.world[b, idx]
    rt = np.swapaxes(w[:, :3, :3], 1, 2)
    local = np.einsum("fij,fj->fi", rt, points - w[:, :3, 3])
    return film.shapes[b].exact_signed(local)[0]


def _one(film: Footage, e: dict, done: dict) -> tuple[bool | None, int | None, str]:
    idx = window_frames(film, e)
    if len(idx) == 0:
        return None, None, "window outside the evaluated frames"
    kind, subj, params = e.get("kind"), list(e.get("subjects", [])), dict(e.get("params", {}) or {})
    tol = float(params.get("tolerance", DEFAULT_TOL.get(kind, 0.0)))
    between: tuple = (None, "")            # how to find the first time it is met between frames
    try:
        if kind == "contact":
            a, b = subj[0], subj[1]
            ia, ib = film.index(a), film.index(b)
            t = tau(film.shapes[ia].thickness, film.shapes[ib].thickness)
            gap = film.pair_gap(a, b, t + tol)[idx]
            hold = gap <= t + tol
            between = (lambda: first_contact(film, a, b, t + tol, idx, gap), f"{a} touches {b}")
            why = f"{a} and {b} never come within {t + tol:.4f} m (closest {_fmt(gap.min())})"
        elif kind in ("grasp", "release"):
            fr, body = subj[0], subj[1]
            d = surface_distance(film, body, origin(film, fr)[idx], idx)
            if kind == "release":
                grasp = _grasp_of(film, fr, body, done)
                last = idx[-1:]
                if grasp is None:
                    return False, None, f"no grasp of {body} by {fr} holds before the release"
                if grasp >= film.frames[last[0]]:
                    return False, None, f"the grasp of {body} first holds at {grasp}, not before the release"
                ok = bool(d[-1] > tol)
                return ok, (int(film.frames[last[0]]) if ok else None), \
                    "" if ok else f"{fr} is still {_fmt(d[-1])} from {body} at frame {int(film.frames[last[0]])}"
            hold = d <= tol
            between = (lambda: first_near(film, named_point(film, fr), body, tol, idx, d), f"{fr} reaches {body}")
            why = f"{fr} never comes within {tol} m of {body}'s surface (closest {_fmt(d.min())})"
        elif kind == "reach":
            d = np.linalg.norm(origin(film, subj[0])[idx] - origin(film, subj[1])[idx], axis=1)
            hold = d <= tol
            between = (lambda: first_near(film, named_point(film, subj[0]), named_point(film, subj[1]), tol, idx, d),
                       f"{subj[0]} reaches {subj[1]}")
            why = f"{subj[0]} never comes within {tol} m of {subj[1]} (closest {_fmt(d.min())})"
        elif kind == "enter_region":
            p = origin(film, subj[0])[idx]
            lo, hi = np.asarray(params["min"], float), np.asarray(params["max"], float)
            hold = np.all((p >= lo) & (p <= hi), axis=1)
            why = f"{subj[0]} never enters the region {lo.tolist()}..{hi.tolist()}"
        elif kind == "pass_through":
            b = film.index(subj[0])
            w = film.world[b, idx]
            c = np.einsum("fij,j->fi", w[:, :3, :3], film.shapes[b].centroid) + w[:, :3, 3]
            s = (c - np.asarray(params["point"], float)) @ np.asarray(params["normal"], float)
            hold = np.r_[False, (s[:-1] < 0) & (s[1:] >= 0)]
            why = f"{subj[0]} never passes from the negative to the positive side of the plane"
        else:
            return False, None, f"unknown event kind {kind!r}"
    except (KeyError, IndexError, TypeError, ValueError) as err:
        msg = err.args[0] if isinstance(err, KeyError) and err.args else err
        return False, None, f"cannot evaluate: {msg}"
    hits = np.nonzero(hold)[0]
    # between frames: where no frame meets it, or where its first time is ordered against another's
    when = between[0]() if between[0] is not None and (len(hits) == 0 or e["id"] in _timed(film)) else None
    if when is not None and (len(hits) == 0 or when < film.frames[idx[hits[0]]]):
        first = round(float(when), 4)          # met between two frames, first
        film.extra.setdefault("met_between", {})[e["id"]] = f"{between[1]} at {first:.1f}"
        return True, first, ""
    if len(hits) == 0:
        return False, None, why
    return True, int(film.frames[idx[hits[0]]]), ""


def _timed(film: Footage) -> set[str]:
    """Events whose first time is compared with another's (order subjects, `after` on either side)."""
    if "timed_events" not in film.extra:
        out: set[str] = set()
        for e in (film.plan or {}).get("events", []) or []:
            if e.get("kind") == "order":
                out |= {str(i) for i in e.get("subjects", []) or []}
            if e.get("after"):
                out |= {str(e.get("id"))} | {str(i) for i in e["after"]}
        film.extra["timed_events"] = out
    return film.extra["timed_events"]


def _grasp_of(film: Footage, fr: str, body: str, done: dict) -> int | None:
    for e in (film.plan or {}).get("events", []) or []:
        if e.get("kind") == "grasp" and list(e.get("subjects", []))[:2] == [fr, body]:
            r = done.get(e["id"])
            if r and r[0]:
                return r[1]
    return None


def _order(e: dict, out: dict) -> tuple[bool | None, int | None, str]:
    ids = list(e.get("subjects", []))
    firsts = []
    for i in ids:
        r = out.get(i)
        if r is None:
            return False, None, f"no event {i!r}"
        if r[0] is None:
            return None, None, f"{i!r} cannot be evaluated here"
        if not r[0]:
            return False, None, f"{i!r} never holds"
        firsts.append(r[1])
    for (a, fa), (b, fb) in zip(zip(ids, firsts), zip(ids[1:], firsts[1:])):
        if fb < fa:
            return False, None, f"{b!r} first holds at frame {fb}, before {a!r} (frame {fa})"
    return True, (firsts[-1] if firsts else None), ""


def _fmt(v: float) -> str:
    return "none in range" if not np.isfinite(v) else f"{float(v):.4f} m"
