"""The checks table: every required and advisory verifier of the film and of
the state at the playhead, with its verdict, how much evidence it found and
how long it took; a Verify button runs the verifiers in a process of their own
(`studio.ui.checking`, so the window never waits on them), with a progress bar,
the time left and a Cancel button. Checks whose evidence names a body selected
in the viewport are shown in bold.

One truth: a verdict reached on an older film, or an older version of the
state, is shown as "stale" (grey), never as a pass or a fail, and the line
above the table says what the status bar says. After a bake or an edit the
film, and every state whose content changed, is verified again in the
background (`AUTO_MS` after the last change), with the same progress bar."""
from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton, QSizePolicy,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from studio.store.reports import ADVISORY, REQUIRED, report_lines

from studio.ui.qt_bar import show_progress
from studio.ui.checking import verify_in_child
from studio.ui.playhead import Playhead
from studio.ui.qt_session import QtSession
from studio.ui.job_progress import JobProgress
from studio.ui.worker import Worker

VERDICT_COLORS = {"pass": "#3fa34d", "fail": "#d1453b", "error": "#d1453b", "not_applicable": "#8a8f98",
                  "missing": "#d89b2b", "stale": "#8a8f98"}
COLUMNS = ("target", "check", "kind", "verdict", "evidence", "seconds")
AUTO_MS = 400


