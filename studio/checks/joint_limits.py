"""JointLimits (required): every joint value inside [lower, upper] at every frame.

Revolute and prismatic joints compare their value; a ball joint compares its
rotation angle (the length of its rotation vector) with its upper limit.
Evidence is one item per run of consecutive frames past one bound: joint,
frame (the first), frames [first, last], value (the worst), limit, bound.
The joint violation rate is joint-frames out of limits / joint-frames.
"""
from __future__ import annotations

import numpy as np

from studio.checks.footage import Footage
from studio.checks.report import Report

NAME = "JointLimits"
EPS = 1e-9


def verify(film: Footage) -> Report:
    joints = [j for j in film.scene.joints if j.type != "fixed"]
    if not joints or film.n_frames == 0:
        return Report(NAME, "not_applicable", [], {"joint_violation_rate": 0.0, "joint_frames": 0,
                                                   "reason": "no movable joints"})
    evidence, bad, total = [], 0, 0
    for j in joints:
        q = film.tracks.joints.get(j.name)
        if q is None:
            continue
        q = np.asarray(q, float)
        value = np.linalg.norm(q.reshape(len(q), -1), axis=1) if j.type == "ball" else q.reshape(-1)
        total += len(value)
        for bound, limit, past in (("lower", j.lower, value < j.lower - EPS), ("upper", j.upper, value > j.upper + EPS)):
            if j.type == "ball" and bound == "lower":
                continue
            bad += int(past.sum())
            for first, last in runs(past):
                seg = value[first:last + 1]
                worst = float(seg.min() if bound == "lower" else seg.max())
                evidence.append({"joint": j.name, "frame": int(film.frames[first]),
                                 "frames": [int(film.frames[first]), int(film.frames[last])],
                                 "value": round(worst, 9), "limit": limit, "bound": bound})
    evidence.sort(key=lambda e: (e["frame"], e["joint"]))
    rate = bad / total if total else 0.0
    return Report(NAME, "fail" if evidence else "pass", evidence,
                  {"joint_violation_rate": rate, "joint_frames": total, "joint_frames_out": bad})


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) indices of each run of True."""
    m = np.r_[False, np.asarray(mask, bool), False]
    d = np.diff(m.astype(np.int8))
    return list(zip(np.nonzero(d == 1)[0].tolist(), (np.nonzero(d == -1)[0] - 1).tolist()))
