"""Long work off the GUI thread (STYLE.md 4): a plain function `fn(*args, state)`
runs on the thread pool; the panel gets `done(result)` / `failed(message)` and
progress as Qt signals, queued back onto the GUI thread."""
from __future__ import annotations

import gc
import threading
import traceback

from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, QTimer, Signal

_running: set["Worker"] = set()     # keep workers alive until they report
COLLECT_MS = 250
_collector: QTimer | None = None
_holders = 0


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
        """Run on `pool` (the global pool unless given: a panel may keep a lane of its own).

        The pool runs a plain function, not a QRunnable of ours: a runnable's wrapper would be freed
        by the pool thread after the run, and so would this worker if that thread held it last; both
        crashed the window in shiboken's releaseWrapper. The pool thread hands the worker back
        (`_retired`) and the GUI thread lets go of it once it has reported."""
        _running.add(self)
        self.done.connect(self._finished)
        self.failed.connect(self._finished)
        box = [self]
        (pool or QThreadPool.globalInstance()).start(lambda: _run(box))
        return self

    def _finished(self, _result) -> None:
        """Reported: let go of it, on the GUI thread and after this report's delivery. Freeing the
        QObject drops its connections, and with them the closures over the panel that started it
        (a closed project's views are freed)."""
        _running.discard(self)
        QTimer.singleShot(0, _bury)

    def cancel(self) -> None:
        self.state.cancelled = True


_retired: list[Worker] = []          # workers their pool threads have let go of
_retired_lock = threading.Lock()


def _run(box: list) -> None:
    """On the pool thread: the work, its report, then the worker handed back; this thread keeps no
    reference to it (the GUI thread frees it, `_bury`)."""
    w = box.pop()
    try:
        try:
            result = w.fn(*w.args, w.state)
        except Exception as e:   # shown to the person in the panel that started it
            traceback.print_exc()
            _emit(w.failed, f"{type(e).__name__}: {e}")
        else:
            _emit(w.done, result)
    finally:
        with _retired_lock:
            _retired.append(w)
        del w


def _bury() -> None:
    """On the GUI thread: free the handed-back workers that have reported."""
    with _retired_lock:
        keep = [w for w in _retired if w in _running]
        gone = [w for w in _retired if w not in _running]
        _retired[:] = keep
    del gone


def collect_on_gui_thread() -> None:
    """While a window is open, Python's cycle collector runs on the GUI thread only (as VTK, STYLE.md 5).

    Left automatic, it runs on whichever thread allocates when a threshold is reached: a pool thread
    reading a project or running a job then frees the Qt wrappers of a panel's garbage cycles while
    the GUI thread uses them, and a later delete of the panel frees one twice (the window crashed in
    shiboken's releaseWrapper closing a project). So automatic collection is off, and a timer on the
    GUI thread collects the generations the thresholds would have. Paired with `release_collector`."""
    global _collector, _holders
    _holders += 1
    if _collector is not None:
        return
    gc.disable()
    _collector = QTimer(QCoreApplication.instance())
    _collector.setInterval(COLLECT_MS)
    _collector.timeout.connect(_collect)
    _collector.start()


def release_collector() -> None:
    """The last window closed: collect once here, and give collection back to Python."""
    global _collector, _holders
    _holders = max(0, _holders - 1)
    if _holders or _collector is None:
        return
    _collector.stop()
    _collector.deleteLater()
    _collector = None
    gc.collect()
    gc.enable()


def _collect() -> None:
    """What an automatic collection would do now: the oldest generation whose count passed its threshold."""
    limits, counts = gc.get_threshold(), gc.get_count()
    if counts[0] <= limits[0]:
        return
    generation = 2 if counts[1] > limits[1] and counts[2] > limits[2] else 1 if counts[1] > limits[1] else 0
    gc.collect(generation)
