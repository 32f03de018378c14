"""The window adopts a simulation's own end state: a bake refused because its run ends away from
the second key state offers the end in the Jobs panel, and Adopt end state makes that state the
run's end through a tool call in a job, after which the state waits for a review."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from test_adopt_end_state import GUESS, calls

from studio.cli import main
from studio.jobs import queue
from studio.store.project import Project
from studio.timeline.gate import state_status
from studio.timeline.storyboard import get_state
from studio.ui.main_window import MainWindow
from studio.ui.session import Session

pytestmark = pytest.mark.gui


def test_adopt_end_state_from_the_jobs_panel(qtbot, tmp_path, shots):
    path = tmp_path / "crate"
    assert main(["new", str(path)]) == 0
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls(GUESS)))
    assert main(["agent", "replay", str(path), str(tmp_path / "c.jsonl"), "--quiet"]) == 0
    w = MainWindow(Session.open(path))
    qtbot.addWidget(w)
    w.show()
    jobs = w.panels["Jobs"]
    jobs.parentWidget().raise_()               # the Jobs tab in front, as a person would click it
    qtbot.mouseClick(jobs.bake_button, Qt.MouseButton.LeftButton)
    project = w.session.project
    qtbot.waitUntil(lambda: queue.list_jobs(project) and queue.list_jobs(project)[0].finished, timeout=120_000)
    jobs.reload()
    jobs.select_job(1)
    assert queue.get_job(project, 1).state == "failed"
    qtbot.waitUntil(lambda: jobs.adopt_button.isVisible(), timeout=5000)
    assert jobs.adopt_button.text() == "Adopt end state as lying"
    assert "furthest at crate" in jobs.adopt_button.toolTip()
    w.grab().save(str(shots / "adopt-offered.png"))
    qtbot.mouseClick(jobs.adopt_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(queue.list_jobs(project)) == 2 and queue.list_jobs(project)[-1].finished,
                    timeout=120_000)
    with Project.open(path) as p:
        assert get_state(p, "lying").pose.roots["crate"] != GUESS
        assert state_status(p, "lying").status == "stale"
        calls_made = [json.loads(r["detail"])["tool"] for r in
                      p.db.query("SELECT detail FROM audit WHERE action = 'tool call' ORDER BY id")]
    assert calls_made[-1] == "adopt_end_state"
    jobs.reload()
    jobs.select_job(2)
    assert not jobs.adopt_button.isVisible()                    # the adopting job offers nothing more
    w.grab().save(str(shots / "adopt-done.png"))
