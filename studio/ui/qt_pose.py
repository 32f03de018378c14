"""The pose of the state at the playhead, as numbers: each root's position and
each joint's value (with its limits). Apply is one set_state call of the tool layer, so the
edit is undoable and its card turns stale if it had been approved. The rows
that move the bodies selected in the viewport are shown in bold."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea,
                               QVBoxLayout, QWidget)

from studio.tools.errors import ToolRefused
from studio.tools.box import ToolBox

from studio.ui.playhead import Playhead
from studio.ui.qt_session import QtSession


def _spin(lo: float, hi: float, step: float, decimals: int = 4) -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setKeyboardTracking(False)
    s.setRange(lo, hi)
    s.setDecimals(decimals)
    s.setSingleStep(step)
    return s


class QtPose(QWidget):
    message = Signal(str)

    def __init__(self, qsession: QtSession, playhead: Playhead, stack_of, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead, self.stack_of = qsession.session, playhead, stack_of
        self.title = QLabel("")
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)   # a narrow dock: the name above
        scroll = self.scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form_host)
        self.apply_button = QPushButton("Apply pose")
        self.revert_button = QPushButton("Revert")
        self.apply_button.clicked.connect(self.apply)
        self.revert_button.clicked.connect(lambda: self.load(force=True))
        bar = QHBoxLayout()
        bar.addWidget(self.apply_button)
        bar.addWidget(self.revert_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addWidget(scroll, 1)
        lay.addLayout(bar)
        self.roots: dict[str, list[QDoubleSpinBox]] = {}
        self.joints: dict[str, list[QDoubleSpinBox]] = {}
        self.labels: dict[str, QLabel] = {}          # root body or joint name -> its row's label
        self._state_id = ""
        self.dirty = False              # edited and not applied: a refresh must not wipe the edit
        qsession.scene_changed.connect(self.rebuild)
        qsession.changed.connect(self.load)
        playhead.frame_changed.connect(self._on_frame)
        playhead.selection_changed.connect(self.show_selected)
        self.rebuild()

    def rebuild(self) -> None:
        """One row per movable root and per joint of the scene."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.roots.clear()
        self.joints.clear()
        self.labels.clear()
        scene = self.session.scene
        for name in scene.roots:
            if scene.body(name).is_static:
                continue
            boxes = [self._watched(_spin(-1000, 1000, 0.01)) for _ in range(3)]
            row = QHBoxLayout()
            for b in boxes:
                row.addWidget(b)
            self.labels[name] = QLabel(f"{name} x y z (m)")
            self.form.addRow(self.labels[name], row)
            self.roots[name] = boxes
        for j in scene.joints:
            if j.type == "fixed":
                continue
            n = 3 if j.type == "ball" else 1
            boxes = [self._watched(_spin(-100, 100, 0.01)) for _ in range(n)]
            row = QHBoxLayout()
            for b in boxes:
                row.addWidget(b)
            unit = "m" if j.type == "prismatic" else "rad"
            self.labels[j.name] = QLabel(f"{j.name} ({unit}) [{j.lower:+.2f}, {j.upper:+.2f}]")
            self.form.addRow(self.labels[j.name], row)
            self.joints[j.name] = boxes
        self.load(force=True)
        self.show_selected(self.playhead.selected)

    def rows_of(self, bodies) -> list[str]:
        """The rows that move `bodies`: a root's own position, or the joint a body hangs from."""
        scene = self.session.scene
        out = [b for b in bodies if b in self.roots]
        out += [j.name for j in scene.joints if j.child in bodies and j.name in self.joints]
        return out

    def show_selected(self, bodies) -> None:
        marked = set(self.rows_of(bodies))
        for key, label in self.labels.items():
            label.setStyleSheet("font-weight: bold" if key in marked else "")
        if marked:
            first = next(k for k in self.labels if k in marked)
            self.scroll.ensureWidgetVisible(self.labels[first])

    def _watched(self, box: QDoubleSpinBox) -> QDoubleSpinBox:
        box.valueChanged.connect(self._edited)
        return box

    def _edited(self, _v) -> None:
        if not self._loading:
            self.dirty = True

    def _on_frame(self, _frame: int) -> None:
        s = self.session.state_at(self.playhead.frame)
        if (s.id if s else "") != self._state_id:
            self.load(force=True)

    _loading = False

    def load(self, force: bool = False) -> None:
        """Show the pose of the state holding at the playhead (an unapplied edit of it stays)."""
        s = self.session.state_at(self.playhead.frame)
        if self.dirty and not force and s is not None and s.id == self._state_id:
            return
        self._state_id = s.id if s else ""
        self.dirty = False
        self.apply_button.setEnabled(s is not None)
        self.revert_button.setEnabled(s is not None)
        if s is None:
            self.title.setText("No state at this frame.")
            return
        self.title.setText(f"<b>{s.id}</b> @ {s.frame}")
        self._show(s.pose.completed(self.session.scene))

    def show_preview(self, pose) -> None:
        """Follow a drag in the viewport live (None: the drag ended; show what is stored)."""
        if pose is None:
            self.load(force=True)
        else:
            self._show(pose)

    def _show(self, pose) -> None:
        self._loading = True
        try:
            for name, boxes in self.roots.items():
                for b, v in zip(boxes, pose.roots[name][:3]):
                    b.setValue(v)
            for name, boxes in self.joints.items():
                v = pose.joints[name]
                for b, x in zip(boxes, v if isinstance(v, list) else [v]):
                    b.setValue(x)
        finally:
            self._loading = False

    def edited_pose(self):
        s = self.session.state_at(self.playhead.frame)
        pose = s.pose.completed(self.session.scene).copy()
        for name, boxes in self.roots.items():
            pose.roots[name] = [*(b.value() for b in boxes), *pose.roots[name][3:]]
        for name, boxes in self.joints.items():
            vals = [b.value() for b in boxes]
            pose.joints[name] = vals if len(vals) == 3 else vals[0]
        return s.id, pose

    def apply(self) -> None:
        state_id, pose = self.edited_pose()
        d = pose.to_dict()
        try:
            ToolBox(self.session.project, self.stack_of(), actor="person").call(
                "set_state", {"state": state_id, "roots": d["roots"], "joints": d["joints"]})
        except ToolRefused as e:
            self.message.emit(str(e))
            return
        self.dirty = False
        self.message.emit(f"Posed {state_id}")
