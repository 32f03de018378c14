"""What File › Export… decides, without Qt, so a test calls it as the window does.

The same gate and jobs as `studio export PATH --video OUT --blend OUT`: the
film as an MP4 and the .blend, delivered into one folder the person chose.
While a storyboard state is not approved and current, or the required checks
fail, the export is refused, unless the person accepts the exceptions; then,
once both jobs have succeeded, a delivery report listing each unapproved state
and each failing check with its evidence goes beside the outputs. Every export
also leaves the review report there: each shot's status and every note, a
drawn note as a PNG of its frame (jobs/review_report.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from studio.jobs import queue
from studio.jobs.blend_check import compare
from studio.jobs.deliver import check_destination, name_destination
from studio.jobs.export_gate import GateResult, film_gate, write_delivery_report
from studio.jobs.review_report import review_data, write_review_report
from studio.jobs.spec import blend_spec, verify_spec, video_spec
from studio.scene.io import load_scene
from studio.scene.pose import Tracks
from studio.store.project import Project
from studio.timeline.storyboard import list_states

VIDEO_NAME, BLEND_NAME = "film.mp4", "film.blend"


class ExportRefused(ValueError):
    """The storyboard or the required checks do not pass and the person has not accepted the exceptions."""


@dataclass
class Export:
    folder: Path
    gate: GateResult
    with_exceptions: bool = False
    jobs: list[int] = field(default_factory=list)      # the film render, then the .blend
    check_job: int | None = None                        # reopening the .blend, once both succeeded
    frames: list[int] = field(default_factory=list)     # the frames that check compares

    @property
    def video(self) -> Path:
        return self.folder / VIDEO_NAME

    @property
    def blend(self) -> Path:
        return self.folder / BLEND_NAME

    @property
    def refused(self) -> bool:
        return not self.gate.ok and not self.with_exceptions

    @property
    def failing(self) -> list[str]:
        return list(self.gate.reasons) if not self.gate.ok else []


def plan_export(project: Project, folder: str | Path) -> Export:
    """Ask the gate about the current film; refuse early a folder that cannot be written (DeliveryError)."""
    folder = Path(folder).resolve()
    for name in (VIDEO_NAME, BLEND_NAME):
        check_destination(folder / name)
        name_destination(folder / name)          # the person chose this folder in the dialog
    return Export(folder, film_gate(project))


def submit_export(project: Project, export: Export, settings: dict) -> list[int]:
    """Queue the film render and the .blend (not started); nothing is queued if either cannot be built."""
    if export.refused:
        raise ExportRefused("export refused, the storyboard is not approved or the required checks do not pass: "
                            + "; ".join(export.failing))
    engine = settings.get("render_engine") or "BLENDER_WORKBENCH"
    film = queue.submit(project, "film", lambda d: video_spec(project, d, "film", None, engine,
                                                              deliver_to=str(export.video)))
    try:
        blend = queue.submit(project, "export_blend", lambda d: blend_spec(project, d, str(export.blend)))
    except BaseException:
        queue.finish(project, film.id, "cancelled", error="the .blend of this export could not be queued")
        raise
    export.jobs = [film.id, blend.id]
    return export.jobs


def queue_blend_check(project: Project, export: Export) -> int | None:
    """Once the film and the .blend have succeeded, queue the .blend's reopening (once); its job id."""
    if export.check_job is not None or len(export.jobs) != 2:
        return None
    jobs = [queue.get_job(project, j) for j in export.jobs]
    if not all(j.state == "succeeded" for j in jobs):
        return None
    tracks = exported_tracks(project, export)
    export.frames = sorted({s.frame for s in list_states(project) if tracks.frame_start <= s.frame <= tracks.frame_end}
                           | {tracks.frame_start, tracks.frame_end})
    export.check_job = queue.submit(project, "verify", lambda d: verify_spec(export.blend, export.frames)).id
    return export.check_job


def exported_tracks(project: Project, export: Export) -> Tracks:
    """The tracks the .blend was made from (its job's copy), even if the film has been edited since."""
    return Tracks.from_bytes((queue.job_dir(project, export.jobs[1]) / "tracks.npz").read_bytes())


def finish_export(project: Project, export: Export) -> str | None:
    """None while a job of the export runs; then what happened, writing the delivery report if with exceptions."""
    jobs = [queue.get_job(project, j) for j in export.jobs]
    if not jobs or not all(j.finished for j in jobs):
        return None
    for j in jobs:
        if j.state != "succeeded":
            return f"export failed: job {j.id} ({j.kind}) {j.state}: {j.error}"
    if export.check_job is None:
        return None                                     # the .blend's check is about to be queued
    check = queue.get_job(project, export.check_job)
    if not check.finished:
        return None
    if check.state != "succeeded":
        return f"export failed: reopening {export.blend} (job {check.id}) {check.state}: {check.error}"
    description = json.loads((queue.job_dir(project, check.id) / "out" / "inspect.json").read_text())
    problems, worst = compare(load_scene(project), exported_tracks(project, export), description, export.frames)
    if problems:
        return f"export failed: the exported .blend does not match the scene: {'; '.join(problems[:5])}"
    checked = (f"checked the .blend at {len(export.frames)} storyboard frames, max error "
               f"{worst['max_position_error_m']:.1e} m")
    outputs = [str(export.video), str(export.blend)]
    film_spec = queue.get_job(project, export.jobs[0]).spec
    review, _ = write_review_report(project, export.folder, export.video, film_spec.get("frame_start"))
    if export.gate.ok:
        return f"exported {export.video} and {export.blend}; {checked}; review report {review}"
    from studio.checks.signals import signals
    jpath, _ = write_delivery_report(export.folder, export.gate, outputs, signals=signals(project).to_dict(),
                                     review=review_data(project))
    return (f"exported WITH EXCEPTIONS ({'; '.join(export.failing)}); {checked}; delivery report {jpath}; "
            f"review report {review}")
