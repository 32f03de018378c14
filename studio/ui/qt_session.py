"""The Qt side of `Session`: turns its plain events into Qt signals on the GUI
thread, and polls the database for commits by other processes (jobs, the CLI)."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from studio.ui.session import Session

POLL_MS = 300


class QtSession(QObject):
    changed = Signal()
    scene_changed = Signal()
    film_changed = Signal()
    _committed = Signal()

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self._pending = False
        self._detached = False
        # A commit may come from a worker thread: queue the refresh onto this (GUI) thread.
        self._committed.connect(self._refresh, Qt.ConnectionType.QueuedConnection)
        session.committed.connect(self._on_committed)
        session.changed.connect(self.changed.emit)
        session.scene_changed.connect(self.scene_changed.emit)
        session.film_changed.connect(self.film_changed.emit)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(session.poll)
        self._timer.start()

    def _on_committed(self) -> None:
        if not self._pending:          # several commits in a burst give one refresh
            self._pending = True
            self._committed.emit()

    def _refresh(self) -> None:
        self._pending = False
        if not self._detached:          # a refresh queued just before the project closed
            self.session.refresh()

    def detach(self) -> None:
        self._detached = True
        self._timer.stop()
        self.session.committed.disconnect(self._on_committed)
        for ev, sig in ((self.session.changed, self.changed), (self.session.scene_changed, self.scene_changed),
                        (self.session.film_changed, self.film_changed)):
            ev.disconnect(sig.emit)
