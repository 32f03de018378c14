"""Runs of failing frames in a baked film, each placed inside one segment.

A run is one failure (the same pair of bodies penetrating, one body
floating, one joint past one bound, one event unmet) over consecutive frames
of one segment. Its worst frame is where a key state would help most: the
deepest penetration, the farthest past a limit, the first floating frame (a
body supported from there on stays supported), the middle of an unmet
event's window. Frames on a segment's bounding state are a state's failure,
left to the state repairer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from studio.checks.report import REQUIRED, Report
from studio.scene.pose import Tracks

from studio.repair.proposals import failure_key

HANDLED = ("NoPenetration", "JointLimits", "EventsSatisfied", "Supported")


@dataclass
class FailingRun:
    check: str
    key: tuple
    segment: str
    start: int
    end: int
    worst: int
    evidence: dict                      # the evidence at the worst frame
    frames: list[int] = field(default_factory=list)

    @property
    def required(self) -> bool:
        return self.check in REQUIRED

    @property
    def label(self) -> str:
        ev = self.evidence
        if self.check == "NoPenetration":
            what = f"{ev.get('a')} in {ev.get('b')}"
        elif self.check == "Supported":
            what = f"{ev.get('body')} floating"
        elif self.check == "JointLimits":
            what = f"{ev.get('joint')} past its {ev.get('bound')} limit"
        else:
            what = f"event {ev.get('event')} ({ev.get('reason', 'unmet')})"
        return f"{self.check}: {what} at {self.start}–{self.end} in {self.segment}"


def evidence_frames(check: str, ev: dict) -> list[int]:
    """The frames a piece of evidence speaks for (a limit run spans frames; an event, its window)."""
    if check == "JointLimits" and "frames" in ev:
        return list(range(int(ev["frames"][0]), int(ev["frames"][1]) + 1))
    if check == "EventsSatisfied":
        w = ev.get("window") or []
        return list(range(int(w[0]), int(w[1]) + 1)) if len(w) == 2 else []
    return [int(ev["frame"])] if "frame" in ev else []


def frames_by_failure(reports: list[Report], names: tuple[str, ...] = HANDLED) -> dict[tuple, dict[int, dict]]:
    """failure key -> frame -> the evidence there (the deepest one if several)."""
    out: dict[tuple, dict[int, dict]] = {}
    for r in reports:
        if r.verdict != "fail" or r.name not in names:
            continue
        for ev in r.evidence:
            key = failure_key(r.name, ev)
            per = out.setdefault(key, {})
            for f in evidence_frames(r.name, ev):
                if f not in per or ev.get("depth_m", 0) > per[f].get("depth_m", 0):
                    per[f] = ev
    return out


def _severity(check: str, ev: dict) -> float:
    if check == "NoPenetration":
        return float(ev.get("depth_m", 0.0))
    if check == "JointLimits":
        return abs(float(ev.get("value", 0.0)) - float(ev.get("limit", 0.0)))
    return 0.0


def _runs(frames: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for f in sorted(frames):
        if out and f == out[-1][-1] + 1:
            out[-1].append(f)
        else:
            out.append([f])
    return out


def failing_runs(reports: list[Report], segments: list[dict], names: tuple[str, ...] = HANDLED,
                 interval: tuple[int, int] | None = None, tracks: Tracks | None = None) -> list[FailingRun]:
    """Every run of failing frames strictly inside a baked segment, required checks first
    (with the film's tracks, a joint's worst frame is where it is farthest past its limit)."""
    out = []
    for key, per in frames_by_failure(reports, names).items():
        check = key[0]
        for seg in segments:
            a, b = int(seg["start"]), int(seg["end"])
            lo, hi = (a + 1, b - 1) if interval is None else (max(a + 1, interval[0]), min(b - 1, interval[1]))
            inside = [f for f in per if lo <= f <= hi]
            for run in _runs(inside):
                if check == "EventsSatisfied":
                    worst = run[len(run) // 2]
                elif check == "Supported":
                    worst = run[0]
                elif check == "JointLimits" and tracks is not None and key[1] in tracks.joints:
                    v = np.asarray(tracks.joints[key[1]], float)
                    v = np.linalg.norm(v.reshape(len(v), -1), axis=1)
                    limit = float(per[run[0]].get("limit", 0.0))
                    worst = max(run, key=lambda f: abs(v[f - tracks.frame_start] - limit))
                else:
                    worst = max(run, key=lambda f: _severity(check, per[f]))
                out.append(FailingRun(check, key, seg["segment"], run[0], run[-1], worst, per[worst], run))
    out.sort(key=lambda r: (not r.required, r.start, r.check))
    return out
