"""The agent as the window drives it: what to say before a Plan or Build job is
queued, and how the newest agent job stands, in words. Qt-free."""
from __future__ import annotations

import json

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
    from studio.store.endpoints import active_endpoint
    try:
        configured = active_endpoint(settings).base_url
    except ValueError as e:
        return f"the settings cannot be read: {e}"
    if not configured:
        return (f"No model is configured: set the model endpoint in File › Settings… (saved in "
                f"{settings_path()}) or KEYPOSE_MODEL_BASE_URL, e.g. http://127.0.0.1:11434/v1 for Ollama")
    return ""


def latest_agent_job(project: Project) -> queue.Job | None:
    jobs = [j for j in queue.list_jobs(project) if j.kind == "agent_step"]
    return jobs[-1] if jobs else None


def model_progress(project: Project, job: queue.Job) -> str:
    """What the model is doing in a running agent job, from its progress.json ('' before it starts)."""
    try:
        data = json.loads((queue.job_dir(project, job.id) / "progress.json").read_text())
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict):
        return ""
    out = []
    if data.get("kind"):
        n = int(data.get("tokens", 0))
        out.append(f"{data['kind']} reply: {n} token{'' if n == 1 else 's'}, {float(data.get('seconds', 0)):.0f} s"
                   + (" (done)" if data.get("done") else ""))
    if data.get("notice"):
        out.append(str(data["notice"])[:200])
    return "; ".join(out)


def job_words(job: queue.Job | None, project: Project | None = None) -> str:
    if job is None:
        return ""
    action = job.spec.get("action", "agent")
    verb = {"plan": "Planning", "build": "Building"}.get(action, "Working")
    if job.state in RUNNING:
        doing = model_progress(project, job) if project is not None and job.state == "running" else ""
        return f"{verb} (job {job.id}): {job.state}…" + (f" {doing}" if doing else "")
    if job.state == "succeeded":
        return f"{action.capitalize()} done (job {job.id})."
    reason = (job.error or job.state).splitlines()[0][:300]
    return f"{action.capitalize()} {job.state} (job {job.id}): {reason}"
