"""The checks table: every required and advisory verifier of the film and of
the state at the playhead, with its verdict, how much evidence it found and
how long it took; a Verify button runs the verifiers on a worker, with a
progress bar, the time left and a Cancel button. Checks whose
evidence names a body selected in the viewport are shown in bold."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from studio.store.project import Project
from studio.store.reports import ADVISORY, REQUIRED, load_reports

from studio.ui.playhead import Playhead
from studio.ui.qt_session import QtSession
from studio.ui.job_progress import JobProgress
from studio.ui.worker import Worker

VERDICT_COLORS = {"pass": "#3fa34d", "fail": "#d1453b", "error": "#d1453b", "not_applicable": "#8a8f98",
                  "missing": "#d89b2b"}
COLUMNS = ("target", "check", "kind", "verdict", "evidence", "seconds")


def verify_project(path, state) -> str:
    """Run the verifiers on every state and on the baked film (a plain function for a worker)."""
    from studio.checks.run import verify_film, verify_state
    from studio.timeline.film import list_segments
    from studio.timeline.storyboard import list_states
    with Project.open(path) as project:
        states = list_states(project)
        for i, s in enumerate(states):
            if state.cancelled:
                return f"cancelled: verified {i} of {len(states)} states; the film was not verified"
            state.progress(i / max(1, len(states) + 1), f"state {s.id}")
            verify_state(project, s.id)
        if not list_segments(project):
            return f"verified {len(states)} states (nothing baked yet)"
        state.progress(len(states) / (len(states) + 1), "film")
        verify_film(project)
    return f"verified {len(states)} states and the film"


class QtChecks(QWidget):
    message = Signal(str)

    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()       # check and verdict first: a narrow dock still shows them
        header.moveSection(COLUMNS.index("check"), 0)
        header.moveSection(COLUMNS.index("verdict"), 1)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.verify_button = QPushButton("Verify")
        self.verify_button.clicked.connect(self.verify)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.hide()
        self.status = QLabel("")
        self.status.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.verify_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.bar, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)
        self.job_progress = JobProgress()
        self.setMinimumWidth(300)              # check and verdict readable in a docked column
        self.worker: Worker | None = None
        qsession.changed.connect(self.reload)
        playhead.frame_changed.connect(self._on_frame)
        playhead.selection_changed.connect(lambda _b: self.reload())
        self._shown_targets: list[str] = []
        self.reload()

    def _on_frame(self, _frame: int) -> None:
        if self.targets() != self._shown_targets:      # another state now holds: its reports
            self.reload()

    def targets(self) -> list[str]:
        out = ["film"]
        s = self.session.state_at(self.playhead.frame)
        if s is not None:
            out.append(f"state:{s.id}")
        return out

    def rows(self) -> list[tuple]:
        rows = []
        for target in self.targets():
            reports, _ = load_reports(self.session.project, target)
            by_name = {r.name: r for r in reports}
            for name in (*REQUIRED, *ADVISORY, *sorted(set(by_name) - set(REQUIRED) - set(ADVISORY))):
                r = by_name.get(name)
                if r is None and name not in REQUIRED:
                    continue
                kind = "required" if name in REQUIRED else "advisory"
                if r is None:
                    rows.append((target, name, kind, "missing", "", ""))
                else:
                    rows.append((target, name, kind, r.verdict, str(len(r.evidence)), f"{r.seconds:.2f}"))
        return rows

    def concerning(self) -> set[tuple[str, str]]:
        """(target, check) of every failure whose evidence names a selected body."""
        selected = set(self.playhead.selected)
        return {(f.target, f.check) for f in self.session.failures if selected & set(f.bodies)}

    def reload(self) -> None:
        self._shown_targets = self.targets()
        rows = self.rows()
        concerned = self.concerning()
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                item = QTableWidgetItem(value)
                if j == 3:
                    item.setForeground(QColor(VERDICT_COLORS.get(value, "#e6e6e6")))
                if (row[0], row[1]) in concerned:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                    item.setToolTip(f"{row[1]} names {', '.join(self.playhead.selected)}")
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()

    def verify(self) -> None:
        if self.worker is not None:
            return
        self.verify_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText("verifying…")
        self.job_progress.start()
        self.bar.setValue(0)
        self.bar.setFormat("verifying…")
        self.bar.show()
        self.worker = Worker(verify_project, self.session.project.path)
        self.worker.progressed.connect(self._progressed)
        self.worker.done.connect(self._finished)
        self.worker.failed.connect(self._finished)
        self.worker.start()

    def _progressed(self, fraction: float, what: str) -> None:
        self.bar.setValue(int(fraction * 1000))
        self.bar.setFormat(self.job_progress.text(fraction, f"verifying {what}"))

    def cancel(self) -> None:
        """Stop after the check running now; what was verified so far is kept."""
        if self.worker is not None:
            self.worker.cancel()
            self.cancel_button.setEnabled(False)
            self.status.setText("cancelling after the current check…")

    def _finished(self, text) -> None:
        self.worker = None
        self.verify_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.bar.hide()
        self.status.setText(str(text))
        self.message.emit(str(text))
        self.session.poll()

    def close_view(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
