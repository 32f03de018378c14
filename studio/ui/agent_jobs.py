"""The agent as the window drives it: what to say before a Plan or Build job is
queued, and how the newest agent job stands, in words. Qt-free."""
from __future__ import annotations

from studio.jobs import queue
from studio.store.project import Project
from studio.store.settings import load_settings, settings_path

RUNNING = ("queued", "running")


def model_missing() -> str:
    """Why the agent cannot run here ('' when a model is configured)."""
    try:
        settings = load_settings()
    except ValueError as e:
        return f"the settings cannot be read: {e}"
    if not settings.get("model_base_url"):
        return (f"No model is configured: set the model endpoint in File › Settings… (saved in "
                f"{settings_path()}) or KEYPOSE_MODEL_BASE_URL, e.g. http://127.0.0.1:11434/v1 for Ollama")
    return ""


def latest_agent_job(project: Project) -> queue.Job | None:
    jobs = [j for j in queue.list_jobs(project) if j.kind == "agent_step"]
    return jobs[-1] if jobs else None


def job_words(job: queue.Job | None) -> str:
    if job is None:
        return ""
    action = job.spec.get("action", "agent")
    verb = {"plan": "Planning", "build": "Building"}.get(action, "Working")
    if job.state in RUNNING:
        return f"{verb} (job {job.id}): {job.state}…"
    if job.state == "succeeded":
        return f"{action.capitalize()} done (job {job.id})."
    reason = (job.error or job.state).splitlines()[0][:300]
    return f"{action.capitalize()} {job.state} (job {job.id}): {reason}"
