"""One tool layer for the person, the agent and a replayed file.

`ToolBox.call(name, raw_arguments)` parses the arguments against the tool's
schema, checks them against the project (names exist, joint values inside
their limits, paths inside the project), builds the edit as a Command and runs
it on the shared CommandStack, so anyone can undo it like any other edit.
Every accepted call is one audit row `{who, tool, arguments}` written in the
same transaction as its edit (an undo or redo is a row too), which is what
`studio agent log --calls` reads back; `since` in it marks the rows the call's
edit wrote, so edits made outside the tool layer can be told apart. A refused call raises ToolRefused and
changes nothing; its message is what the caller reads as the tool result.

The tools themselves live by area: `scene_tools`, `pose_tools`, `timeline_tools`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from studio.scene.ir import IRError, Scene
from studio.store.keys import ReviewerKeyError
from studio.store.project import DiskFull, Project, ProjectLocked, ReadOnlyProject
from studio.timeline.commands import Command, CommandStack
from studio.timeline.storyboard import State, get_state

from .errors import ToolRefused
from .tool_schemas import parse_arguments

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


def _last_audit_id(project: Project) -> int:
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
            since = _last_audit_id(self.project)
            self.inner.do()
            if self.row is None:
                self.project.audit(self.who, CALL, self.tool,
                                   {"tool": self.tool, "arguments": self.arguments, "since": since})
                self.row = _last_audit_id(self.project)
            else:
                self.project.audit(self.who, REDO, self.tool, {"call": self.row, "since": since})

    def undo(self) -> None:
        with self.project.transaction():
            since = _last_audit_id(self.project)
            self.inner.undo()
            self.project.audit(self.who, UNDO, self.tool, {"call": self.row, "since": since})


Handler = Callable[["ToolBox", dict], ToolOutcome]


def handlers() -> dict[str, Handler]:
    from . import pose_tools, scene_tools, timeline_tools
    return {**scene_tools.TOOLS, **pose_tools.TOOLS, **timeline_tools.TOOLS}


class ToolBox:
    """The tools of one project, issuing their edits on `stack` as `actor` (person, agent, replay)."""

    def __init__(self, project: Project, stack: CommandStack | None = None, actor: str = "agent",
                 code_time_limit: float = 60.0):
        self.project, self.stack, self.actor = project, stack or CommandStack(), actor
        self.code_time_limit = code_time_limit
        self._handlers = handlers()

    def call(self, name: str, raw_arguments: str | dict) -> ToolOutcome:
        args = parse_arguments(name, raw_arguments)
        since = _last_audit_id(self.project)
        try:
            out = self._handlers[name](self, args)
        except (ToolRefused, ReviewerKeyError):     # the caller's own key is not the call's fault
            raise
        except (DiskFull, ProjectLocked, ReadOnlyProject):   # nor the machine's: a full disk, a held lock
            raise
        except (IRError, KeyError, ValueError) as e:   # the studio's own refusals, e.g. the gate's
            msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            raise ToolRefused(f"{name}: {msg}") from None
        except Exception as e:   # a tool that breaks must not take the caller's session down
            raise ToolRefused(f"{name} failed: {type(e).__name__}: {e}") from None
        if out.command is None:     # a call that stores reports or queues a job: recorded all the same
            self.project.audit(self.actor, CALL, name, {"tool": name, "arguments": args, "since": since})
        return out

    # ---- helpers for the tool modules -----------------------------------
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
