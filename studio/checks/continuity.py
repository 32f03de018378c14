"""Continuity (advisory): no sudden jumps in a body's or a joint's motion.

Per body: the second difference of its world position (metres per frame²)
and of its rotation angle; per joint: the second difference of its value.
A frame is a spike when the change exceeds both a floor (0.05 m/frame²,
about 3 g at 24 fps; 0.3 rad/frame²) and eight times the body's (joint's)
median change, so a steady fall or a fast but smooth swing is not flagged.
Evidence: frame, body | joint, value, limit.
"""
from __future__ import annotations

import numpy as np

from studio.scene.transforms import matrix_to_quat

from studio.checks.footage import Footage
from studio.checks.report import Report

NAME = "Continuity"
FLOOR_M, FLOOR_RAD, FACTOR = 0.05, 0.3, 8.0


def verify(film: Footage) -> Report:
    if film.n_frames < 3:
        return Report(NAME, "not_applicable", [], {"reason": "fewer than three frames"})
    ev = []
    for i, name in enumerate(film.names):
        if film.static[i]:
            continue
        w = film.world[i]
        acc = np.linalg.norm(np.diff(w[:, :3, 3], 2, axis=0), axis=1)
        q = matrix_to_quat(w[:, :3, :3])
        ang = 2 * np.arccos(np.clip(np.abs(np.sum(q[1:] * q[:-1], axis=1)), 0, 1))
        _spikes(ev, film, acc, FLOOR_M, "body", name, "position")
        _spikes(ev, film, np.abs(np.diff(ang)), FLOOR_RAD, "body", name, "rotation")
    for j, v in film.tracks.joints.items():
        v = np.asarray(v, float).reshape(film.n_frames, -1)
        _spikes(ev, film, np.linalg.norm(np.diff(v, 2, axis=0), axis=1), FLOOR_RAD, "joint", j, "value")
    ev.sort(key=lambda e: e["frame"])
    return Report(NAME, "fail" if ev else "pass", ev, {"spikes": len(ev)})


def _spikes(ev, film, change, floor, key, name, what):
    if len(change) == 0:
        return
    limit = max(floor, FACTOR * float(np.median(change)))
    for k in np.nonzero(change > limit)[0]:
        ev.append({"frame": int(film.frames[k + 1]), key: name, "what": what,
                   "value": round(float(change[k]), 6), "limit": round(limit, 6)})
