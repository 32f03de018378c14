"""A new key state inside a segment splits it: `A..B` becomes `A..K` and `K..B`.

The plan's motion entry is replaced by two, each keeping the segment's tool and
parameters, and the key joins the plan's states (in the shot that holds its
frame). The baked tracks of `A..B` are cut at the key into two rows that play
exactly as before but are marked as cut (`CUT` in their bounds hash), so they
read as "bake again" until a bake authors each half for its own states.

Parameters are copied to both halves, except those that name a place or a share
of the segment, which would otherwise mean something else over a shorter span:

- `begin`, `lead` (shares of the segment before the reach / the first step) and
  `settle` (the share after the last step) become shares of each half that
  keep the frame they named; a half the frame falls outside gets 0, and a
  share past its schema's maximum is set to the maximum, said in a note;
- `waypoints` of a walk (also under `walk`) are divided where the key's root
  lies along the path: the ones before it go to the first half, the rest to
  the second;
- `blend` of a hold (frames at the end moving to the second state) is divided
  between the halves by the frames it covers in each;
- a simulation (`simulate`, `planar`) cannot restart at the key, whose
  velocities no state records: the second half gets `from` the first half's
  start state, so the run goes on from where it began.

Every such change is said in the split's notes; nothing else is touched.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from studio.scene.pose import Tracks

from studio.timeline.gate import parse_segment
from studio.timeline.plan import plan_segments
from studio.timeline.shots import shot_at

CUT = "cut:"                          # bounds hash of a row cut by a key: never a real hash
SHARES_AT_START = {"begin": 0.95, "lead": 0.8}      # share: its schema's maximum
SHARES_AT_END = {"settle": 0.8}
RUNS_FROM_START = ("simulate", "planar")


@dataclass
class Split:
    """What a key at `frame` does to segment `segment` (of `a_frame..b_frame`)."""
    segment: str
    state: str
    frame: int
    a_frame: int
    b_frame: int
    halves: tuple[str, str] = ("", "")
    entries: tuple[dict, dict] | None = None        # the plan's two motion entries (None: the plan lists none)
    notes: list[str] = field(default_factory=list)


def cut_marker(segment: str, state: str) -> str:
    return f"{CUT}{segment}@{state}"


def cut_from(bounds_hash: str | None) -> tuple[str, str] | None:
    """(segment, key) a row was cut from, or None for a row baked for its own states."""
    if not bounds_hash or not bounds_hash.startswith(CUT):
        return None
    seg, _, key = bounds_hash[len(CUT):].partition("@")
    return seg, key


def stale_reason(bounds_hash: str | None) -> str:
    """Why a baked row is not current, in words."""
    cut = cut_from(bounds_hash)
    if cut:
        return f"cut from {cut[0]} when {cut[1]} was keyed inside it; bake it again"
    return "baked against states that have changed since; bake it again"


def _share_start(name: str, share: float, a: int, k: int, b: int) -> tuple[float, float, list[str]]:
    at = a + share * (b - a)
    first = (at - a) / (k - a) if at < k else 1.0
    second = (at - k) / (b - k) if at > k else 0.0
    notes = []
    top = SHARES_AT_START[name]
    if first > top:
        notes.append(f"{name}: frame {at:.0f} is at or past the key; the first half takes the most it allows, {top}")
        first = top
    return round(first, 6), round(second, 6), notes


def _share_end(name: str, share: float, a: int, k: int, b: int) -> tuple[float, float, list[str]]:
    at = b - share * (b - a)
    first = (k - at) / (k - a) if at < k else 0.0
    second = (b - at) / (b - k) if at > k else 1.0
    notes = []
    top = SHARES_AT_END[name]
    if second > top:
        notes.append(f"{name}: frame {at:.0f} is at or before the key; the second half takes the most it allows, {top}")
        second = top
    return round(first, 6), round(second, 6), notes


def _divide_waypoints(points: list, start_xy, key_xy, end_xy) -> tuple[list, list]:
    """Waypoints before the key's place along the path, and after it."""
    path = [np.asarray(start_xy, float)[:2], *[np.asarray(p, float) for p in points], np.asarray(end_xy, float)[:2]]
    key = np.asarray(key_xy, float)[:2]
    best, where = np.inf, 0.0
    for i, (p, q) in enumerate(zip(path, path[1:])):
        d = q - p
        t = float(np.clip((key - p) @ d / max(float(d @ d), 1e-12), 0.0, 1.0))
        dist = float(np.linalg.norm(p + t * d - key))
        if dist < best - 1e-9:
            best, where = dist, i + t
    # waypoint j sits at path position j + 1
    return [p for j, p in enumerate(points) if j + 1 < where], [p for j, p in enumerate(points) if j + 1 > where]


