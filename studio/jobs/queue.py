"""The job queue, stored in the project database (table `jobs`).

A Job moves queued -> running -> succeeded | failed | cancelled | interrupted;
failed, cancelled and interrupted jobs can be resumed (queued again with
their outputs kept). Each job has a folder `jobs/<id>/` with its spec, its
full log and its outputs; the row keeps progress, the log's tail, the
outputs with their hashes, the worker's pid and the runner that ran it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from studio.store.names import NameProblem
from studio.store.beneath import ensure_folder
from studio.store.project import Project, now, write_atomic

KINDS = ("still", "preview", "film", "export_blend", "bake", "verify", "agent_step")
STATES = ("queued", "running", "succeeded", "failed", "cancelled", "interrupted")
RESUMABLE = ("failed", "cancelled", "interrupted")
LOG_TAIL = 20_000


class JobError(ValueError):
    """A job request that cannot be carried out; the message says why."""


@dataclass
class Job:
    id: int
    kind: str
    state: str
    progress: float = 0.0
    spec: dict = field(default_factory=dict)
    log: str = ""
    attempts: int = 0
    outputs: dict[str, str] = field(default_factory=dict)
    pid: int | None = None
    runner: str = ""
    submission_id: str = ""
    error: str = ""
    created: str = ""
    updated: str = ""

    @property
    def finished(self) -> bool:
        return self.state in ("succeeded", "failed", "cancelled", "interrupted")


def job_dir(project: Project, job_id: int) -> Path:
    """A job's folder; job ids are the database's integers, so a folder name never leaves jobs/."""
    if isinstance(job_id, bool) or not isinstance(job_id, int) and not str(job_id).isdigit():
        raise NameProblem(f"job id: {job_id!r} is not a job number")
    return project.path / "jobs" / str(int(job_id))


def submit(project: Project, kind: str, build_spec: Callable[[Path], dict], actor: str = "person") -> Job:
    """Queue a job: make its folder, let `build_spec` fill it, store the spec.
    If the spec cannot be built, nothing is left behind."""
    if kind not in KINDS:
        raise JobError(f"job kind: expected one of {KINDS}, got {kind!r}")
    with project.transaction():
        cur = project.db.execute(
            "INSERT INTO jobs (kind, state, progress, spec, log, attempts, outputs, created, updated) "
            "VALUES (?, 'queued', 0, '{}', '', 0, '{}', ?, ?)", [kind, now(), now()])
        job_id = cur.lastrowid
    folder = job_dir(project, job_id)
    try:
        if folder.exists():          # left by a job whose row is gone: its id is being reused
            shutil.rmtree(folder)
        ensure_folder(project.path, folder.relative_to(project.path))     # no link on the way
        spec = build_spec(folder)
        write_spec(folder, spec)
    except BaseException:
        with project.transaction():
            project.db.execute("DELETE FROM jobs WHERE id = ?", [job_id])
        shutil.rmtree(folder, ignore_errors=True)
        raise
    with project.transaction():
        project.db.execute("UPDATE jobs SET spec = ?, updated = ? WHERE id = ?",
                           [json.dumps(spec, sort_keys=True), now(), job_id])
        project.audit(actor, "submit job", f"job:{job_id}", {"kind": kind})
    return get_job(project, job_id)


def write_spec(folder: Path, spec: dict, name: str = "spec.json") -> Path:
    """The spec the worker reads, beside the files it names."""
    path = Path(folder) / name
    write_atomic(path, json.dumps(spec, indent=1, sort_keys=True).encode())
    return path


def get_job(project: Project, job_id: int) -> Job:
    rows = list(project.db.query("SELECT * FROM jobs WHERE id = ?", [int(job_id)]))
    if not rows:
        raise JobError(f"{project.path}: no job {job_id}")
    return _from_row(rows[0])


def list_jobs(project: Project, states: tuple[str, ...] | None = None) -> list[Job]:
    rows = project.db.query("SELECT * FROM jobs ORDER BY id")
    jobs = [_from_row(r) for r in rows]
    return [j for j in jobs if states is None or j.state in states]


def _from_row(r: dict) -> Job:
    return Job(id=r["id"], kind=r["kind"], state=r["state"], progress=r["progress"] or 0.0,
               spec=json.loads(r["spec"] or "{}"), log=r["log"] or "", attempts=r["attempts"] or 0,
               outputs=json.loads(r["outputs"] or "{}"), pid=r["pid"], runner=r["runner"] or "",
               submission_id=r["submission_id"] or "", error=r["error"] or "",
               created=r["created"] or "", updated=r["updated"] or "")


def _update(project: Project, job_id: int, **values) -> None:
    values["updated"] = now()
    cols = ", ".join(f"{k} = ?" for k in values)
    with project.transaction():
        project.db.execute(f"UPDATE jobs SET {cols} WHERE id = ?", [*values.values(), job_id])


def mark_running(project: Project, job_id: int, runner: str, pid: int | None = None,
                 submission_id: str = "") -> None:
    with project.transaction():
        project.db.execute("UPDATE jobs SET state = 'running', attempts = attempts + 1, pid = ?, runner = ?, "
                           "submission_id = ?, error = '', updated = ? WHERE id = ?",
                           [pid, runner, submission_id, now(), job_id])
        project.audit("studio", "start job", f"job:{job_id}", {"runner": runner, "pid": pid,
                                                               "submission_id": submission_id})


def record_progress(project: Project, job_id: int, progress: float, outputs: dict[str, str]) -> None:
    _update(project, job_id, progress=float(progress), outputs=json.dumps(outputs, sort_keys=True))


def set_log_tail(project: Project, job_id: int, text: str) -> None:
    _update(project, job_id, log=text[-LOG_TAIL:])


def finish(project: Project, job_id: int, state: str, error: str = "",
           outputs: dict[str, str] | None = None, progress: float | None = None) -> Job:
    if state not in STATES:
        raise JobError(f"job state: expected one of {STATES}, got {state!r}")
    values = {"state": state, "error": error, "pid": None}
    if outputs is not None:
        values["outputs"] = json.dumps(outputs, sort_keys=True)
    if progress is not None:
        values["progress"] = progress
    with project.transaction():
        _update(project, job_id, **values)
        project.audit("studio", f"job {state}", f"job:{job_id}", {"error": error[:500]} if error else {})
    return get_job(project, job_id)


def requeue(project: Project, job_id: int, actor: str = "person") -> Job:
    """Queue a failed, cancelled or interrupted job again, keeping its finished outputs."""
    job = get_job(project, job_id)
    if job.state not in RESUMABLE:
        raise JobError(f"job {job_id} is {job.state}; only {', '.join(RESUMABLE)} jobs can be resumed")
    with project.transaction():
        _update(project, job_id, state="queued", error="")
        project.audit(actor, "resume job", f"job:{job_id}", {})
    return get_job(project, job_id)


def _cmdline(pid: int | None) -> bytes:
    if not pid:
        return b""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""


def worker_alive(pid: int | None) -> bool:
    """Is `pid` a live Blender worker or bake process of ours (not a recycled pid of something else)?"""
    cmd = _cmdline(pid)
    return b"worker.py" in cmd or b"studio.tools.bake_job" in cmd


def owner_alive(runner: str) -> bool:
    """Is the studio process that runs this job (runner 'local:<pid>' or 'ray:<pid>') still there?"""
    _, _, pid = runner.partition(":")
    if pid.isdigit() and int(pid) == os.getpid():
        return True
    cmd = _cmdline(int(pid)) if pid.isdigit() else b""
    return b"python" in cmd or b"studio" in cmd


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def recover(project: Project, stop_farm_job: Callable[[str], object] | None = None) -> list[int]:
    """At studio start: jobs marked running whose studio process is gone have lost their
    runner. Stop what they left behind (the worker's process group, or the farm job)
    and mark them interrupted, ready to resume. Jobs another open studio runs are left alone.
    A read-only project is only read: its jobs stay as they were recorded."""
    found = []
    if project.readonly:
        return found
    for job in list_jobs(project, ("running",)):
        if owner_alive(job.runner):
            continue
        if job.runner.startswith("local"):
            if worker_alive(job.pid):
                kill_group(job.pid, signal.SIGKILL)
        elif job.submission_id and stop_farm_job is not None:
            try:
                stop_farm_job(job.submission_id)
            except Exception:   # the farm may be gone too; the job is interrupted either way
                pass
        finish(project, job.id, "interrupted",
               error="the studio stopped while this job was running; resume renders what is missing")
        found.append(job.id)
    return found
