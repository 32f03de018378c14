"""Every edit is a Command with do, undo and a label, run through one CommandStack.

The stack is shared by the CLI, the GUI and the agent, and knows nothing of
Qt: it calls plain callbacks when it changes, so an Edit menu can show
`undo_label` / `redo_label` and views can refresh. Commands keep what they need
to undo inside themselves (the previous state row, the previous tracks).
"""
from __future__ import annotations

from typing import Callable

from studio.scene.io import load_scene
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project

from studio.timeline import film, storyboard
from studio.timeline.reviews import record_review, withdraw_review
from studio.timeline.storyboard import State


class Command:
    """One undoable edit."""

    label = "edit"

    def do(self) -> None:
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError


class CommandStack:
    """Undo/redo history; `subscribe(cb)` calls cb(event, command) on 'do', 'undo', 'redo'."""

    def __init__(self, limit: int = 200):
        self._done: list[Command] = []
        self._undone: list[Command] = []
        self._listeners: list[Callable[[str, Command], None]] = []
        self.limit = limit

    def subscribe(self, callback: Callable[[str, Command], None]) -> None:
        self._listeners.append(callback)

    def _emit(self, event: str, cmd: Command) -> None:
        for cb in list(self._listeners):
            cb(event, cmd)

    def run(self, cmd: Command) -> Command:
        """Do the command; if it raises, the history is left as it was."""
        cmd.do()
        self._done.append(cmd)
        del self._done[:-self.limit]
        self._undone.clear()
        self._emit("do", cmd)
        return cmd

    def undo(self) -> Command | None:
        if not self._done:
            return None
        cmd = self._done.pop()
        cmd.undo()
        self._undone.append(cmd)
        self._emit("undo", cmd)
        return cmd

    def redo(self) -> Command | None:
        if not self._undone:
            return None
        cmd = self._undone.pop()
        cmd.do()
        self._done.append(cmd)
        self._emit("redo", cmd)
        return cmd

    @property
    def can_undo(self) -> bool:
        return bool(self._done)

    @property
    def can_redo(self) -> bool:
        return bool(self._undone)

    @property
    def undo_label(self) -> str:
        return f"Undo {self._done[-1].label}" if self._done else ""

    @property
    def redo_label(self) -> str:
        return f"Redo {self._undone[-1].label}" if self._undone else ""


class ReviewState(Command):
    """Approve or reject a state; undo withdraws that review."""

    def __init__(self, project: Project, state_id: str, verdict: str, note: str = "", reviewer: str = "person"):
        self.project, self.state_id, self.verdict, self.note, self.reviewer = project, state_id, verdict, note, reviewer
        self.review_id: int | None = None
        self.label = f"{'approve' if verdict == 'approve' else 'reject'} {state_id}"

    def do(self) -> None:
        self.review_id = record_review(self.project, self.state_id, self.verdict, self.note, self.reviewer).id

    def undo(self) -> None:
        withdraw_review(self.project, self.review_id, actor=self.reviewer)


class _StateEdit(Command):
    """Replace a state row (or create / delete it); undo puts the previous row back."""

    def __init__(self, project: Project, state_id: str, after: State | None, actor: str):
        self.project, self.state_id, self.after, self.actor = project, state_id, after, actor
        self.before: State | None = None

    def _put(self, state: State | None, action: str) -> None:
        if state is None:
            storyboard.delete_state(self.project, self.state_id, actor=self.actor)
        else:
            storyboard.put_state(self.project, load_scene(self.project), state, actor=self.actor, action=action)

    def do(self) -> None:
        self.before = storyboard.get_state(self.project, self.state_id)
        self._put(self.after, self.label)

    def undo(self) -> None:
        self._put(self.before, f"undo {self.label}")


class SetState(_StateEdit):
    """Create a state or change its pose, frame, shot or description."""

    def __init__(self, project: Project, state: State, actor: str = "person"):
        super().__init__(project, state.id, state, actor)
        self.label = f"set state {state.id}"


class SetPose(_StateEdit):
    """Change only a state's pose."""

    def __init__(self, project: Project, state_id: str, pose: Pose, actor: str = "person"):
        cur = storyboard.get_state(project, state_id)
        if cur is None:
            raise ValueError(f"state {state_id!r}: no such state to pose")
        super().__init__(project, state_id, State(cur.id, cur.frame, pose, cur.shot, cur.description,
                                                  cur.still, cur.visible), actor)
        self.label = f"pose {state_id}"


class MoveKey(_StateEdit):
    """Move a state to another frame."""

    def __init__(self, project: Project, state_id: str, frame: int, actor: str = "person"):
        cur = storyboard.get_state(project, state_id)
        if cur is None:
            raise ValueError(f"state {state_id!r}: no such state to move")
        super().__init__(project, state_id, State(cur.id, int(frame), cur.pose, cur.shot, cur.description,
                                                  cur.still, cur.visible), actor)
        self.label = f"move {state_id} to frame {frame}"


class DeleteState(_StateEdit):
    def __init__(self, project: Project, state_id: str, actor: str = "person"):
        super().__init__(project, state_id, None, actor)
        self.label = f"delete state {state_id}"


class BakeSegment(Command):
    """Store baked tracks for a segment (through the gate); undo restores the previous tracks."""

    def __init__(self, project: Project, segment: str, tracks: Tracks, tool: str, actor: str = "person",
                 max_residual: float | None = None):
        self.project, self.segment, self.tracks, self.tool, self.actor = project, segment, tracks, tool, actor
        self.max_residual = max_residual
        self.before: tuple[Tracks, dict] | None = None
        self.label = f"bake {segment} ({tool})"

    def do(self) -> None:
        from studio.timeline.bake import bake_segment
        prev = film.load_segment(self.project, self.segment)
        row = [r for r in film.list_segments(self.project) if r["segment"] == self.segment]
        from studio.timeline.bake import MAX_RESIDUAL
        bake_segment(self.project, self.segment, self.tracks, self.tool, actor=self.actor,
                     max_residual=MAX_RESIDUAL if self.max_residual is None else self.max_residual)
        self.before = (prev, row[0]) if prev is not None else None

    def undo(self) -> None:
        if self.before is None:
            film.delete_segment(self.project, self.segment, actor=self.actor)
        else:
            prev, row = self.before
            film.save_segment(self.project, self.segment, prev, row["tool"], row["bounds_hash"], actor=self.actor)
