"""Long work runs off the GUI thread and reports back on it (where VTK and widgets live)."""
from __future__ import annotations

import threading
import time

import pytest

from studio.ui.worker import Worker

pytestmark = pytest.mark.gui


def test_work_runs_on_a_pool_thread_and_reports_on_the_gui_thread(qtbot):
    gui = threading.get_ident()
    seen = {}

    def count(n, state):
        seen["worker_thread"] = threading.get_ident()
        for i in range(n):
            state.progress(i / n, f"step {i}")
        return n * 2

    w = Worker(count, 4)
    w.progressed.connect(lambda f, m: seen.setdefault("progress_threads", set()).add(threading.get_ident()))
    w.done.connect(lambda r: seen.update(done_thread=threading.get_ident()))
    with qtbot.waitSignal(w.done, timeout=5000) as done:
        w.start()
    qtbot.waitUntil(lambda: "done_thread" in seen, timeout=2000)
    assert done.args == [8]
    assert seen["worker_thread"] != gui
    assert seen["done_thread"] == gui and seen["progress_threads"] == {gui}


def test_cancel_is_seen_by_the_function_and_errors_come_back_as_text(qtbot):
    started = threading.Event()

    def wait_for_cancel(state):
        started.set()
        t = time.time()
        while not state.cancelled and time.time() - t < 5:
            time.sleep(0.01)
        return "cancelled" if state.cancelled else "ran out"

    w = Worker(wait_for_cancel)
    with qtbot.waitSignal(w.done, timeout=8000) as done:
        w.start()
        assert started.wait(5)
        w.cancel()
    assert done.args == ["cancelled"]

    def broken(state):
        raise KeyError("crate")

    bad = Worker(broken)
    with qtbot.waitSignal(bad.failed, timeout=5000) as failed:
        bad.start()
    assert failed.args == ["KeyError: 'crate'"]


def test_work_that_ends_after_its_object_is_gone_tells_no_one_and_prints_nothing(qtbot, capfd):
    """The window closed (or the application quit) while the work ran: nothing to report to,
    and no traceback on the person's terminal."""
    import shiboken6
    from PySide6.QtCore import QThreadPool
    pool = QThreadPool()                    # its own pool: waiting on it waits for this work only
    release, ended = threading.Event(), threading.Event()

    def slow(state):
        release.wait(10)
        state.progress(0.5, "half")
        ended.set()
        return 1

    w = Worker(slow).start(pool)
    shiboken6.delete(w)                     # as a closed window's workers are deleted with it
    release.set()
    assert pool.waitForDone(10000) and ended.is_set()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "RuntimeError" not in err, err
