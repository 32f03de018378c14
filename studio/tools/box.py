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

The tools themselves live by area: `scene_tools`, `camera_tools`, `pose_tools`, `timeline_tools`,
`note_tools`;
each takes the `ToolContext` this box is.
"""
from __future__ import annotations

from typing import Callable

from studio.scene.ir import IRError
from studio.store.keys import ReviewerKeyError
from studio.store.project import DiskFull, ProjectLocked, ReadOnlyProject
from studio.timeline.commands import CommandStack
from studio.timeline.motion import EndStateOffered
from studio.tools import camera_tools, note_tools, pose_tools, scene_tools, timeline_tools
from studio.tools.context import CALL, REDO, UNDO, ToolCall, ToolContext, ToolOutcome, last_audit_id
from studio.tools.errors import ToolRefused
from studio.tools.schemas import parse_arguments

__all__ = ["CALL", "REDO", "UNDO", "ToolBox", "ToolCall", "ToolOutcome"]

Handler = Callable[[ToolContext, dict], ToolOutcome]
HANDLERS: dict[str, Handler] = {**scene_tools.TOOLS, **camera_tools.TOOLS, **pose_tools.TOOLS, **timeline_tools.TOOLS,
                                 **note_tools.TOOLS}


class ToolBox(ToolContext):
    """The tools of one project, issuing their edits on `stack` as `actor` (person, agent, replay)."""

    def __init__(self, project, stack: CommandStack | None = None, actor: str = "agent",
                 code_time_limit: float = 60.0):
        super().__init__(project, stack, actor, code_time_limit)
        self._handlers = HANDLERS

    def call(self, name: str, raw_arguments: str | dict) -> ToolOutcome:
        args = parse_arguments(name, raw_arguments)
        since = last_audit_id(self.project)
        try:
            out = self._handlers[name](self, args)
        except (ToolRefused, ReviewerKeyError):     # the caller's own key is not the call's fault
            raise
        except (DiskFull, ProjectLocked, ReadOnlyProject):   # nor the machine's: a full disk, a held lock
            raise
        except (IRError, KeyError, ValueError) as e:   # the studio's own refusals, e.g. the gate's
            msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            raise ToolRefused(f"{name}: {msg}", e.offer() if isinstance(e, EndStateOffered) else None) from None
        except Exception as e:   # a tool that breaks must not take the caller's session down
            raise ToolRefused(f"{name} failed: {type(e).__name__}: {e}") from None
        if out.command is None:     # a call that stores reports or queues a job: recorded all the same
            self.project.audit(self.actor, CALL, name, {"tool": name, "arguments": args, "since": since})
        return out
