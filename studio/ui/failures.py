"""Verifier failures as the window draws them: one `Failure` per failing frame,
read from the stored reports (the film's, and each state's at its frame).

Evidence keys follow the verifiers: NoPenetration {frame, a, b, depth_m, point},
Supported {frame, body}, JointLimits {joint, frame, frames: [first, last], value, limit}.
"""
from __future__ import annotations

from dataclasses import dataclass

from studio.scene.ir import Scene
from studio.store.project import Project
from studio.store.reports import REQUIRED, Report, load_reports
from studio.timeline.storyboard import State

KIND_OF_CHECK = {"NoPenetration": "penetration", "Supported": "floating", "JointLimits": "joint"}


@dataclass(frozen=True)
class Failure:
    frame: int
    check: str
    kind: str                      # penetration | floating | joint | other
    bodies: tuple[str, ...]
    text: str
    point: tuple[float, float, float] | None = None
    required: bool = False
    target: str = "film"


def _frames(ev: dict, default: int | None) -> list[int]:
    """JointLimits gives a run as frames [first, last]; one pin per frame of the run."""
    frames = ev.get("frames")
    if isinstance(frames, (list, tuple)) and len(frames) == 2 and all(isinstance(f, (int, float)) for f in frames):
        return list(range(int(frames[0]), int(frames[1]) + 1))
    f = ev.get("frame", default)
    return [int(f)] if f is not None else []


def report_failures(report: Report, scene: Scene, target: str, default_frame: int | None) -> list[Failure]:
    if report.verdict not in ("fail", "error"):
        return []
    kind = KIND_OF_CHECK.get(report.name, "other")
    required = report.name in REQUIRED
    out: list[Failure] = []
    evidence = report.evidence or [{}]
    for ev in evidence:
        if report.name == "NoPenetration":
            bodies = tuple(b for b in (ev.get("a"), ev.get("b")) if b)
            depth = float(ev.get("depth_m", 0.0)) * 1000
            text = f"{' / '.join(bodies)} penetrate {depth:.1f} mm"
        elif report.name == "Supported":
            bodies = (ev["body"],) if ev.get("body") else ()
            text = f"{' '.join(bodies)} floats"
        elif report.name == "JointLimits":
            joint = ev.get("joint", "")
            try:
                bodies = (scene.joint(joint).child,)
            except KeyError:
                bodies = ()
            text = f"{joint} at {ev.get('value')} past limit {ev.get('limit')}"
        else:
            bodies = tuple(str(b) for b in ev.get("bodies", []) if b)
            text = str(ev.get("message") or ev.get("reason") or f"{report.name} {report.verdict}")
        point = ev.get("point")
        pt = tuple(float(v) for v in point[:3]) if isinstance(point, (list, tuple)) and len(point) >= 3 else None
        for f in _frames(ev, default_frame):
            out.append(Failure(f, report.name, kind, bodies, text, pt, required, target))
    return out


def current_failures(project: Project, scene: Scene, states: list[State]) -> list[Failure]:
    """Every failure of the film's report and of each state's report, in frame order."""
    out: list[Failure] = []
    film, _ = load_reports(project, "film")
    for r in film:
        out += report_failures(r, scene, "film", None)
    for s in states:
        reports, _ = load_reports(project, f"state:{s.id}")
        for r in reports:
            out += report_failures(r, scene, f"state:{s.id}", s.frame)
    out.sort(key=lambda f: (f.frame, not f.required, f.check))
    return out


def by_frame(failures: list[Failure]) -> dict[int, list[Failure]]:
    out: dict[int, list[Failure]] = {}
    for f in failures:
        out.setdefault(f.frame, []).append(f)
    return out


# Pin shades (hex, so the model stays Qt-free): required failures by kind, every advisory one muted amber.
REQUIRED_SHADES = {"penetration": "#e03131", "joint": "#d6336c", "floating": "#e03131", "other": "#e03131"}
ADVISORY_SHADE = "#a8874a"


def pin_shade(f: Failure) -> str:
    """Red-family for a required check (it blocks export), muted amber for an advisory one."""
    return REQUIRED_SHADES.get(f.kind, REQUIRED_SHADES["other"]) if f.required else ADVISORY_SHADE


def failing_frame_counts(failures_at: dict[int, list[Failure]]) -> tuple[int, int]:
    """(frames failing a required check, frames failing an advisory check); a frame may count in both."""
    required = sum(1 for fails in failures_at.values() if any(f.required for f in fails))
    advisory = sum(1 for fails in failures_at.values() if any(not f.required for f in fails))
    return required, advisory


def pins_text(failures_at: dict[int, list[Failure]]) -> str:
    """The scrubber's count, e.g. '0 required / 306 advisory failing frames'."""
    if not failures_at:
        return "no failures"
    required, advisory = failing_frame_counts(failures_at)
    return f"{required} required / {advisory} advisory failing frame{'s' if max(required, advisory) != 1 else ''}"
