"""Click a body in the real VTK viewport: it is selected, highlighted, and named in the caption."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from studio.store.reports import Report, save_reports
from studio.ui.qt_viewport import ADVISORY_COLOR, SELECTED_COLOR
from ui_scenes import open_window

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_project):
    return open_window(qtbot, tmp_project)


def on_screen(viewport, body: str, local=None) -> QPoint:
    """Where the centre of `body`'s drawn box (or a point given in its own frame) lands on the
    interactor widget (Qt pixels, origin top-left)."""
    if local is None:
        b = viewport.actors[body].GetBounds()        # world bounds, the actor's user matrix included
        point = ((b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2)
    else:
        point = (viewport.session.world_at(viewport.playhead.frame)[body] @ np.array([*local, 1.0]))[:3]
    r = viewport.plotter.renderer
    r.SetWorldPoint(*point, 1.0)
    r.WorldToDisplay()
    x, y, _ = r.GetDisplayPoint()
    widget = viewport.plotter.interactor
    ratio = widget.devicePixelRatioF()
    return QPoint(round(x / ratio), round(widget.height() - y / ratio))


def click(qtbot, viewport, pos: QPoint, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.mouseClick(viewport.plotter.interactor, Qt.MouseButton.LeftButton, modifier, pos)


def test_clicking_a_body_selects_and_highlights_it(window, qtbot):
    vp = window.viewport
    crate = on_screen(vp, "crate")
    assert vp.picker.body_at(crate.x(), vp.plotter.interactor.height() - crate.y()) == "crate"
    click(qtbot, vp, crate)
    assert window.playhead.selected == ("crate",)
    assert vp.body_color("crate") == pytest.approx(SELECTED_COLOR, abs=0.01)
    assert vp.body_color("post") != pytest.approx(SELECTED_COLOR, abs=0.01)
    assert "selected crate" in vp.caption.text()
    pose = window.panels["Pose"]                      # the pose dock marks the rows that move it
    assert [k for k, label in pose.labels.items() if "bold" in label.styleSheet()] == ["crate"]
    click(qtbot, vp, on_screen(vp, "post"), Qt.KeyboardModifier.ShiftModifier)     # Shift adds
    assert window.playhead.selected == ("crate", "post")
    click(qtbot, vp, on_screen(vp, "post"))                                          # a plain click replaces
    assert window.playhead.selected == ("post",)
    assert vp.body_color("crate") != pytest.approx(SELECTED_COLOR, abs=0.01)
    click(qtbot, vp, QPoint(3, 3))                    # the background corner: nothing selected
    assert window.playhead.selected == ()
    assert vp.caption.text() == f"frame {window.playhead.frame}"


def test_a_drag_orbits_and_selects_nothing(window, qtbot):
    vp = window.viewport
    vp.camera_mode.setCurrentIndex(1)                 # free orbit
    crate = on_screen(vp, "crate")
    before = tuple(vp.plotter.camera.position)
    widget = vp.plotter.interactor
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, pos=crate)
    qtbot.mouseMove(widget, crate + QPoint(40, 10))
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=crate + QPoint(60, 15))
    assert window.playhead.selected == ()
    assert tuple(vp.plotter.camera.position) != pytest.approx(before)


def test_the_caption_names_what_fails_on_the_selected_body(window, qtbot):
    from studio.timeline.storyboard import content_hash, get_state
    project = window.session.project
    s1 = get_state(project, "s1")                     # a report of s1 as it is now: current, so it shows
    save_reports(project, "state:s1", [Report("Supported", "fail", [{"body": "crate"}])],
                 checked_hash=content_hash(window.session.scene, s1.pose, s1.frame))
    qtbot.waitUntil(lambda: 1001 in window.session.failures_at, timeout=5000)
    vp = window.viewport
    click(qtbot, vp, on_screen(vp, "crate"))
    assert window.playhead.selected == ("crate",)
    assert "advisory Supported: crate floats" in vp.caption.text()
    checks = window.panels["Checks"]                  # its row in the Checks table turns bold
    bold = [checks.table.item(i, 1).text() for i in range(checks.table.rowCount())
            if checks.table.item(i, 0).text() == "state:s1" and checks.table.item(i, 1).font().bold()]
    assert bold == ["Supported"]
    assert vp.body_color("crate") == pytest.approx(vp.failure_color("crate", "floating", False), abs=0.01)    # its failure shows over the highlight


def test_clicking_a_jointed_link_marks_its_joint_in_the_pose_dock(window, qtbot):
    vp = window.viewport
    vp.camera_mode.setCurrentIndex(1)                 # free orbit, framing the whole scene
    click(qtbot, vp, on_screen(vp, "arm", local=(0.6, 0.0, 0.0)))
    assert window.playhead.selected == ("arm",)
    pose = window.panels["Pose"]
    assert [k for k, label in pose.labels.items() if "bold" in label.styleSheet()] == ["shoulder"]
