"""What a tool's code may use: its project, the undo stack, who is calling, and the
checks every tool shares (a stored state, a file inside the project, a joint
value inside its limits). `ToolCall` is a tool's command with its audit row.

The tool modules (`scene_tools`, `pose_tools`, `timeline_tools`) take a
`ToolContext`; `ToolBox` (in `box`) is the context that also dispatches calls
to them, so the tool modules never import the box that imports them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.scene.ir import Scene
from studio.store.project import Project
from studio.timeline.commands import Command, CommandStack
from studio.timeline.storyboard import State, get_state
from studio.tools.errors import ToolRefused

MESH_TYPES = (".stl", ".obj", ".glb", ".gltf", ".ply")
CALL, UNDO, REDO = "tool call", "undo tool call", "redo tool call"


@dataclass
class ToolOutcome:
    name: str
    arguments: dict
    result: dict
    command: Command | None = None

    def as_text(self) -> str:
        return json.dumps({"ok": True, **self.result}, sort_keys=True)


def last_audit_id(project: Project) -> int:
    return int(project.db.execute("SELECT max(id) FROM audit").fetchone()[0] or 0)


class ToolCall(Command):
    """A tool's command with its audit row: who called which tool with what arguments."""

    def __init__(self, project: Project, inner: Command, who: str, tool: str, arguments: dict):
        self.project, self.inner, self.who, self.tool, self.arguments = project, inner, who, tool, arguments
        self.row: int | None = None

    @property
    def label(self) -> str:             # the inner command may name itself only once it has run
        return self.inner.label

    def do(self) -> None:
        with self.project.transaction():
            since = last_audit_id(self.project)
            self.inner.do()
            if self.row is None:
                self.project.audit(self.who, CALL, self.tool,
                                   {"tool": self.tool, "arguments": self.arguments, "since": since})
                self.row = last_audit_id(self.project)
            else:
                self.project.audit(self.who, REDO, self.tool, {"call": self.row, "since": since})

    def undo(self) -> None:
        with self.project.transaction():
            since = last_audit_id(self.project)
            self.inner.undo()
            self.project.audit(self.who, UNDO, self.tool, {"call": self.row, "since": since})



class ToolContext:
    """The tools of one project, issuing their edits on `stack` as `actor` (person, agent, replay)."""

    def __init__(self, project: Project, stack: CommandStack | None = None, actor: str = "agent",
                 code_time_limit: float = 60.0):
        self.project, self.stack, self.actor = project, stack or CommandStack(), actor
        self.code_time_limit = code_time_limit

    def run(self, name: str, args: dict, cmd: Command, result: dict) -> ToolOutcome:
        call = ToolCall(self.project, cmd, self.actor, name, args)
        self.stack.run(call)
        return ToolOutcome(name, args, {"done": call.label, **result}, call)

    def state(self, state_id: str) -> State:
        st = get_state(self.project, state_id)
        if st is None:
            raise ToolRefused(f"there is no state {state_id!r}; create it with set_state first")
        return st

    def project_file(self, rel: str) -> Path:
        p = Path(rel)
        root = self.project.path.resolve()
        full = (root / p).resolve()
        if p.is_absolute() or not full.is_relative_to(root):
            raise ToolRefused(f"path {rel!r}: names a file outside the project folder; refused")
        if full.suffix.lower() not in MESH_TYPES:
            raise ToolRefused(f"path {rel!r}: expected a mesh file ({', '.join(MESH_TYPES)})")
        if not full.is_file():
            raise ToolRefused(f"path {rel!r}: no such file in the project")
        return full

    @staticmethod
    def check_joint(scene: Scene, name: str, value: Any, where: str) -> None:
        j = scene.joint(name)
        if j.type == "fixed":
            raise ToolRefused(f"{where}: joint {name!r} is fixed and has no value")
        if j.type == "ball":
            if not isinstance(value, list) or float(np.linalg.norm(value)) > j.upper + 1e-9:
                raise ToolRefused(f"{where}: ball joint {name!r} takes a rotation vector of length "
                                  f"at most {j.upper:.3f}, got {value!r}")
        elif isinstance(value, list) or not j.lower - 1e-9 <= float(value) <= j.upper + 1e-9:
            raise ToolRefused(f"{where}: {value!r} is outside the limits of joint {name!r} "
                              f"[{j.lower:.4f}, {j.upper:.4f}]")
