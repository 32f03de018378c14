"""The Notes dock: review notes like a review tool keeps them.

A note goes on the frame at the playhead (any frame of the film, not only a
key's), with strokes drawn over the viewport (qt_sketch) through the shot's
camera; "Add note" is one add_note call, so the note lives in the project,
undoes, and replays. The list shows every note; a click jumps to its frame,
and on that frame the viewport draws its strokes. Below, each shot of the
plan with its status (waiting for approval, retake, done) and the note that
says why; "Mark" is one set_shot_status call. The export report lists both.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from studio.timeline.notes import SHOT_STATUSES, free_note_id, load_notes, notes_at, shot_statuses
from studio.timeline.plan import load_plan

from studio.ui import building
from studio.ui.qt_sketch import Sketch

PENS = (("red", "#ff3b30"), ("yellow", "#ffd60a"), ("cyan", "#32d2ff"), ("white", "#ffffff"))
STATUS_COLORS = {"waiting": "#8a8f98", "retake": "#d1453b", "done": "#3fa34d"}


class QtNotes(QWidget):
    message = Signal(str)

    def __init__(self, qsession, playhead, viewport, stack_of, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead, self.viewport, self.stack_of = qsession.session, playhead, viewport, stack_of
        self.sketch = Sketch(viewport, self)
        self.sketch.message.connect(self.message)
        self.sketch.stroke_added.connect(self._on_strokes)
        self.list = QTreeWidget()
        self.list.setHeaderLabels(["frame", "note", "by"])
        self.list.setRootIsDecorated(False)
        self.list.setColumnWidth(0, 56)
        self.list.setColumnWidth(1, 200)
        self.list.itemClicked.connect(self._on_item)
        self.here = QLabel("")
        self.here.setWordWrap(True)
        self.here.setMinimumHeight(3 * self.here.fontMetrics().height() + 4)    # a note's words, not one line
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("A note on the frame at the playhead (what to change, and where)")
        self.text.setMaximumHeight(64)
        self.draw_button = QPushButton("Draw")
        self.draw_button.setCheckable(True)
        self.draw_button.setToolTip("Draw over the viewport with the left button (through the shot's camera)")
        self.draw_button.toggled.connect(self._on_draw)
        self.pen = QComboBox()
        for name, color in PENS:
            self.pen.addItem(name, color)
        self.pen.currentIndexChanged.connect(lambda _i: setattr(self.sketch, "color", self.pen.currentData()))
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Wipe the strokes drawn and not yet added")
        self.clear_button.clicked.connect(self.sketch.clear)
        self.add_button = QPushButton("Add note")
        self.add_button.clicked.connect(self.add_note)
        self.delete_button = QPushButton("Delete note")
        self.delete_button.clicked.connect(self.delete_selected)
        draw = QHBoxLayout()
        draw.addWidget(self.draw_button)
        draw.addWidget(self.pen)
        draw.addWidget(self.clear_button)
        acts = QHBoxLayout()
        acts.addWidget(self.add_button)
        acts.addWidget(self.delete_button)
        self.shots = QTreeWidget()
        self.shots.setHeaderLabels(["shot", "frames", "status", "note"])
        self.shots.setRootIsDecorated(False)
        self.shots.itemClicked.connect(self._on_shot)
        self.shot = QComboBox()
        self.status = QComboBox()
        for key, words in SHOT_STATUSES.items():
            self.status.addItem(words, key)
        self.shot_note = QLineEdit()
        self.shot_note.setPlaceholderText("why (a retake says what to change)")
        self.mark_button = QPushButton("Mark")
        self.mark_button.clicked.connect(self.mark_shot)
        mark = QHBoxLayout()
        mark.addWidget(self.shot, 1)
        mark.addWidget(self.status, 1)
        for combo in (self.shot, self.status):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(6)
        self.list.setMinimumHeight(48)
        self.shots.setMinimumHeight(48)
        self.text.setMinimumHeight(36)
        notes_page, shots_page = QWidget(), QWidget()
        nl = QVBoxLayout(notes_page)
        nl.setContentsMargins(2, 2, 2, 2)
        nl.addWidget(self.list, 2)
        nl.addWidget(self.here)
        nl.addWidget(self.text)
        nl.addLayout(draw)
        nl.addLayout(acts)
        sl = QVBoxLayout(shots_page)
        sl.setContentsMargins(2, 2, 2, 2)
        sl.addWidget(self.shots, 1)
        sl.addLayout(mark)
        why = QHBoxLayout()
        why.addWidget(self.shot_note, 1)
        why.addWidget(self.mark_button)
        sl.addLayout(why)
        self.tabs = QTabWidget()
        self.tabs.addTab(notes_page, "Notes on frames")
        self.tabs.addTab(shots_page, "Shots")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.tabs)
        self.notes = []
        qsession.changed.connect(self.reload)
        playhead.frame_changed.connect(self._on_frame)
        self.reload()

    # ---- showing -----------------------------------------------------------------
    def reload(self) -> None:
        self.notes = load_notes(self.session.project)
        selected = self.selected_note()
        self.list.clear()
        for n in self.notes:
            first = n.text.strip().splitlines()[0] if n.text.strip() else "(a drawing)"
            item = QTreeWidgetItem([str(n.frame), first + (f"  ✎{len(n.strokes)}" if n.strokes else ""),
                                    n.by])
            item.setData(0, Qt.ItemDataRole.UserRole, n.id)
            item.setToolTip(1, n.text)
            self.list.addTopLevelItem(item)
            if n.id == selected:
                self.list.setCurrentItem(item)
        plan = load_plan(self.session.project)
        self.shots.clear()
        keep = self.shot.currentText()
        self.shot.clear()
        spans = {s["id"]: (s["start"], s["end"]) for s in (plan or {}).get("shots", [])}
        for st in shot_statuses(self.session.project, plan):
            a, b = spans[st.shot]
            item = QTreeWidgetItem([st.shot, f"{a}–{b}", st.words, st.note])
            item.setForeground(2, Qt.GlobalColor.white)
            item.setBackground(2, QColor(STATUS_COLORS[st.status]))
            item.setToolTip(3, st.note)
            self.shots.addTopLevelItem(item)
            self.shot.addItem(st.shot)
        self.shot.setCurrentIndex(max(0, self.shot.findText(keep)))
        self.mark_button.setEnabled(self.shot.count() > 0)
        self._on_frame(self.playhead.frame)

    def _on_frame(self, frame: int) -> None:
        here = notes_at(self.notes, frame)
        cams = {c.name: c for c in self.session.scene.cameras}
        shown = self.session.camera_at(frame)
        strokes = [s for n in here if shown is not None and n.camera == shown.name for s in n.strokes]
        self.sketch.show_strokes(strokes, shown)
        if here:
            self.here.setText(f"<b>Frame {frame}</b>: " + " · ".join(
                f"{n.text or '(a drawing)'} — {n.by}" + (f" (drawn through {n.camera})"
                                                         if n.strokes and n.camera in cams and
                                                         (shown is None or shown.name != n.camera) else "")
                for n in here))
        else:
            self.here.setText(f"No note on frame {frame}.")
        if self.sketch.pending and self.sketch.camera is not None and shown is not None \
                and shown.name != self.sketch.camera.name:
            self.message.emit("The drawing belongs to the shot it was drawn in: Add note or Clear drawing first")

    def selected_note(self) -> str | None:
        item = self.list.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None

    def _on_item(self, item, _col) -> None:
        note = next((n for n in self.notes if n.id == item.data(0, Qt.ItemDataRole.UserRole)), None)
        if note is not None:
            self.playhead.set_frame(note.frame)
            if note.strokes and self.viewport.camera_mode.currentIndex() != 0:
                self.viewport.camera_mode.setCurrentIndex(0)
                self._on_frame(note.frame)

    def _on_shot(self, item, _col) -> None:
        self.shot.setCurrentIndex(max(0, self.shot.findText(item.text(0))))

    def _on_draw(self, on: bool) -> None:
        if on and not self.sketch.start():
            self.draw_button.setChecked(False)
            return
        if not on:
            self.sketch.stop()

    def _on_strokes(self, n: int) -> None:
        self.add_button.setText(f"Add note ({n} stroke{'s' if n != 1 else ''})" if n else "Add note")

    # ---- acting ------------------------------------------------------------------------
    def add_note(self) -> str | None:
        frame = self.playhead.frame
        text = self.text.toPlainText().strip()
        strokes = [s.to_dict() for s in self.sketch.pending]
        args = {"note": free_note_id(self.notes, frame), "frame": frame, "text": text}
        if strokes:
            args.update(strokes=strokes, camera=self.sketch.camera.name)
        try:
            building.call(self.session.project, self.stack_of(), "add_note", args)
        except ValueError as e:
            self.message.emit(str(e))
            return None
        self.text.clear()
        self.sketch.pending.clear()
        self.draw_button.setChecked(False)
        self._on_strokes(0)
        self.session.refresh()
        self.message.emit(f"Note on frame {frame}" + (f" with {len(strokes)} stroke(s)" if strokes else ""))
        return args["note"]

    def delete_selected(self) -> None:
        note = self.selected_note()
        if note is None:
            self.message.emit("Select a note in the list to delete it")
            return
        try:
            building.call(self.session.project, self.stack_of(), "delete_note", {"note": note})
        except ValueError as e:
            self.message.emit(str(e))
            return
        self.session.refresh()
        self.message.emit(f"Deleted {note} (Edit › Undo brings it back)")

    def mark_shot(self) -> None:
        args = {"shot": self.shot.currentText(), "status": self.status.currentData(),
                "note": self.shot_note.text().strip()}
        try:
            building.call(self.session.project, self.stack_of(), "set_shot_status", args)
        except ValueError as e:
            self.message.emit(str(e))
            return
        self.shot_note.clear()
        self.session.refresh()
        self.message.emit(f"Shot {args['shot']}: {SHOT_STATUSES[args['status']]}")

    def close_view(self) -> None:
        self.sketch.detach()
