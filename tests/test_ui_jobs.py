"""The job panel drives real jobs: a Blender worker process started, watched and cancelled."""
from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap

from studio.jobs import queue
from studio.ui.main_window import MainWindow
from studio.ui.session import Session
from ui_scenes import add_boxes

pytestmark = [pytest.mark.gui, pytest.mark.blender]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def test_cancel_a_running_job_then_resume_it_to_the_end(qtbot, tmp_project):
    add_boxes(tmp_project, states=3)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.show()
    jobs = w.panels["Jobs"]
    qtbot.mouseClick(jobs.stills_button, Qt.MouseButton.LeftButton)
    job_id = jobs.selected_id()
    assert job_id is not None
    project = w.session.project
    qtbot.waitUntil(lambda: queue.get_job(project, job_id).state == "running", timeout=20000)
    pid = queue.get_job(project, job_id).pid
    assert pid and alive(pid)
    qtbot.waitUntil(lambda: jobs.selected_id() == job_id and jobs.cancel_button.isEnabled(), timeout=5000)
    qtbot.mouseClick(jobs.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: queue.get_job(project, job_id).state == "cancelled", timeout=20000)
    qtbot.waitUntil(lambda: not alive(pid), timeout=10000)
    qtbot.waitUntil(lambda: jobs.table.item(0, 2).text() == "cancelled", timeout=5000)
    assert jobs.resume_button.isEnabled() and not jobs.cancel_button.isEnabled()
    assert "cancelled" in jobs.log.toPlainText()
    # resume: the job runs to the end, its stills land on the storyboard cards and can be opened
    qtbot.mouseClick(jobs.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: queue.get_job(project, job_id).state in ("succeeded", "failed"), timeout=90000)
    job = queue.get_job(project, job_id)
    assert job.state == "succeeded", job.error
    qtbot.waitUntil(lambda: all(c.still for c in w.session.cards), timeout=5000)
    assert w.storyboard.model.still(w.session.cards[0]) is not None
    # hovering a card shows its still enlarged; a double-click opens it at full size
    idx = w.storyboard.model.index(0)
    assert '<img src="file://' in idx.data(Qt.ItemDataRole.ToolTipRole)
    w.storyboard.enlarge(idx)
    big = w.storyboard.enlarged
    full = QPixmap(str(w.storyboard.model.still_path(w.session.cards[0])))
    assert big.pixmap.size() == full.size() and big.pixmap.width() > 176
    big.close()
    qtbot.waitUntil(lambda: jobs.outputs.count() == 3, timeout=5000)
    assert jobs.outputs.currentData().endswith(".png") and os.path.exists(jobs.outputs.currentData())


def test_a_preview_without_baked_motion_is_refused_with_the_reason(qtbot, tmp_project):
    add_boxes(tmp_project, states=2)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    jobs = w.panels["Jobs"]
    with qtbot.waitSignal(jobs.message) as said:
        qtbot.mouseClick(jobs.preview_button, Qt.MouseButton.LeftButton)
    assert "no baked tracks yet" in said.args[0]
    assert queue.list_jobs(tmp_project) == [] and jobs.table.rowCount() == 0
    assert not any((tmp_project.path / "jobs").iterdir())          # nothing left behind