def split_params(tool: str, params: dict, a: int, k: int, b: int, roots: tuple[dict, dict, dict],
                 first_state: str) -> tuple[dict, dict, list[str]]:
    """The parameters of each half and what was changed, in words (see the module docstring).
    `roots` are the root transforms of the first state, the key and the second state."""
    one, two = copy.deepcopy(params), copy.deepcopy(params)
    notes: list[str] = []
    for scope in ("", "walk"):
        p1, p2 = (one, two) if not scope else (one.get(scope), two.get(scope))
        if not isinstance(p1, dict):
            continue
        where = f"{scope}." if scope else ""
        for name in SHARES_AT_START:
            if isinstance(p1.get(name), (int, float)) and p1[name]:
                p1[name], p2[name], said = _share_start(name, float(p1[name]), a, k, b)
                notes += [f"{where}{s}" for s in said] + [f"{where}{name} {params_at(params, scope, name)} → "
                                                          f"{p1[name]} and {p2[name]}"]
        for name in SHARES_AT_END:
            if isinstance(p1.get(name), (int, float)) and p1[name]:
                p1[name], p2[name], said = _share_end(name, float(p1[name]), a, k, b)
                notes += [f"{where}{s}" for s in said] + [f"{where}{name} {params_at(params, scope, name)} → "
                                                          f"{p1[name]} and {p2[name]}"]
        if p1.get("waypoints") and isinstance(p1.get("root"), str):
            root = p1["root"]
            if all(root in r for r in roots):
                before, after = _divide_waypoints(p1["waypoints"], roots[0][root], roots[1][root], roots[2][root])
                p1["waypoints"], p2["waypoints"] = before, after
                notes.append(f"{where}waypoints: {len(before)} before the key, {len(after)} after it")
    if tool == "hold" and isinstance(one.get("blend"), int) and one["blend"]:
        blend = one["blend"]
        one["blend"] = max(0, min(k - a, k - (b - blend)))
        two["blend"] = min(blend, b - k)
        notes.append(f"blend {blend} → {one['blend']} and {two['blend']} frames")
    if tool in RUNS_FROM_START:
        start = params.get("from") or first_state
        two["from"] = start
        notes.append(f"{tool}: the second half runs on from {start!r} (a simulation cannot restart at the key)")
    return one, two, notes


def params_at(params: dict, scope: str, name: str):
    return (params.get(scope) or {}).get(name) if scope else params.get(name)


def find_split(plan: dict | None, states: dict, state_id: str, frame: int) -> Split | None:
    """The plan segment a new key at `frame` falls strictly inside, split; None if none does
    (or the plan already names the state). `states` are the stored states by id."""
    if not plan or any(s.get("id") == state_id for s in plan.get("states", []) or []):
        return None
    for seg in plan_segments(plan):
        a, b = parse_segment(seg)
        sa, sb = states.get(a), states.get(b)
        fa = sa.frame if sa else _planned_frame(plan, a)
        fb = sb.frame if sb else _planned_frame(plan, b)
        if fa is None or fb is None or not fa < frame < fb:
            continue
        out = Split(seg, state_id, frame, fa, fb, (f"{a}..{state_id}", f"{state_id}..{b}"))
        entry = next((m for m in plan.get("motion", []) or [] if m.get("segment") == seg), None)
        if entry is not None:
            tool = entry.get("tool")
            p1, p2, notes = (entry.get("params") or {}, entry.get("params") or {}, [])
            if tool and entry.get("params"):
                roots = tuple((states[s].pose.roots if s in states else {}) for s in (a, state_id, b))
                p1, p2, notes = split_params(tool, entry["params"], fa, frame, fb, roots, a)
            out.entries = tuple({**copy.deepcopy(entry), "segment": half, **({"params": p} if "params" in entry
                                                                              or p else {})}
                                for half, p in zip(out.halves, (p1, p2)))
            out.notes = notes
        return out
    return None


def _planned_frame(plan: dict, state_id: str) -> int | None:
    for s in plan.get("states", []) or []:
        if s.get("id") == state_id and isinstance(s.get("frame"), int):
            return int(s["frame"])
    return None


def split_plan(plan: dict, split: Split, shot: str, description: str, states) -> dict:
    """A copy of the plan with the key among its states and the segment's entry in two."""
    out = copy.deepcopy(plan)
    entry = {"id": split.state, "frame": int(split.frame), "shot": shot or shot_at(plan, states, split.frame)}
    if description:
        entry["description"] = description
    out["states"] = sorted([*out.get("states", []), entry], key=lambda s: int(s.get("frame", 0)))
    if split.entries is not None:
        motion = []
        for m in out.get("motion", []):
            motion += list(split.entries) if m.get("segment") == split.segment else [m]
        out["motion"] = motion
    return out


def cut_tracks(tracks: Tracks, frame: int) -> tuple[Tracks, Tracks]:
    """The tracks up to and including `frame`, and from it on (the key's frame is in both)."""
    i = frame - tracks.frame_start
    if not 0 < i < tracks.n_frames - 1:
        raise ValueError(f"frame {frame} is not inside the tracks {tracks.frame_start}..{tracks.frame_end}")
    first = Tracks(tracks.frame_start, {k: v[:i + 1].copy() for k, v in tracks.roots.items()},
                   {k: v[:i + 1].copy() for k, v in tracks.joints.items()})
    second = Tracks(frame, {k: v[i:].copy() for k, v in tracks.roots.items()},
                    {k: v[i:].copy() for k, v in tracks.joints.items()})
    return first, second


def cut_record(record: dict | None, segment: str, frame: int) -> tuple[dict | None, dict | None]:
    """What the tool reported for the segment, for each half: holds clipped to it, notes marked as cut."""
    if not record:
        return None, None
    out = []
    for lo, hi in ((None, frame), (frame, None)):
        holds = []
        for h in record.get("attachments", []) or []:
            s, e = h.get("start"), h.get("end")
            if not (isinstance(s, int) and isinstance(e, int)):
                holds.append(dict(h))
                continue
            s2, e2 = max(s, lo) if lo is not None else s, min(e, hi) if hi is not None else e
            if s2 <= e2:
                holds.append({**h, "start": s2, "end": e2})
        out.append({**copy.deepcopy(record), "attachments": holds,
                    "notes": [f"cut from {segment}: {n}" for n in record.get("notes", []) or []]})
    return out[0], out[1]
