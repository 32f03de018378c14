"""The local runner: one worker subprocess per job, a few at a time.

`run_job` is a plain function: it runs one queued job to the end, reporting
each progress event through `watch.on_event` and stopping when
`watch.cancelled` is set or `cancel` is called from another thread. On a
resumed job it asks the worker only for the frames that are missing.
`LocalRunner` adds a concurrency limit (threads, each with its own database
connection) for the studio window.

A full disk ends a job as failed ("disk full: N MB needed in FOLDER"), never
left running: the free space is checked before the worker starts, progress
writes that find no room are skipped, and a small reserve file kept in the
job folder is released so the job's last state can be written; should even
that fail, the write is retried until space returns (up to FULL_WAIT_SECONDS).
"""
from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from studio.store.project import DiskFull, Project, ProjectLocked, tell
from studio.store.settings import load_settings

from studio.jobs import queue
from studio.jobs.agent_spec import agent_command
from studio.jobs.bake_spec import BakeSpecError, bake_command
from studio.jobs.contract import MARKER, check_done, missing_frames, present_outputs
from studio.jobs.deliver import DeliveryError, deliver, destination
from studio.jobs.footprint import check_space, disk_full_message, is_short_of_space
from studio.jobs.worker_process import BlenderMissing, WorkerRun, kill_process_group, worker_command


@dataclass
class JobWatch:
    """What a caller sees of a running job, and how it asks it to stop."""

    on_event: Callable[[int, dict], None] | None = None
    cancelled: bool = False
    runs: dict[int, WorkerRun] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cancel(self, job_id: int) -> None:
        with self.lock:
            run = self.runs.get(job_id)
        if run is not None:
            run.stop()


RESERVE_BYTES = 2 << 20
FULL_WAIT_SECONDS = 60.0


def attempt_spec(job: queue.Job, folder) -> dict:
    """The spec for this attempt: on a resume, only the frames still missing."""
    return _attempt(job, folder)[0]


def _attempt(job: queue.Job, folder) -> tuple[dict, list[str]]:
    """(the spec for this attempt, the expected outputs still missing)."""
    spec = dict(job.spec)
    if job.attempts == 0:
        return spec, list(spec.get("expected", []))
    _, missing = present_outputs(folder, spec.get("expected", []), job.outputs)
    if "frames" not in spec.get("steps", []):
        return spec, missing
    frames = missing_frames(spec, missing)
    spec["frames"] = frames
    if not frames:
        spec["steps"] = [s for s in spec["steps"] if s != "frames"]
    return spec, missing


def _reserve(path, size: int = RESERVE_BYTES) -> None:
    """Hold a little disk for the job's last database writes (released when the worker ends)."""
    try:
        with open(path, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, size)
    except (OSError, AttributeError):
        path.unlink(missing_ok=True)


def _settle(write, what: str):
    """Run a database write that must land; on a full disk, retry until space returns."""
    deadline, told = time.monotonic() + FULL_WAIT_SECONDS, False
    while True:
        try:
            return write()
        except DiskFull as e:
            if time.monotonic() > deadline:
                raise
            if not told:
                tell(f"{e}; waiting for space to record {what}")
                told = True
            time.sleep(1.0)


def job_command(job: queue.Job, settings: dict | None = None) -> list[str]:
    """Render kinds run in the Blender worker; a bake or an agent step runs in the studio's own Python."""
    if job.kind == "bake":
        return bake_command(job.spec)
    if job.kind == "agent_step":
        return agent_command(job.spec)
    return worker_command(settings if settings is not None else load_settings())


def run_job(project: Project, job_id: int, watch: JobWatch | None = None,
            settings: dict | None = None) -> queue.Job:
    """Run one queued job to the end with the done contract; return the finished Job."""
    watch = watch or JobWatch()
    job = queue.get_job(project, job_id)
    if job.state == "cancelled":
        return job
    if watch.cancelled:
        return queue.finish(project, job_id, "cancelled", error="the studio closed before this job started")
    if job.state != "queued":
        raise queue.JobError(f"job {job_id} is {job.state}, not queued")
    folder = queue.job_dir(project, job_id)
    try:
        command = job_command(job, settings)
    except (BlenderMissing, BakeSpecError) as e:
        queue.finish(project, job_id, "failed", error=str(e))
        raise
    spec, missing = _attempt(job, folder)
    try:
        check_space(job.spec, folder, missing, lambda dest: destination(project, dest))
    except DiskFull as e:
        return queue.finish(project, job_id, "failed", error=f"{e}; nothing was started")
    spec_path = queue.write_spec(folder, spec)
    (folder / MARKER).unlink(missing_ok=True)
    reported = dict(job.outputs)
    expected = set(job.spec.get("expected", []))
    worker_error, disk_events = [], []
    log = []
    reserve = folder / ".reserve"
    _reserve(reserve)
    run = WorkerRun(command, spec_path, folder / "log.txt")
    with watch.lock:
        watch.runs[job_id] = run
    try:
        queue.mark_running(project, job_id, runner=f"local:{os.getpid()}", pid=run.pid)
    except BaseException:        # no room or no lock to record it: the worker must not run unrecorded
        run.stop(grace=0.5)
        with watch.lock:
            watch.runs.pop(job_id, None)
        reserve.unlink(missing_ok=True)
        raise
    last_write = [0.0]

    def on_event(event: dict) -> None:
        if watch.on_event:       # first: a listener (a cancel, a progress line) never waits for the project's lock
            watch.on_event(job_id, event)
        if event.get("output") and event.get("sha256"):
            reported[event["output"]] = event["sha256"]
        if event.get("stage") == "error":
            worker_error.append(event.get("message", "the worker failed"))
            if event.get("reason") == "disk_full":
                disk_events.append(event)
        progress = len(expected & reported.keys()) / max(len(expected), 1)
        if event.get("stage") == "segment" and event.get("total"):   # a bake's segments, before its listing
            progress = max(progress, 0.95 * event.get("done", 0) / event["total"])
        now = time.monotonic()
        if event.get("stage") in ("frame", "still") and now - last_write[0] < 0.5 and progress < 1:
            pass   # throttle database writes on fast renders; the final state is written below
        else:
            try:
                queue.record_progress(project, job_id, progress, reported)
            except (DiskFull, ProjectLocked):
                pass   # progress only; the final state is written when the worker is done
            last_write[0] = now

    try:
        code = run.wait(on_event, log.append)
    except Exception as e:      # the job is concluded all the same: never left running
        code = None
        worker_error.append(f"the studio stopped following the worker ({type(e).__name__}: {e})")
    finally:
        with watch.lock:
            watch.runs.pop(job_id, None)
        kill_process_group(run.proc)   # nothing of this job outlives it
        reserve.unlink(missing_ok=True)
    return _settle(lambda: _conclude(project, job, folder, code, reported, run, watch, worker_error, disk_events,
                                     "".join(log)), f"the end of job {job_id}")


