"""Bake jobs: motion authored between approved states in a subprocess of the
studio's own Python, never in the window's process.

Every segment is baked by its plan's motion tool (interpolate when the plan
names none) through one generic bake; the spec names no tool and no entry, so
it cannot start any other code. A segment whose tool names what the scene does
not have (a held body that is not there, a part whose joint is fixed) is bad
input, refused before anything is queued.
"""
from __future__ import annotations

import sys
from pathlib import Path

from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.gate import parse_segment
from studio.timeline.motion import MotionError, check_params
from studio.timeline.plan import load_plan, plan_segments, segment_entry

OUTPUT = "out/bake.json"
OFFERED = "out/offered.json"           # a simulation's own end state, offered when its bake was refused
ENTRY = "studio.tools.bake_job"        # the job process (a tool-layer entry: each bake is a tool call)


class BakeSpecError(ValueError):
    """A bake request that cannot be queued; the message names the field."""


def bake_spec(project: Project, folder: Path, segments: list[str] | None = None, adopt_end: bool = False) -> dict:
    """The spec of a bake job: the segments (default: every plan segment); with `adopt_end`, a simulation
    ending away from its second state has its end adopted as that state (which then needs a review)."""
    if not segments:
        plan = load_plan(project)
        if not plan:
            raise BakeSpecError(f"{project.path}: no plan, so no segments to bake; name them with --segment A..B")
        segments = plan_segments(plan)
    if not segments:
        raise BakeSpecError(f"{project.path}: the plan has no segments to bake")
    plan, scene = load_plan(project), load_scene(project)
    for seg in segments:
        parse_segment(seg)
        entry = segment_entry(plan, seg)
        if entry.get("tool"):               # a tool the scene cannot run (a part that cannot move) is bad input
            try:
                check_params(entry["tool"], dict(entry.get("params") or {}), f"plan segment {seg} params", scene)
            except MotionError as e:
                raise BakeSpecError(f"{project.path}: {e}") from None
    return {"kind": "bake", "project": str(Path(project.path).resolve()), "segments": list(segments),
            "expected": [OUTPUT], **({"adopt_end": True} if adopt_end else {})}


def bake_command(spec: dict) -> list[str]:
    """The command line of a bake job (the spec's path is appended by the runner)."""
    return [sys.executable, "-m", ENTRY]
