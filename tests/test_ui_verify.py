"""Run the real verifiers from the Checks dock and find pins where the film fails."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from studio.scene.pose import Pose, Tracks
from studio.timeline.film import save_segment
from studio.ui.main_window import MainWindow
from studio.ui.qt_viewport import FAILURE_COLORS
from studio.ui.session import Session
from ui_scenes import add_boxes

pytestmark = pytest.mark.gui
N = 49


def crate_x(i: int) -> float:
    return -1.0 + 3.0 * i / (N - 1)


def shoulder(i: int) -> float:
    return 2.0 * i / (N - 1)


def bake_through_the_post(project):
    """The crate slides along y = 1 straight through the post at x = 1 while the arm swings past +1.5 rad."""
    poses = [Pose({"crate": [crate_x(i), 1.0, 0, 1, 0, 0, 0], "post": [1, 1, 0, 1, 0, 0, 0],
                   "floor": [0, 0, 0, 1, 0, 0, 0]}, {"shoulder": shoulder(i)}) for i in range(N)]
    save_segment(project, "s1..s3", Tracks.from_poses(1001, poses), tool="test", bounds_hash="x")


def test_verify_puts_pins_on_the_failing_frames_and_a_pin_lands_there(qtbot, tmp_project):
    add_boxes(tmp_project, states=3)
    bake_through_the_post(tmp_project)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
    checks = w.panels["Checks"]
    qtbot.mouseClick(checks.verify_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: checks.worker is None, timeout=60000)
    qtbot.waitUntil(lambda: bool(w.session.failures_at), timeout=5000)
    assert "verified 3 states and the film" in checks.status.text()
    pen = {f.frame for f in w.session.failures if f.check == "NoPenetration" and f.target == "film"}
    joint = {f.frame for f in w.session.failures if f.check == "JointLimits" and f.target == "film"}
    # the crate (0.5 wide) overlaps the post (0.2 wide) while |x - 1| < 0.35
    deep = {1001 + i for i in range(N) if abs(crate_x(i) - 1) < 0.30}
    clear = {1001 + i for i in range(N) if abs(crate_x(i) - 1) > 0.40}
    assert deep <= pen and not (pen & clear)
    assert joint == {1001 + i for i in range(N) if shoulder(i) > 1.5}
    # click the first joint pin: the playhead lands there and the arm turns magenta
    first = min(joint)
    bar = w.scrubber.bar
    bar.jump_to_pin(first)
    assert w.playhead.frame == first and "arm" in w.playhead.selected
    assert w.viewport.body_color("arm") == pytest.approx(w.viewport.failure_color("arm", "joint"), abs=0.01)
    m = w.viewport._matrices["crate"]
    assert np.isclose(m.GetElement(0, 3), crate_x(first - 1001))
    rows = {(r[0], r[1]): r[3] for r in checks.rows()}
    assert rows[("film", "NoPenetration")] == "fail" and rows[("film", "JointLimits")] == "fail"


class _Asked:
    """A worker's state as the Checks dock's worker passes it: progress heard, cancel on request."""

    def __init__(self, cancel_after: str | None = None):
        self.heard: list[tuple[float, str]] = []
        self.cancel_after, self.cancelled = cancel_after, False

    def progress(self, fraction: float, what: str = "") -> None:
        self.heard.append((fraction, what))
        if self.cancel_after and what == self.cancel_after:
            self.cancelled = True


def test_the_checks_run_in_their_own_process_report_progress_and_stop_when_asked(tmp_project):
    from studio.store.reports import load_reports
    from studio.ui.checking import verify_in_child
    add_boxes(tmp_project, states=3)
    bake_through_the_post(tmp_project)
    asked = _Asked()
    text = verify_in_child(tmp_project.path, None, True, asked)
    assert text == "verified 3 states and the film"
    assert [w for _f, w in asked.heard] == ["state s1", "state s2", "state s3", "film"]
    reports, _hash = load_reports(tmp_project, "film")            # stored by the child, read here
    assert {r.name: r.verdict for r in reports}["NoPenetration"] == "fail"

    stop = _Asked(cancel_after="state s1")                           # Cancel pressed while s1 is checked
    text = verify_in_child(tmp_project.path, ["s1", "s2", "s3"], True, stop)
    assert text.startswith("cancelled: verified 1 of 3 states")
    assert [w for _f, w in stop.heard] == ["state s1"]


def test_a_project_the_checks_cannot_open_is_named_in_one_line(tmp_path):
    from studio.ui.checking import verify_in_child
    with pytest.raises(RuntimeError) as e:
        verify_in_child(tmp_path / "no-such-project", None, True, _Asked())
    assert "no-such-project" in str(e.value) and "\n" not in str(e.value) and "Traceback" not in str(e.value)
