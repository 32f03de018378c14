"""Run a submitted job on the runner the settings choose: the Ray farm when a
farm address is set (or given), else the local runner."""
from __future__ import annotations

from typing import Callable

from studio.store.project import Project
from studio.store.settings import load_settings

from studio.jobs import queue
from studio.jobs.local import JobWatch, run_job


def run_submitted(project: Project, job_id: int, settings: dict | None = None, farm_address: str | None = None,
                  on_event: Callable[[int, dict], None] | None = None, chunk: int = 4) -> queue.Job:
    settings = settings if settings is not None else load_settings()
    address = farm_address if farm_address is not None else settings.get("farm_address") or ""
    watch = JobWatch(on_event=on_event)
    # bakes and agent steps write this project's database: they run here, never on the farm
    if address and queue.get_job(project, job_id).kind not in ("bake", "agent_step"):
        from studio.jobs.farm import FarmClient, run_farm_job
        client = FarmClient(address)
        try:
            return run_farm_job(project, job_id, client, watch, settings, chunk=chunk)
        finally:
            client.close()
    return run_job(project, job_id, watch, settings)


def recover_jobs(project: Project, settings: dict | None = None) -> list[int]:
    """Mark jobs orphaned by a stopped studio as interrupted (stopping their farm jobs too)."""
    settings = settings if settings is not None else load_settings()
    stop = None
    if settings.get("farm_address"):
        from studio.jobs.farm import FarmClient

        def stop(submission_id: str):
            client = FarmClient(settings["farm_address"], timeout=3.0)
            try:
                return client.stop(submission_id)
            finally:
                client.close()
    return queue.recover(project, stop)
