"""Scene › Add character: a character from the library or a file, added by the `import_character`
tool call (one command on the window's undo stack).

The slow part of a robot's import (reading its meshes and joining each link's) runs on a worker
into the user's character cache; the tool call itself then runs on the GUI thread, where the
project's database is, and reads the joined meshes from that cache.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPushButton, QVBoxLayout)

from studio.scene.characters import library
from studio.ui.worker import Worker


def prepare(file: str, state=None) -> str:
    """Read a URDF and join its links' meshes into the character cache (worker thread); '' or why not."""
    from studio.scene.characters import cached_link_meshes
    from studio.scene.robots import description_digest, without_world
    from studio.scene.urdf import UrdfError, read_urdf
    if not file.lower().endswith(".urdf"):
        return ""
    try:
        desc = without_world(read_urdf(file))
        cached_link_meshes(desc, description_digest(desc), "hull")
    except UrdfError as e:
        return str(e)
    return ""


class QtAddCharacter(QDialog):
    """Pick a library character (or a file), name it, and add it."""

    added = Signal(str)

    def __init__(self, session, stack, parent=None):
        super().__init__(parent)
        self.session, self.stack = session, stack
        self.setWindowTitle("Add character")
        self.list = QListWidget()
        for e in library():
            item = QListWidgetItem(f"{e.name} — {e.about}")
            item.setData(256, str(e.file))
            item.setData(257, e.name)
            self.list.addItem(item)
        self.list.currentItemChanged.connect(self._picked)
        self.from_file = QPushButton("From file…")
        self.from_file.clicked.connect(self._choose_file)
        self.name = QLineEdit()
        self.name.setPlaceholderText("its name in the scene (its bodies are named <name>-<link>)")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Add")
        self.buttons.accepted.connect(self.add)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Name", self.name)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("The character library (settings: character_folders adds your own):"))
        lay.addWidget(self.list)
        lay.addWidget(self.from_file)
        lay.addLayout(form)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self.file = ""
        self.resize(560, 420)

    def _picked(self, item, _previous=None) -> None:
        if item is None:
            return
        self.file = item.data(256)
        if not self.name.text():
            self.name.setText(item.data(257))

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A robot (.urdf) or a skinned character (.glb)", "",
                                              "Characters (*.urdf *.glb)")
        if path:
            self.file = path
            self.status.setText(path)
            if not self.name.text():
                self.name.setText("".join(c if c.isalnum() or c in "_-" else "_" for c in Path(path).stem)[:32])

    def add(self) -> None:
        if not self.file or not self.name.text().strip():
            self.status.setText("Pick a character and give it a name.")
            return
        self.buttons.setEnabled(False)
        self.status.setText(f"Reading {Path(self.file).name}…")
        w = Worker(prepare, self.file)
        w.done.connect(self._prepared)
        w.failed.connect(self._refused)
        w.start()

    def _prepared(self, problem: str) -> None:
        if problem:
            self._refused(problem)
            return
        from studio.tools.box import ToolBox
        from studio.tools.errors import ToolRefused
        try:
            out = ToolBox(self.session.project, self.stack, actor="person").call(
                "import_character", {"name": self.name.text().strip(), "file": self.file})
        except ToolRefused as e:
            self._refused(str(e))
            return
        self.session.refresh()
        self.added.emit(out.result["character"])
        self.accept()

    def _refused(self, why: str) -> None:
        self.buttons.setEnabled(True)
        self.status.setText(why)
