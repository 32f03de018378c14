"""AnimationWellFormed (required): the baked tracks can be played as they are.

Every root body and movable joint of the scene has a track; all tracks have
the same length; no value is NaN or infinite; every root rotation is a unit
quaternion (within 1e-3); every frame the plan's shots and the storyboard
states ask for is baked; and the tracks hit each storyboard state exactly at
its frame (positions and joint values within 1e-6, rotations within 1e-6 of
the same or the opposite quaternion). Evidence: frame, body | joint | state,
reason; a run of bad frames is one item with its frames [first, last].
"""
from __future__ import annotations

import numpy as np

from studio.checks.footage import Footage
from studio.checks.joint_limits import runs
from studio.checks.report import Report

NAME = "AnimationWellFormed"
HIT_TOL = 1e-6


def verify(film: Footage) -> Report:
    scene, tr = film.scene, film.tracks
    ev: list[dict] = []
    n = tr.n_frames
    for root in scene.roots:
        a = tr.roots.get(root)
        if a is None:
            ev.append({"frame": tr.frame_start, "body": root, "reason": "no track for this root body"})
            continue
        if a.shape != (n, 7):
            ev.append({"frame": tr.frame_start, "body": root,
                       "reason": f"track shape {list(a.shape)}, expected [{n}, 7]"})
            continue
        _runs(ev, film, ~np.all(np.isfinite(a), axis=1), "body", root, "NaN or infinite value")
        norm = np.linalg.norm(np.nan_to_num(a[:, 3:]), axis=1)
        _runs(ev, film, np.isfinite(a).all(1) & (np.abs(norm - 1) > 1e-3), "body", root,
              "rotation is not a unit quaternion")
    for j in scene.joints:
        if j.type == "fixed":
            continue
        q = tr.joints.get(j.name)
        want = (n, 3) if j.type == "ball" else (n,)
        if q is None:
            ev.append({"frame": tr.frame_start, "joint": j.name, "reason": "no track for this joint"})
        elif q.shape != want:
            ev.append({"frame": tr.frame_start, "joint": j.name,
                       "reason": f"track shape {list(q.shape)}, expected {list(want)}"})
        else:
            _runs(ev, film, ~np.isfinite(q.reshape(n, -1)).all(1), "joint", j.name, "NaN or infinite value")
    needed = _needed_frames(film)
    if n == 0 and not needed:
        ev.append({"frame": tr.frame_start, "reason": "the tracks hold no frames"})
    if needed:
        lo, hi = min(needed), max(needed)
        for first, last in ((lo, min(hi, tr.frame_start - 1)), (max(lo, tr.frame_end + 1), hi)):
            if first <= last:
                ev.append({"frame": first, "frames": [first, last],
                           "reason": f"frames {first}..{last} are not baked"})
    for item in film.states:
        frame, pose = item[0], item[1]
        sid = item[2] if len(item) > 2 else str(frame)
        why = _misses(film, frame, pose)
        if why:
            ev.append({"frame": int(frame), "state": sid, "reason": why})
    ev.sort(key=lambda e: e["frame"])
    return Report(NAME, "fail" if ev else "pass", ev, {"frames": n, "states_checked": len(film.states)})


def _runs(ev, film, mask, key, name, reason):
    for first, last in runs(mask):
        ev.append({"frame": int(film.tracks.frame_start + first), key: name,
                   "frames": [int(film.tracks.frame_start + first), int(film.tracks.frame_start + last)],
                   "reason": reason})


def _needed_frames(film: Footage) -> list[int]:
    out = [int(s[0]) for s in film.states]
    if film.extra.get("whole_windows"):      # a storyboard state on its own: only its frame is asked for
        return out
    for shot in (film.plan or {}).get("shots", []) or []:
        try:
            out += [int(shot["start"]), int(shot["end"])]
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _misses(film: Footage, frame: int, pose) -> str:
    """Why the tracks do not hit `pose` at `frame` ('' when they do)."""
    tr = film.tracks
    i = int(frame) - tr.frame_start
    if not 0 <= i < tr.n_frames:
        return f"state frame {frame} is outside the tracks ({tr.frame_start}..{tr.frame_end})"
    for body, t in pose.roots.items():
        a = tr.roots.get(body)
        if a is None or a.shape[0] != tr.n_frames:
            continue
        t = np.asarray(t, float)
        dp = float(np.max(np.abs(a[i, :3] - t[:3])))
        dq = float(min(np.max(np.abs(a[i, 3:] - t[3:])), np.max(np.abs(a[i, 3:] + t[3:]))))
        if not (dp <= HIT_TOL and dq <= HIT_TOL):
            return f"body {body} is {dp:.6g} m / {dq:.6g} (quaternion) away from the state"
    for joint, v in pose.joints.items():
        q = tr.joints.get(joint)
        if q is None or q.shape[0] != tr.n_frames:
            continue
        d = float(np.max(np.abs(np.asarray(q[i], float) - np.asarray(v, float))))
        if not d <= HIT_TOL:
            return f"joint {joint} is {d:.6g} away from the state"
    return ""