def _conclude(project: Project, job: queue.Job, folder, code, reported, run, watch, worker_error,
              disk_events, log) -> queue.Job:
    """Record how the worker's run ended: succeeded (delivered), failed, cancelled or interrupted."""
    job_id, expected = job.id, set(job.spec.get("expected", []))
    queue.set_log_tail(project, job_id, log)
    verdict = check_done(folder, job.spec, code, reported)
    if watch.cancelled and run.cancelled:
        return queue.finish(project, job_id, "interrupted", error="the studio closed while this job ran; "
                            "resume renders what is missing", outputs=verdict.outputs,
                            progress=_progress(verdict, expected))
    if run.cancelled or queue.get_job(project, job_id).state == "cancelled":
        return queue.finish(project, job_id, "cancelled", error="cancelled by the user; resume renders what is missing",
                            outputs=verdict.outputs, progress=_progress(verdict, expected))
    if not verdict.ok:
        reason = "; ".join([*worker_error, verdict.message()])
        if disk_events or is_short_of_space(job.spec, folder, verdict.missing):
            reason = (f"{disk_full_message(job.spec, folder, verdict.missing)}; {len(verdict.outputs)} of "
                      f"{len(expected)} outputs kept for resume")
        return queue.finish(project, job_id, "failed", error=reason, outputs=verdict.outputs,
                            progress=_progress(verdict, expected))
    try:
        deliver(project, folder, job.spec)
    except DeliveryError as e:
        return queue.finish(project, job_id, "failed", error=str(e), outputs=verdict.outputs, progress=1.0)
    return queue.finish(project, job_id, "succeeded", outputs=verdict.outputs, progress=1.0)


def _progress(verdict, expected: set) -> float:
    return len(verdict.outputs) / max(len(expected), 1)


def cancel_job(project: Project, job_id: int, watch: JobWatch | None = None) -> queue.Job:
    """Cancel a queued or running job; a running worker is terminated, then killed after a grace period."""
    job = queue.get_job(project, job_id)
    if job.finished:
        raise queue.JobError(f"job {job_id} is already {job.state}")
    if watch is not None and job_id in watch.runs:
        watch.cancel(job_id)
        return queue.get_job(project, job_id)
    queue.finish(project, job_id, "cancelled", error="cancelled by the user; resume renders what is missing")
    if job.state == "running" and job.runner.startswith("local") and queue.worker_alive(job.pid):
        queue.kill_group(job.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5.0
        while queue.worker_alive(job.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        queue.kill_group(job.pid, signal.SIGKILL)
    return queue.get_job(project, job_id)


class LocalRunner:
    """Runs queued jobs in the background, `concurrency` at a time (settings: local_concurrency)."""

    def __init__(self, project_path, concurrency: int | None = None, settings: dict | None = None,
                 on_event: Callable[[int, dict], None] | None = None):
        self.project_path = project_path
        self.settings = settings if settings is not None else load_settings()
        n = concurrency or int(self.settings.get("local_concurrency") or 1)
        self.pool = ThreadPoolExecutor(max_workers=max(1, n), thread_name_prefix="job")
        self.watch = JobWatch(on_event=on_event)

    def start(self, job_id: int) -> Future:
        return self.pool.submit(self._run, job_id)

    def _run(self, job_id: int) -> queue.Job:
        with Project.open(self.project_path) as project:
            return run_job(project, job_id, self.watch, self.settings)

    def cancel(self, job_id: int) -> None:
        with Project.open(self.project_path) as project:
            cancel_job(project, job_id, self.watch)

    def shutdown(self) -> None:
        """Stop every running worker and wait for the threads (closing the studio)."""
        self.watch.cancelled = True
        for job_id in list(self.watch.runs):
            self.watch.cancel(job_id)
        self.pool.shutdown(wait=True)