class QtChecks(QWidget):
    message = Signal(str)
    verifying_changed = Signal()

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
        self.verdict_label = QLabel("")        # beside Verify, where the bar shows while verifying
        self.verdict_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top = QHBoxLayout()
        top.addWidget(self.verify_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.bar, 1)
        top.addWidget(self.verdict_label, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)
        self.job_progress = JobProgress()
        self.setMinimumWidth(300)              # check and verdict readable in a docked column
        self.worker: Worker | None = None
        self.automatic = False                 # the running worker was started by a change, not by Verify
        self._verify_after = False             # Verify pressed during an automatic run: a whole run next
        # what each target was when last looked at (None until the project has been read once)
        self._seen = dict(self.session.checked) if self.session.sigs[0] is not None else None
        self._closed = False
        self._auto = QTimer(self)
        self._auto.setSingleShot(True)
        self._auto.setInterval(AUTO_MS)
        self._auto.timeout.connect(self._verify_changed)
        qsession.changed.connect(self._on_changed)
        playhead.frame_changed.connect(self._on_frame)
        playhead.selection_changed.connect(lambda _b: self.reload())
        self._shown_targets: list[str] = []
        self._shown: tuple | None = None
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

    @property
    def verifying(self) -> bool:
        return self.worker is not None

    def _show_verdict(self) -> None:
        """The status bar's verdict, word for word, above the table."""
        v = self.session.verdict
        self.verdict_label.setText(v.headline(self.verifying) if self.session.signals else "")
        self.verdict_label.setToolTip("\n".join([v.headline(self.verifying), *v.reasons]))
        self.verdict_label.setVisible(not self.verifying)

    def _on_changed(self) -> None:
        self.reload()
        if self._seen is None:                 # the first read of the project: nothing changed yet
            self._seen = dict(self.session.checked)
            return
        if self.changed_targets():
            self._auto.start()                 # the last change of a burst starts it

    def changed_targets(self) -> list[str]:
        """Targets whose verdicts are older than they are, and that changed since last looked at."""
        out = []
        for target, (checked, now) in self.session.checked.items():
            if now is not None and checked != now and (self._seen or {}).get(target, (None, None))[1] != now:
                out.append(target)
        return out

    def baking(self) -> bool:
        """A bake job is queued or running: the film is about to change again."""
        return bool(self.session.project.db.execute(
            "SELECT count(*) FROM jobs WHERE kind = 'bake' AND state IN ('queued', 'running')").fetchone()[0])

    def _verify_changed(self) -> None:
        if self._closed:
            return
        if self.worker is not None or self.baking():
            self._auto.start()                 # after the run under way, or once the bake has stored it all
            return
        targets = self.changed_targets()
        self._seen = dict(self.session.checked)
        if not targets:
            return
        states = [t.split(":", 1)[1] for t in targets if t.startswith("state:")]
        film = "film" in targets or (bool(states) and self.session.film is not None)
        self._start(verify_in_child, states, film, automatic=True)

    def rows(self) -> list[tuple]:
        rows = []
        for target in self.targets():
            reports, checked = report_lines(self.session.project, target)
            now = self.session.checked.get(target, (checked, checked))[1]
            stale = bool(reports) and now is not None and checked != now
            by_name = {r[0]: r for r in reports}
            for name in (*REQUIRED, *ADVISORY, *sorted(set(by_name) - set(REQUIRED) - set(ADVISORY))):
                r = by_name.get(name)
                if r is None and name not in REQUIRED:
                    continue
                kind = "required" if name in REQUIRED else "advisory"
                if r is None:
                    rows.append((target, name, kind, "missing", "", ""))
                else:
                    rows.append((target, name, kind, "stale" if stale else r[1], str(r[2]), f"{r[3]:.2f}"))
        return rows

    def concerning(self) -> set[tuple[str, str]]:
        """(target, check) of every failure whose evidence names a selected body."""
        selected = set(self.playhead.selected)
        return {(f.target, f.check) for f in self.session.failures if selected & set(f.bodies)}

    def reload(self) -> None:
        self._shown_targets = self.targets()
        self._show_verdict()
        rows = self.rows()
        concerned = self.concerning()
        shown = (rows, concerned, self.playhead.selected)
        if shown == self._shown:               # a job's progress alone: the table is as it was
            return
        self._shown = shown
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)   # sized once below, not per cell
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                item = QTableWidgetItem(value)
                if j == 3:
                    item.setForeground(QColor(VERDICT_COLORS.get(value, "#e6e6e6")))
                    if value == "stale":
                        item.setToolTip("reached on an older film or version of the state; "
                                        "verified again after each bake or edit")
                if (row[0], row[1]) in concerned:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                    item.setToolTip(f"{row[1]} names {', '.join(self.playhead.selected)}")
                self.table.setItem(i, j, item)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    def verify(self) -> None:
        """Every state and the film (after an automatic run under way, if any)."""
        if self.worker is not None:
            self._verify_after = self.automatic
            return
        self._start(verify_in_child, None, True, automatic=False)

    def _start(self, fn, *args, automatic: bool) -> None:
        self.automatic = automatic
        self.verify_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText("verifying the film after the change…" if automatic else "verifying…")
        self.job_progress.start()
        self.bar.setValue(0)
        self.bar.setFormat("verifying…")
        self.bar.show()
        self.worker = Worker(fn, self.session.project.path, *args)
        self.worker.progressed.connect(self._progressed)
        self._show_verdict()
        self.verifying_changed.emit()
        self.worker.done.connect(self._finished)
        self.worker.failed.connect(self._finished)
        self.worker.start()

    def _progressed(self, fraction: float, what: str) -> None:
        show_progress(self.bar, int(fraction * 1000), self.job_progress.text(fraction, f"verifying {what}"))

    def cancel(self) -> None:
        """Stop after the check running now; what was verified so far is kept."""
        if self.worker is not None:
            self.worker.cancel()
            self.cancel_button.setEnabled(False)
            self.status.setText("cancelling after the current check…")

    def _finished(self, text) -> None:
        self.worker = None
        if self._closed:                       # the project closed while it ran
            return
        self.verify_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.bar.hide()
        self.status.setText(str(text))
        self.message.emit(str(text))
        self.session.poll()
        self._show_verdict()
        self.verifying_changed.emit()
        if self._verify_after:
            self._verify_after = False
            self.verify()

    def close_view(self) -> None:
        self._closed = True
        self._auto.stop()
        if self.worker is not None:
            self.worker.cancel()
