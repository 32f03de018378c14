"""Three signals, never blended into one number.

- completion: do the film's required checks pass on the film as it is now
  (a yes or no, with the checks that fail or why nothing can be said);
- progress: the prerequisite-gated figure of `studio.timeline.progress`;
- coverage: what was checked on what (the film's frames and which checks ran
  on them, the key states whose checks are current) and what nothing
  certifies: occlusion (visibility counts a body hidden behind another as in
  view), overlaps the scene declares allowed, advisory checks that did not
  run, states whose checks are stale or missing.

Qt-free; the window's status bar, `studio info` and the delivery report print
the three side by side.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from studio.scene.io import load_scene
from studio.store.project import Project
from studio.store.reports import ADVISORY, REQUIRED, failing_required, load_reports, required_checks_pass
from studio.timeline import film
from studio.timeline.gate import board_status
from studio.timeline.progress import progress


@dataclass
class Coverage:
    film_frames: int = 0                 # frames baked
    film_checked: int = 0                # frames the current film reports cover
    film_checks: list[str] = field(default_factory=list)
    states: int = 0
    states_checked: int = 0              # states whose stored checks are for their current content
    uncertified: list[str] = field(default_factory=list)

    def text(self) -> str:
        film_part = (f"film {self.film_checked}/{self.film_frames} frames × {len(self.film_checks)} checks"
                     if self.film_frames else "no film baked")
        return f"{film_part}; states {self.states_checked}/{self.states} checked"


@dataclass
class Signals:
    complete: bool
    completion: str
    progress: float
    missing: list[str]
    coverage: Coverage

    def to_dict(self) -> dict:
        c = self.coverage
        return {"completion": {"required_checks_pass": self.complete, "text": self.completion},
                "progress": {"value": round(self.progress, 4), "missing": self.missing},
                "coverage": {"film_frames": c.film_frames, "film_frames_checked": c.film_checked,
                             "film_checks": c.film_checks, "states": c.states, "states_checked": c.states_checked,
                             "not_certified": c.uncertified}}


def signals(project: Project, scene=None) -> Signals:
    scene = scene or load_scene(project)
    value, missing = progress(project)
    cov = Coverage()
    segments = film.list_segments(project)
    frames = (max(s["end"] for s in segments) - min(s["start"] for s in segments) + 1) if segments else 0
    current = film.film_hash(project)
    reports, checked = load_reports(project, "film")
    if not frames or current is None:
        complete, completion = False, "no film baked" if not frames else "the baked segments do not join"
    elif not reports:
        complete, completion = False, "the film has not been verified"
        cov.film_frames = frames
    elif checked != current:
        complete, completion = False, "the film changed since it was verified"
        cov.film_frames = frames
    else:
        cov.film_frames = cov.film_checked = frames
        cov.film_checks = [r.name for r in reports if r.verdict != "error"]
        complete = required_checks_pass(reports)
        completion = "required checks pass" if complete else "required checks fail: " + ", ".join(
            failing_required(reports))
        skipped = [n for n in ADVISORY if n not in cov.film_checks]
        if skipped:
            cov.uncertified.append(f"advisory checks not run on the film: {', '.join(skipped)}")
        na = [r.name for r in reports if r.verdict == "not_applicable" and r.name in REQUIRED]
        if na:
            cov.uncertified.append(f"nothing to check for {', '.join(na)} (not applicable)")
    statuses = [st for st in board_status(project, scene) if st.status != "missing"]
    cov.states = len(statuses)
    stale = [st.state_id for st in statuses
             if any(r.startswith(("failing: checks have not been run", "failing: checks were run on another"))
                    for r in st.reasons)]
    cov.states_checked = cov.states - len(stale)
    if stale:
        cov.uncertified.append(f"states whose checks are missing or stale: {', '.join(stale)}")
    if scene.allowed_overlaps:
        cov.uncertified.append(f"{len(scene.allowed_overlaps)} overlap(s) the scene declares allowed are not tested for penetration")
    cov.uncertified.append("occlusion: a body hidden behind another counts as in view when reviews bind what is seen")
    return Signals(complete, completion, value, missing, cov)

