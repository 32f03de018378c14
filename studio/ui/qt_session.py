"""The Qt side of `Session`: turns its plain events into Qt signals on the GUI
thread, and polls the database for commits by other processes (jobs, the CLI).

A commit is read on a worker, through a connection of its own (`read_snapshot`:
the scene, the film and its world matrices, the board, the verdict), and the
snapshot is applied on the GUI thread, so the window never waits for the
board of a long film. Commits during a read give one more read after it; a
snapshot read before a synchronous `Session.refresh` is dropped and read again."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal

from studio.store.project import Project
from studio.ui.session import Session, read_snapshot
from studio.ui.worker import Worker

POLL_MS = 300
_READS: QThreadPool | None = None


def reads() -> QThreadPool:
    """One thread for reading projects: a long verification on the global pool never delays a read."""
    global _READS
    if _READS is None:
        _READS = QThreadPool()
        _READS.setMaxThreadCount(1)
    return _READS


def _read(reader: Project, sigs: tuple, scene, state):
    return read_snapshot(reader, sigs, scene)


class QtSession(QObject):
    changed = Signal()
    scene_changed = Signal()
    film_changed = Signal()
    jobs_changed = Signal()
    read_failed = Signal(str)
    _committed = Signal()

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self._pending = False
        self._detached = False
        self._reader: Project | None = None
        self._reading: Worker | None = None
        self._again = False
        # A commit may come from a worker thread: queue the refresh onto this (GUI) thread.
        self._committed.connect(self._refresh, Qt.ConnectionType.QueuedConnection)
        session.committed.connect(self._on_committed)
        session.changed.connect(self.changed.emit)
        session.scene_changed.connect(self.scene_changed.emit)
        session.film_changed.connect(self.film_changed.emit)
        session.jobs_changed.connect(self.jobs_changed.emit)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(session.poll)
        self._timer.start()
        if session.sigs[0] is None:         # opened without a read: the first one on a worker too
            self._on_committed()

    @property
    def reading(self) -> bool:
        """A read is under way (or queued): what the views show may be about to change."""
        return self._reading is not None or self._pending

    def _on_committed(self) -> None:
        if not self._pending:          # several commits in a burst give one refresh
            self._pending = True
            self._committed.emit()

    def _refresh(self) -> None:
        self._pending = False
        if self._detached:             # a refresh queued just before the project closed
            return
        if self._reading is not None:
            self._again = True
            return
        self._read()

    def _read(self) -> None:
        s = self.session
        if self._reader is None:
            try:
                self._reader = Project.open(s.project.path)
            except Exception as e:      # the folder went away: keep what is shown, say why
                self.read_failed.emit(f"cannot read {s.project.path}: {e}")
                return
        gen = s.generation
        w = Worker(_read, self._reader, s.sigs, s.scene if s.sigs[0] else None)
        w.done.connect(lambda snap: self._read_done(snap, gen))
        w.failed.connect(self._read_error)
        self._reading = w.start(reads())

    def _read_done(self, snap, generation: int) -> None:
        self._reading = None
        if self._detached:
            self._close_reader()
            return
        if generation == self.session.generation:
            self.session.apply(snap)
        else:                          # the session refreshed itself meanwhile: read again from there
            self._again = True
        if self._again:
            self._again = False
            self._read()

    def _read_error(self, message: str) -> None:
        self._reading = None
        self.read_failed.emit(message)
        if self._detached:
            self._close_reader()

    def _close_reader(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def detach(self) -> None:
        self._detached = True
        self._timer.stop()
        self.session.committed.disconnect(self._on_committed)
        for ev, sig in ((self.session.changed, self.changed), (self.session.scene_changed, self.scene_changed),
                        (self.session.film_changed, self.film_changed)):
            ev.disconnect(sig.emit)
        if self._reading is None:
            self._close_reader()
