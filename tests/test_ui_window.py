"""The studio window under Xvfb: real widgets, a real VTK viewport, a real project."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from studio.store.reports import Report, save_reports
from studio.timeline.reviews import list_reviews
from studio.ui.failures import ADVISORY_SHADE, REQUIRED_SHADES
from studio.ui.qt_scrubber import ADVISORY_Y, LANE_H, REQUIRED_Y
from studio.ui.qt_viewport import BACKGROUND
from ui_scenes import open_window

pytestmark = pytest.mark.gui


def scene_pixels(img: np.ndarray) -> tuple[int, float]:
    """Distinct colours, and the share of pixels that are not the background."""
    rgb = img[..., :3].reshape(-1, 3).astype(int)
    bg = np.round(np.array(BACKGROUND) * 255).astype(int)
    return len(np.unique(rgb, axis=0)), float(np.mean(np.abs(rgb - bg).sum(axis=1) > 12))


@pytest.fixture
def window(qtbot, tmp_project):
    return open_window(qtbot, tmp_project)


def settle(qtbot, w, until, timeout=5000):
    """Let the session's poll and queued refreshes run until `until()` holds."""
    qtbot.waitUntil(until, timeout=timeout)


def test_window_shows_the_scene_not_a_blank_viewport(window, tmp_path):
    img = window.viewport.screenshot(tmp_path / "viewport.png")
    window.grab().save(str(tmp_path / "window.png"))
    colours, covered = scene_pixels(img)
    assert (tmp_path / "viewport.png").stat().st_size > 2000
    assert colours >= 6, f"viewport looks blank ({colours} colours)"   # flat-shaded box faces
    assert covered > 0.10, f"only {covered:.1%} of the viewport shows geometry"
    assert window.viewport.triangles == 4 * 12
    assert "states approved 0/3" in window.progress.text()


def test_approve_from_the_card_lands_in_the_database_and_undo_names_it(window, qtbot):
    from studio.checks.run import verify_state
    verify_state(window.session.project, "s2")          # passing checks: approval makes it approved
    board = window.storyboard
    board.select_state("s2")
    assert window.playhead.frame == 1025            # selecting a card moves the playhead to its frame
    board.note.setText("crate reads well")
    qtbot.mouseClick(board.approve_button, Qt.MouseButton.LeftButton)
    reviews = list_reviews(window.session.project, "s2")
    assert [(r.verdict, r.note) for r in reviews] == [("approve", "crate reads well")]
    assert window.undo_action.text() == "Undo approve s2"
    settle(qtbot, window, lambda: window.session.cards[1].status == "approved")
    assert "states approved 1/3" in window.progress.text()
    assert board.model.index(1).data() == "s2 1025 approved"
    window.undo_action.trigger()
    assert list_reviews(window.session.project, "s2") == []
    assert window.redo_action.text() == "Redo approve s2"
    board.select_state("s3")                       # the keyboard: Ctrl+Shift+R rejects with the note
    board.note.setText("arm hides the crate")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)    # shortcuts act in the active window
    qtbot.keyClick(board.note, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert [(r.verdict, r.note) for r in list_reviews(window.session.project, "s3")] == \
        [("reject", "arm hides the crate")]


def test_editing_an_approved_pose_turns_its_card_stale(window, qtbot):
    from studio.checks.run import verify_state
    verify_state(window.session.project, "s1")          # approve needs its checks passing, as everywhere
    board = window.storyboard
    board.select_state("s1")
    board.review("approve")
    posed = window.panels["Pose"]
    assert posed.title.text() == "<b>s1</b> @ 1001"
    x, y, _z = posed.roots["crate"]
    x.setValue(-0.8)
    y.setValue(0.2)
    window.session.refresh()                      # e.g. a job's progress: the unapplied edit stays
    assert x.value() == pytest.approx(-0.8) and posed.dirty
    qtbot.mouseClick(posed.apply_button, Qt.MouseButton.LeftButton)
    assert window.undo_action.text() == "Undo pose s1"
    settle(qtbot, window, lambda: window.session.cards[0].status == "stale")
    idx = board.model.index(0)
    assert "stale" in idx.data()
    assert "stale" in idx.data(Qt.ItemDataRole.ToolTipRole)
    # the viewport follows the edit at s1's frame
    m = window.viewport._matrices["crate"]
    assert np.isclose(m.GetElement(0, 3), -0.8) and np.isclose(m.GetElement(1, 3), 0.2)


def test_pins_sit_at_failing_frames_and_a_click_lands_there(window, qtbot, tmp_path):
    from studio.scene.pose import Tracks
    from studio.timeline.film import film_hash, save_segment
    project = window.session.project
    held = [window.session.pose_at(f) for f in range(1001, 1050)]          # a film that holds each key
    save_segment(project, "s1..s3", Tracks.from_poses(1001, held), tool="hold", bounds_hash="x")
    save_reports(project, "film", [                    # reports of that very film: current, so pinned
        Report("NoPenetration", "fail", [{"frame": 1030, "a": "crate", "b": "post", "depth_m": 0.02,
                                          "point": [0.8, 0.8, 0.3]}]),
        Report("Supported", "fail", [{"frame": 1040, "body": "crate"}])], checked_hash=film_hash(project))
    settle(qtbot, window, lambda: sorted(window.session.failures_at) == [1030, 1040])
    bar = window.scrubber.bar
    label = window.scrubber.pins_label                 # full words where they fit, short ones where not
    assert label.toolTip() == "1 required / 1 advisory failing frame"
    label.resize(1000, label.height())
    assert label.text() == "1 required / 1 advisory failing frame"
    label.resize(90, label.height())
    assert label.text() == "1 req / 1 adv"
    image = bar.grab().toImage()                  # the lanes: required red above, advisory muted amber below
    req_y, adv_y = REQUIRED_Y + LANE_H // 2, ADVISORY_Y + LANE_H // 2
    assert image.pixelColor(int(bar.x_of(1030)), req_y).name() == REQUIRED_SHADES["penetration"]
    assert image.pixelColor(int(bar.x_of(1040)), adv_y).name() == ADVISORY_SHADE
    assert image.pixelColor(int(bar.x_of(1040)), req_y).name() != ADVISORY_SHADE
    x = int(bar.x_of(1030))
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton,
                     pos=QPoint(x, req_y))
    assert window.playhead.frame == 1030
    assert window.playhead.selected == ("crate", "post")
    assert window.viewport.body_color("crate") == pytest.approx(window.viewport.failure_color("crate", "penetration"), abs=0.01)
    assert window.viewport.body_color("floor") == pytest.approx(window.viewport._colors["floor"], abs=0.01)
    img = window.viewport.screenshot(tmp_path / "pin.png")
    r, g, b = (img[..., i].astype(int) for i in range(3))
    red = int(np.sum((r > 90) & (r > 3 * g) & (r > 3 * b)))
    assert red >= 20, "the overlap's deepest point is not drawn"
    window.scrubber.goto_pin(+1)
    assert window.playhead.frame == 1040
    assert window.viewport.body_color("crate") == pytest.approx(window.viewport.failure_color("crate", "floating", False), abs=0.01)
    rows = window.panels["Checks"].rows()
    assert ("film", "NoPenetration", "required", "fail", "1", "0.00") in rows
