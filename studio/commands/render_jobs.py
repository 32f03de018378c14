"""What `studio render`, `studio export` and `studio jobs` do (parsers in render.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED, CommandError
from studio.jobs import queue, spec as specs
from studio.jobs.blend_check import compare
from studio.jobs.deliver import DeliveryError, check_destination, check_spec_paths, name_destination
from studio.jobs.dispatch import recover_jobs, run_submitted
from studio.jobs.export_gate import film_gate, write_delivery_report
from studio.jobs.farm import FarmError
from studio.jobs.local import cancel_job
from studio.jobs.worker_process import BlenderMissing
from studio.scene.io import load_scene
from studio.store.names import NameProblem
from studio.store.project import Project
from studio.store.settings import load_settings
from studio.timeline.storyboard import list_states


def _resolution(text: str | None):
    if not text:
        return None
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CommandError(f"--resolution: expected WIDTHxHEIGHT, e.g. 640x360, got {text!r}") from None
    return (w, h)


def _frames(text: str | None):
    if not text:
        return None
    try:
        first, last = (int(v) for v in text.split(".."))
    except ValueError:
        raise CommandError(f"--frames: expected IN..OUT, e.g. 1010..1040, got {text!r}") from None
    return (first, last)


def _engine(args, settings: dict, default_workbench: bool) -> str:
    if args.engine:
        return {"workbench": "BLENDER_WORKBENCH", "cycles": "CYCLES"}[args.engine]
    return "BLENDER_WORKBENCH" if default_workbench else settings.get("render_engine") or "BLENDER_WORKBENCH"


def _printer(quiet: bool):
    def on_event(job_id: int, e: dict) -> None:
        if quiet:
            return
        stage = e.get("stage")
        if stage in ("frame", "still"):
            what = f"{e.get('state')} / {e.get('camera')}" if stage == "still" else f"frame {e.get('frame')}"
            print(f"  job {job_id}: {what} ({e.get('of')} in all)", flush=True)
        elif stage in ("build", "encode", "blend", "error", "farm"):
            print(f"  job {job_id}: {stage}: {e.get('message', '')}", flush=True)
    return on_event


def _submit_and_run(project: Project, kind: str, build, args, settings: dict) -> queue.Job:
    try:
        job = queue.submit(project, kind, build)
    except specs.SpecProblem as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None
    print(f"job {job.id}: {kind} queued ({len(job.spec.get('expected', []))} outputs)", flush=True)
    try:
        return run_submitted(project, job.id, settings, args.farm, _printer(args.quiet))
    except BlenderMissing as e:
        raise CommandError(str(e), EXIT_ENVIRONMENT) from None
    except FarmError as e:
        queue.finish(project, job.id, "failed", error=str(e))
        raise CommandError(str(e), EXIT_ENVIRONMENT) from None


def _report(project: Project, job: queue.Job) -> int:
    if job.state == "succeeded":
        for rel, dest in job.spec.get("deliver", {}).items():
            print(f"job {job.id}: wrote {dest if Path(dest).is_absolute() else project.path / dest}")
        return 0
    print(f"job {job.id}: {job.state}: {job.error}", file=sys.stderr)
    print(f"  log: {queue.job_dir(project, job.id) / 'log.txt'}; `studio jobs {project.path} resume {job.id}` "
          f"renders what is missing", file=sys.stderr)
    return EXIT_ENVIRONMENT if job.error.startswith("disk full") else EXIT_FAILED


def cmd_render(args) -> int:
    settings = load_settings()
    res = _resolution(args.resolution)
    with Project.open(args.path) as project:
        recover_jobs(project, settings)
        if args.stills:
            kind = "still"
            build = lambda d: specs.still_spec(project, d, args.state, args.camera,  # noqa: E731
                                               _engine(args, settings, True), res)
        else:
            kind = "preview" if args.preview else "film"
            if args.camera and len(args.camera) > 1:
                raise CommandError("--camera: a video goes through one camera")
            camera = args.camera[0] if args.camera else None
            frames = _frames(getattr(args, "frames", None))
            build = lambda d: specs.video_spec(project, d, kind, camera,  # noqa: E731
                                               _engine(args, settings, args.preview), res, args.samples,
                                               frame_range=frames)
        return _report(project, _submit_and_run(project, kind, build, args, settings))


def cmd_export(args) -> int:
    if not args.blend and not args.video:
        raise CommandError("export: give --blend OUT and/or --video OUT")
    settings = load_settings()
    res = _resolution(args.resolution)
    outs = [Path(name_destination(p)) for p in (args.blend, args.video) if p]
    for out in outs:
        try:
            check_destination(out)
        except DeliveryError as e:
            raise CommandError(str(e), EXIT_BAD_INPUT) from None
    with Project.open(args.path) as project:
        recover_jobs(project, settings)
        gate = film_gate(project)
        if not gate.ok and not args.with_exceptions:
            raise CommandError("export refused, the storyboard is not approved or the required checks do not pass: "
                               + "; ".join(gate.reasons)
                               + " (fix them, or export --with-exceptions to deliver with a report)", EXIT_FAILED)
        code, delivered, failed = 0, [], []
        try:
            if args.video:
                video = str(args.video.resolve())
                build = lambda d: specs.video_spec(project, d, "film", args.camera,  # noqa: E731
                                                   _engine(args, settings, False), res, args.samples,
                                                   deliver_to=video)
                code = _report(project, _outcome(project, "film", build, args, settings, failed, video))
                if code == 0:
                    delivered.append(video)
            if args.blend and code == 0:
                blend = str(args.blend.resolve())
                build = lambda d: specs.blend_spec(project, d, blend, args.camera, res)  # noqa: E731
                code = _report(project, _outcome(project, "export_blend", build, args, settings, failed, blend))
                if code == 0:
                    delivered.append(blend)
                    code = _check_blend(project, Path(blend), args, settings)
                    if code != 0:
                        failed.append({"output": blend, "error": "delivered, but reopened it does not match the "
                                                                 "scene at the storyboard frames"})
        finally:
            if delivered:                      # every export leaves its shots' statuses and notes beside it
                from studio.jobs.review_report import write_review_report
                video = Path(delivered[0]) if args.video and delivered[0].endswith(".mp4") else None
                tracks = specs.film_tracks(project, load_scene(project))
                r, _ = write_review_report(project, Path(delivered[0]).parent, video, tracks.frame_start)
                print(f"review report {r}")
            if delivered and not gate.ok:      # whatever left the studio goes with its report
                from studio.checks.signals import signals
                from studio.jobs.review_report import review_data
                j, m = write_delivery_report(Path(delivered[0]).parent, gate, delivered, failed,
                                             signals=signals(project).to_dict(), review=review_data(project))
                print(f"exported WITH EXCEPTIONS: {'; '.join(gate.reasons)}; delivery report {j} and {m}")
                if failed:
                    print(f"  failed: {'; '.join(f['output'] for f in failed)} (the report says why)")
        return code


def _outcome(project: Project, kind: str, build, args, settings: dict, failed: list, output: str) -> queue.Job:
    """Run one export job; a failure is noted in `failed` for the delivery report."""
    try:
        job = _submit_and_run(project, kind, build, args, settings)
    except Exception as e:
        failed.append({"output": output, "error": str(e)})
        raise
    if job.state != "succeeded":
        failed.append({"output": output, "error": f"job {job.id} {job.state}: {job.error}"})
    return job


def _check_blend(project: Project, blend: Path, args, settings: dict) -> int:
    """Reopen the exported .blend in a fresh worker; its pose at every storyboard frame must match the IR."""
    scene = load_scene(project)
    tracks = specs.film_tracks(project, scene)
    frames = sorted({s.frame for s in list_states(project) if tracks.frame_start <= s.frame <= tracks.frame_end}
                    | {tracks.frame_start, tracks.frame_end})
    job = queue.submit(project, "verify", lambda d: specs.verify_spec(blend, frames))
    job = run_submitted(project, job.id, settings, "", None)
    if job.state != "succeeded":
        return _report(project, job)
    description = json.loads((queue.job_dir(project, job.id) / "out" / "inspect.json").read_text())
    problems, worst = compare(scene, tracks, description, frames)
    if problems:
        print(f"the exported .blend does not match the scene: {'; '.join(problems[:5])}", file=sys.stderr)
        return EXIT_FAILED
    print(f"checked {blend}: {len(scene.bodies)} bodies, {len(scene.joints)} joints, {len(frames)} storyboard "
          f"frames, max error {worst['max_position_error_m']:.1e} m / {worst['max_rotation_error_rad']:.1e} rad")
    return 0


def cmd_jobs(args) -> int:
    settings = load_settings()
    with Project.open(args.path) as project:
        found = recover_jobs(project, settings)
        if found:
            print(f"marked interrupted (their studio had stopped): {', '.join(map(str, found))}")
        if args.action == "list":
            for j in queue.list_jobs(project):
                err = f"  {j.error[:80]}" if j.error else ""
                print(f"{j.id:>5}  {j.kind:<12} {j.state:<11} {j.progress * 100:5.1f}%  "
                      f"tries {j.attempts}  {j.runner or '-':<12} {j.updated}{err}")
            return 0
        if args.job is None:
            raise CommandError(f"jobs {args.action}: give a job id")
        if args.action == "show":
            j = queue.get_job(project, args.job)
            print(json.dumps({"id": j.id, "kind": j.kind, "state": j.state, "progress": j.progress,
                              "attempts": j.attempts, "runner": j.runner, "submission_id": j.submission_id,
                              "error": j.error, "outputs": len(j.outputs), "created": j.created,
                              "updated": j.updated}, indent=1))
            print(j.log[-4000:])
            return 0
        if args.action == "cancel":
            j = cancel_job(project, args.job)
            print(f"job {j.id}: {j.state}")
            return 0
        try:            # a stored spec is data: it may not send outputs outside the project
            check_spec_paths(project, queue.job_dir(project, args.job), queue.get_job(project, args.job).spec)
        except NameProblem as e:
            raise CommandError(f"job {args.job}: {e}", EXIT_BAD_INPUT) from None
        except queue.JobError as e:
            raise CommandError(str(e), EXIT_FAILED) from None
        try:
            j = queue.requeue(project, args.job)
        except queue.JobError as e:
            raise CommandError(str(e), EXIT_FAILED) from None
        args.quiet = False
        try:
            j = run_submitted(project, j.id, settings, args.farm, _printer(False))
        except BlenderMissing as e:
            raise CommandError(str(e), EXIT_ENVIRONMENT) from None
        return _report(project, j)
