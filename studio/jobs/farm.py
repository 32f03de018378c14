"""The Ray farm runner: jobs go to a Ray cluster through the Ray Jobs REST API.

The studio talks HTTP only (httpx): submit (POST /api/jobs/), poll
(GET /api/jobs/{submission_id}), read logs (GET .../logs) and stop
(POST .../stop), each by submission id, so the desktop app needs no Ray
install. On the cluster the entrypoint (`farm_entry`) fans frame chunks out
to Ray tasks on nodes with a `blender` resource. The job folder must be on a
file system the farm nodes share with the studio (loopback, NFS); the done
contract is then checked here exactly as for a local job.
"""
from __future__ import annotations

import json
import os
import shlex
import sys
import time
import uuid

import httpx

from studio.store.project import Project

from studio.jobs import queue
from studio.jobs.contract import MARKER, check_done
from studio.jobs.deliver import DeliveryError, deliver
from studio.jobs.local import JobWatch, attempt_spec
from studio.jobs.worker_process import worker_command

TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")


class FarmError(RuntimeError):
    """The farm could not be reached or refused a request; the message says which."""


class FarmClient:
    """The Ray Jobs REST API of one cluster (its dashboard address)."""

    def __init__(self, address: str, timeout: float = 60.0):
        self.address = address.rstrip("/")
        self.http = httpx.Client(base_url=self.address, timeout=timeout)

    def _call(self, method: str, path: str, **kw) -> dict:
        try:
            r = self.http.request(method, path, **kw)
        except httpx.HTTPError as e:
            raise FarmError(f"farm {self.address}: cannot reach it ({e})") from None
        if r.status_code >= 400:
            raise FarmError(f"farm {self.address}: {method} {path} answered {r.status_code}: {r.text[:300]}")
        return r.json() if r.content else {}

    def version(self) -> dict:
        return self._call("GET", "/api/version")

    def submit(self, entrypoint: str, submission_id: str, env: dict | None = None,
               metadata: dict | None = None, wait: float = 90.0) -> str:
        """Submit; a head that has just started answers "no available agent" for a while,
        so that answer is retried for up to `wait` seconds (the submission id keeps it single)."""
        body = {"entrypoint": entrypoint, "submission_id": submission_id,
                "runtime_env": {"env_vars": env or {}}, "metadata": metadata or {}}
        deadline, pause = time.monotonic() + wait, 0.5
        while True:
            try:
                return self._call("POST", "/api/jobs/", json=body).get("submission_id", submission_id)
            except FarmError as e:
                text = str(e)
                if "already exists" in text:      # an earlier try got through
                    return submission_id
                if "try again" not in text or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 5.0)

    def status(self, submission_id: str) -> dict:
        return self._call("GET", f"/api/jobs/{submission_id}")

    def logs(self, submission_id: str) -> str:
        return self._call("GET", f"/api/jobs/{submission_id}/logs").get("logs", "")

    def stop(self, submission_id: str) -> bool:
        return bool(self._call("POST", f"/api/jobs/{submission_id}/stop").get("stopped", False))

    def close(self) -> None:
        self.http.close()


def events_in(logs: str) -> list[dict]:
    """The worker's JSON progress lines in a farm job's log."""
    out = []
    for line in logs.splitlines():
        i = line.find('{"')
        if i < 0:
            continue
        try:
            event = json.loads(line[i:])
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and "stage" in event:
            out.append(event)
    return out


class FarmRun:
    """A submitted farm job, stoppable from another thread like a local WorkerRun."""

    def __init__(self, client: FarmClient, submission_id: str):
        self.client, self.submission_id = client, submission_id
        self.cancelled = False

    def stop(self, grace: float = 0.0) -> None:
        self.cancelled = True
        self.client.stop(self.submission_id)


def run_farm_job(project: Project, job_id: int, client: FarmClient, watch: JobWatch | None = None,
                 settings: dict | None = None, chunk: int = 4, poll: float = 0.5) -> queue.Job:
    """Run one queued job on the farm to the end, with the done contract."""
    watch = watch or JobWatch()
    job = queue.get_job(project, job_id)
    if job.state != "queued":
        raise queue.JobError(f"job {job_id} is {job.state}, not queued")
    folder = queue.job_dir(project, job_id)
    command = worker_command(settings)
    spec_path = queue.write_spec(folder, attempt_spec(job, folder))
    for old in [folder / MARKER, *folder.glob("done-chunk-*.json")]:
        old.unlink(missing_ok=True)
    submission_id = f"keypose-{job_id}-{job.attempts + 1}-{uuid.uuid4().hex[:8]}"
    entrypoint = shlex.join([sys.executable, "-m", "studio.jobs.farm_entry", str(spec_path),
                             "--worker", json.dumps(command), "--chunk", str(int(chunk))])
    try:
        client.submit(entrypoint, submission_id, env={"RAY_DEDUP_LOGS": "0", "PYTHONUNBUFFERED": "1"},
                      metadata={"studio_job": str(job_id), "project": project.name})
    except FarmError as e:
        queue.finish(project, job_id, "failed", error=str(e))
        raise
    queue.mark_running(project, job_id, runner=f"ray:{os.getpid()}", submission_id=submission_id)
    run = FarmRun(client, submission_id)
    with watch.lock:
        watch.runs[job_id] = run
    expected = set(job.spec.get("expected", []))
    seen = 0
    try:
        while True:
            status = client.status(submission_id)
            logs = client.logs(submission_id)
            events = events_in(logs)
            reported = dict(job.outputs)
            for e in events:
                if e.get("output") and e.get("sha256"):
                    reported[e["output"]] = e["sha256"]
            queue.record_progress(project, job_id, len(expected & reported.keys()) / max(len(expected), 1), reported)
            if watch.on_event:
                for e in events[seen:]:
                    watch.on_event(job_id, e)
            seen = len(events)
            if status.get("status") in TERMINAL:
                break
            time.sleep(poll)
    finally:
        with watch.lock:
            watch.runs.pop(job_id, None)
    (folder / "log.txt").write_text(logs)
    queue.set_log_tail(project, job_id, logs)
    code = 0 if status["status"] == "SUCCEEDED" else 1
    verdict = check_done(folder, job.spec, code, reported)
    if run.cancelled or status["status"] == "STOPPED":
        return queue.finish(project, job_id, "cancelled", error="stopped on the farm; resume renders what is missing",
                            outputs=verdict.outputs, progress=len(verdict.outputs) / max(len(expected), 1))
    if not verdict.ok:
        worker_errors = [e.get("message", "") for e in events if e.get("stage") == "error"]
        reason = "; ".join([*worker_errors, status.get("message", ""), verdict.message()])
        return queue.finish(project, job_id, "failed", error=reason.strip("; "), outputs=verdict.outputs,
                            progress=len(verdict.outputs) / max(len(expected), 1))
    try:
        deliver(project, folder, job.spec)
    except DeliveryError as e:
        return queue.finish(project, job_id, "failed", error=str(e), outputs=verdict.outputs, progress=1.0)
    return queue.finish(project, job_id, "succeeded", outputs=verdict.outputs, progress=1.0)
