"""The review history: every review of the key state at the playhead (or of every
state), newest first, with who made it (a person by name, a studio run by its
kind, never as a person), when, the verdict and the note. Read-only: reviews are
made on the storyboard and undone from the Edit menu."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from studio.timeline.reviews import by_whom, list_reviews, reviewer_kinds

from studio.ui.playhead import Playhead
from studio.ui.qt_session import QtSession

COLUMNS = ["state", "verdict", "who", "when", "note"]


def history_rows(project, state_id: str | None) -> list[list[str]]:
    """One row per review, newest first: state, verdict, who, when, note."""
    kinds = reviewer_kinds(project)
    return [[r.state_id, r.verdict, by_whom(r.reviewer, kinds.get(r.reviewer)), r.at.replace("T", " ")[:19], r.note]
            for r in reversed(list_reviews(project, state_id))]


class QtHistory(QWidget):
    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead
        self.title = QLabel("")
        self.all_states = QCheckBox("every state")
        self.all_states.toggled.connect(lambda _on: self.reload())
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.all_states)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.tree)
        self._shown: str | None = None
        qsession.changed.connect(self.reload)
        playhead.frame_changed.connect(self._on_frame)
        self.reload()

    def _on_frame(self, frame: int) -> None:
        """Reload only when another key state holds: playback must not query the reviews every frame."""
        state = self.session.state_at(frame)
        if (state.id if state else None) != self._shown:
            self.reload()

    def reload(self) -> None:
        state = self.session.state_at(self.playhead.frame)
        self._shown = state.id if state else None
        every = self.all_states.isChecked() or state is None
        rows = history_rows(self.session.project, None if every else state.id)
        self.title.setText("Reviews of every state" if every else f"Reviews of <b>{state.id}</b>")
        self.tree.clear()
        for row in rows:
            item = QTreeWidgetItem(row)
            item.setToolTip(4, row[4])
            self.tree.addTopLevelItem(item)
