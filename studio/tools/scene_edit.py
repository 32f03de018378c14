"""A scene edit as an undoable command: the whole scene before and after."""
from __future__ import annotations

from studio.scene.io import load_scene, save_scene
from studio.scene.ir import Scene
from studio.store.project import Project
from studio.timeline.commands import Command


class EditScene(Command):
    """Replace the project's scene with `after`; undo writes the previous scene back."""

    def __init__(self, project: Project, after: Scene, label: str, actor: str = "agent"):
        self.project, self.after, self.label, self.actor = project, after, label, actor
        self.before: Scene | None = None

    def do(self) -> None:
        self.before = load_scene(self.project)
        save_scene(self.project, self.after, actor=self.actor, action=self.label)

    def undo(self) -> None:
        save_scene(self.project, self.before, actor=self.actor, action=f"undo {self.label}")
