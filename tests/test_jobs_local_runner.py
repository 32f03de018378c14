"""The local runner runs queued jobs in the background, a few at a time."""
from __future__ import annotations

import threading
import time

import pytest

from jobs_scenes import film_project
from studio.jobs import queue, spec as specs
from studio.jobs.local import LocalRunner

pytestmark = pytest.mark.blender


def test_two_jobs_run_side_by_side_and_a_queued_one_can_be_cancelled(tmp_project):
    film_project(tmp_project, n_frames=4, two_cameras=True)
    ids = [queue.submit(tmp_project, "still", lambda d, c=c: specs.still_spec(tmp_project, d, None, [c])).id
           for c in ("main", "side", "main")]
    spans: dict[int, list[float]] = {}
    lock = threading.Lock()

    def on_event(job_id, e):
        with lock:
            spans.setdefault(job_id, []).append(time.monotonic())

    runner = LocalRunner(tmp_project.path, concurrency=2, settings={}, on_event=on_event)
    try:
        runner.cancel(ids[2])            # still queued: cancelled before it starts
        futures = [runner.start(i) for i in ids]
        results = [f.result(timeout=120) for f in futures]
    finally:
        runner.shutdown()
    assert [j.state for j in results] == ["succeeded", "succeeded", "cancelled"]
    a, b = spans[ids[0]], spans[ids[1]]
    assert a[0] < b[-1] and b[0] < a[-1]          # their runs overlapped in time
    assert ids[2] not in spans
