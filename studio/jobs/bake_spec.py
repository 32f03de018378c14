"""Bake jobs: motion authored between approved states in a subprocess of the
studio's own Python, never in the window's process.

The spec names the entry module that runs it; only the entries listed here
can be named, so a spec cannot start arbitrary code. `studio.examples` sits
above the jobs layer, so its story entry is named by string, not imported.
"""
from __future__ import annotations

import sys
from pathlib import Path

from studio.store.project import Project
from studio.timeline.gate import parse_segment
from studio.timeline.plan import load_plan, plan_segments

OUTPUT = "out/bake.json"
TOOLS = {"interpolate": "studio.jobs.bake_entry", "story": "studio.examples.bake_job"}


class BakeSpecError(ValueError):
    """A bake request that cannot be queued; the message names the field."""


def bake_spec(project: Project, folder: Path, segments: list[str] | None = None,
              tool: str = "interpolate") -> dict:
    """The spec of a bake job: the segments (default: every plan segment) and the tool."""
    if tool not in TOOLS:
        raise BakeSpecError(f"bake tool: expected one of {sorted(TOOLS)}, got {tool!r}")
    if not segments:
        plan = load_plan(project)
        if not plan:
            raise BakeSpecError(f"{project.path}: no plan, so no segments to bake; name them with --segment A..B")
        segments = plan_segments(plan)
    if not segments:
        raise BakeSpecError(f"{project.path}: the plan has no segments to bake")
    for seg in segments:
        parse_segment(seg)
    return {"kind": "bake", "project": str(Path(project.path).resolve()), "segments": list(segments),
            "tool": tool, "entry": TOOLS[tool], "expected": [OUTPUT]}


def bake_command(spec: dict) -> list[str]:
    """The command line of a bake job (the spec's path is appended by the runner)."""
    entry = spec.get("entry", TOOLS["interpolate"])
    if entry not in TOOLS.values():
        raise BakeSpecError(f"bake spec entry: expected one of {sorted(TOOLS.values())}, got {entry!r}")
    return [sys.executable, "-m", entry]
