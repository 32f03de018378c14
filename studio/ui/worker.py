"""Long work off the GUI thread (STYLE.md 4): a plain function `fn(*args, state)`
runs on the thread pool; the panel gets `done(result)` / `failed(message)` and
progress as Qt signals, queued back onto the GUI thread."""
from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

_running: set["Worker"] = set()     # keep workers alive until they report


class WorkState:
    """What a plain function sees: a progress sink and a cancel flag."""

    def __init__(self, worker: "Worker"):
        self._worker = worker
        self.cancelled = False

    def progress(self, fraction: float, message: str = "") -> None:
        _emit(self._worker.progressed, float(fraction), message)


def _emit(signal, *args) -> None:
    """Report to the GUI thread, unless the worker's object is gone (the window was closed
    while the work ran, the application is quitting): then no one is left to tell."""
    try:
        signal.emit(*args)
    except RuntimeError:
        pass


class Worker(QObject):
    done = Signal(object)
    failed = Signal(str)
    progressed = Signal(float, str)

    def __init__(self, fn, *args):
        super().__init__()
        self.fn, self.args = fn, args
        self.state = WorkState(self)

    def start(self, pool: QThreadPool | None = None) -> "Worker":
        """Run on `pool` (the global pool unless given: a panel may keep a lane of its own)."""
        _running.add(self)
        self.done.connect(self._finished)
        self.failed.connect(self._finished)
        (pool or QThreadPool.globalInstance()).start(_Run(self))
        return self

    def _finished(self, _result) -> None:
        """Reported: let go of it. Deleting the QObject drops its connections, and with them the
        closures over the panel that started it (a closed project's views are freed)."""
        _running.discard(self)
        self.deleteLater()

    def cancel(self) -> None:
        self.state.cancelled = True


class _Run(QRunnable):
    def __init__(self, worker: Worker):
        super().__init__()
        self.worker = worker

    def run(self) -> None:
        w = self.worker
        try:
            result = w.fn(*w.args, w.state)
        except Exception as e:   # shown to the person in the panel that started it
            traceback.print_exc()
            _emit(w.failed, f"{type(e).__name__}: {e}")
            return
        _emit(w.done, result)
