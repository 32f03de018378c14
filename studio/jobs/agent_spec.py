"""Agent jobs: the agent planning from a prompt, or building the scene and key
states from the stored plan, in a subprocess of the studio's own Python.

The window never talks to the model itself: a job can be cancelled like any
other (its process group is stopped), and a model that hangs or a reply that
breaks something takes down only the job. The agent sits above this layer, so
its entry is named by string and fixed here: a spec cannot start other code.
"""
from __future__ import annotations

import sys
from pathlib import Path

from studio.store.project import Project

OUTPUT = "out/agent.json"
ENTRY = "studio.agent.job_entry"
ACTIONS = ("plan", "build")


class AgentSpecError(ValueError):
    """An agent request that cannot be queued; the message names the field."""


def agent_spec(project: Project, folder: Path, action: str, prompt: str = "", max_turns: int = 12) -> dict:
    if action not in ACTIONS:
        raise AgentSpecError(f"agent action: expected one of {', '.join(ACTIONS)}, got {action!r}")
    if action == "plan" and not prompt.strip():
        raise AgentSpecError("the prompt is empty: say what should happen in the film")
    if action == "build" and project.get_doc("plan") is None:
        raise AgentSpecError(f"{project.path}: no plan to build from; plan from a prompt first")
    if not 1 <= int(max_turns) <= 100:
        raise AgentSpecError(f"max_turns: expected 1 to 100, got {max_turns}")
    return {"kind": "agent_step", "project": str(Path(project.path).resolve()), "action": action,
            "prompt": prompt, "max_turns": int(max_turns), "expected": [OUTPUT]}


def agent_command(spec: dict) -> list[str]:
    """The command line of an agent job (the spec's path is appended by the runner)."""
    return [sys.executable, "-m", ENTRY]
