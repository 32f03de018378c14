"""The Jobs panel's "Bake motion" runs a real bake process and the storyboard's segments turn baked."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from timeline_scenes import author_arm

from studio.jobs import queue
from studio.timeline.film import list_segments
from studio.timeline.reviews import record_review
from studio.ui.main_window import MainWindow
from studio.ui.session import Session

pytestmark = [pytest.mark.gui]


def test_bake_motion_bakes_the_approved_segments_and_the_bars_turn_baked(qtbot, tmp_project):
    scene = author_arm(tmp_project, approve=False)
    for sid in ("rest", "bent"):               # bent..back stays blocked: back is not approved
        record_review(tmp_project, sid, "approve", "", "ana", scene)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.show()
    jobs = w.panels["Jobs"]
    status = lambda: {c.segment: c.segment_status for c in w.session.cards if c.segment}  # noqa: E731
    assert status() == {"rest..bent": "not baked", "bent..back": "not baked"}
    qtbot.mouseClick(jobs.bake_button, Qt.MouseButton.LeftButton)
    job_id = jobs.selected_id()
    assert job_id is not None
    project = w.session.project
    assert queue.get_job(project, job_id).spec["segments"] == ["rest..bent"]
    qtbot.waitUntil(lambda: queue.get_job(project, job_id).finished, timeout=30000)
    job = queue.get_job(project, job_id)
    assert job.state == "succeeded", job.error
    assert [r["segment"] for r in list_segments(project)] == ["rest..bent"]
    log = (queue.job_dir(project, job_id) / "log.txt").read_text()   # written by the bake process
    assert '"segment": "rest..bent"' in log and '"stage": "done"' in log
    # the film changed: the Checks dock verifies it by itself, and the bar turns passing (not before)
    qtbot.waitUntil(lambda: w.session.verdict.film == "current", timeout=60000)
    qtbot.waitUntil(lambda: status() == {"rest..bent": "passing", "bent..back": "not baked"}, timeout=10000)
    qtbot.waitUntil(lambda: jobs.table.item(0, 2).text() == "succeeded", timeout=5000)
