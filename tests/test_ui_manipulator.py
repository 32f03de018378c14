"""Posing in the viewport by synthetic mouse events on the real VTK widget: the
manipulator's arrows move a free body along one axis, its rings turn it, Ctrl
snaps, a jointed body's handle drags its chain by IK within limits, the wheel
turns a joint; each drag is one undoable command, and the Pose dock follows."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from agent_scenes import make_arm_project
from studio.scene.pose import Pose
from studio.timeline.storyboard import State, get_state, put_state

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_project):
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    scene = make_arm_project(tmp_project)
    put_state(tmp_project, scene, State("k1", 1001, Pose({}, {"shoulder": 0.2, "elbow": 0.6}).completed(scene),
                                        shot="cam_wide"))
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 6, timeout=15000)
    w.viewport.camera_mode.setCurrentIndex(1)           # free orbit, looking at the arm from the front
    cam = w.viewport.plotter.camera
    cam.position, cam.focal_point, cam.up = (-1.3, -3.5, 1.2), (-1.2, 0.3, 0.3), (0, 0, 1)
    w.viewport.plotter.reset_camera_clipping_range()
    w.viewport.plotter.render()
    return w


def screen(vp, point) -> QPoint:
    r = vp.plotter.renderer
    r.SetWorldPoint(*point, 1.0)
    r.WorldToDisplay()
    x, y, _ = r.GetDisplayPoint()
    widget = vp.plotter.interactor
    ratio = widget.devicePixelRatioF()
    return QPoint(round(x / ratio), round(widget.height() - y / ratio))


def drag(qtbot, vp, start: QPoint, end: QPoint, modifier=Qt.KeyboardModifier.NoModifier, steps: int = 8):
    widget = vp.plotter.interactor
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, modifier, start)
    for t in np.linspace(0, 1, steps + 1)[1:]:
        p = QPoint(round(start.x() + t * (end.x() - start.x())), round(start.y() + t * (end.y() - start.y())))
        qtbot.mouseMove(widget, p)
        from PySide6.QtGui import QMouseEvent
        from PySide6.QtCore import QEvent
        ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(p), QPointF(widget.mapToGlobal(p)),
                         Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton, modifier)
        QApplication.sendEvent(widget, ev)
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, modifier, end)


def arrow_point(man, axis: int, along: float = 0.45) -> np.ndarray:
    return man.origin + np.eye(3)[axis] * man.scale * along


def test_arrows_move_a_free_body_along_one_axis_as_one_undoable_command(window, qtbot, tmp_path):
    vp, man = window.viewport, window.manipulator
    window.playhead.select(("panel",))
    assert man.visible_handles == ["movex", "turnx", "movey", "turny", "movez", "turnz"]
    vp.screenshot(str(tmp_path / "manipulator.png"))
    start = screen(vp, arrow_point(man, 0))
    end = screen(vp, arrow_point(man, 0, 1.2))              # a short way: the panel stays clear of the wall
    seen = []
    man.previewed.connect(seen.append)
    drag(qtbot, vp, start, end)
    after = get_state(window.session.project, "k1").pose.roots["panel"]
    assert after[0] > -1.0 + 0.05                           # moved along +x
    assert after[1:3] == pytest.approx([1.0, 0.01], abs=1e-9)   # and only along x
    assert any(p is not None for p in seen) and seen[-1] is None   # the Pose dock followed, then settled
    assert window.panels["Pose"].roots["panel"][0].value() == pytest.approx(after[0], abs=1e-4)
    assert window.undo_action.text() == "Undo pose k1"
    window.undo_action.trigger()
    assert get_state(window.session.project, "k1").pose.roots["panel"][:3] == pytest.approx([-1.0, 1.0, 0.01])
    window.redo_action.trigger()                              # the posed key, checked and approved
    from studio.checks.run import verify_state
    from studio.timeline.gate import state_status
    verify_state(window.session.project, "k1")
    window.session.refresh()
    board = window.storyboard
    board.select_state("k1")
    board.note.setText("panel slid clear of the wall")
    qtbot.mouseClick(board.approve_button, Qt.MouseButton.LeftButton)
    status = state_status(window.session.project, "k1")
    assert status.ok, status.reasons


def test_ctrl_snaps_a_move_to_whole_centimetres_and_a_ring_turns_the_body(window, qtbot):
    vp, man = window.viewport, window.manipulator
    window.playhead.select(("panel",))
    drag(qtbot, vp, screen(vp, arrow_point(man, 0)), screen(vp, arrow_point(man, 0, 1.9)),
         Qt.KeyboardModifier.ControlModifier)
    x = get_state(window.session.project, "k1").pose.roots["panel"][0]
    cm = (x + 1.0) * 100
    assert abs(cm) >= 5 and cm == pytest.approx(round(cm), abs=1e-6)     # whole centimetres
    on_ring = lambda a: man.origin + man.scale * 0.75 * np.array([math.cos(a), 0, math.sin(a)])
    ring, ring2 = on_ring(math.radians(45)), on_ring(math.radians(100))   # the y ring, facing the camera
    drag(qtbot, vp, screen(vp, ring), screen(vp, ring2))
    q = np.array(get_state(window.session.project, "k1").pose.roots["panel"][3:])
    assert abs(2 * math.atan2(q[2], q[0])) > 0.3                        # turned about y, and only about y
    assert abs(q[1]) < 1e-9 and abs(q[3]) < 1e-9


def test_dragging_a_hand_solves_the_arm_by_ik_within_limits(window, qtbot, tmp_path):
    vp, man = window.viewport, window.manipulator
    window.playhead.select(("fore",))
    assert man.target[2] == "ik" and man.visible_handles == ["movex", "movey", "movez"]
    before = get_state(window.session.project, "k1").pose.joints
    drag(qtbot, vp, screen(vp, arrow_point(man, 2)), screen(vp, arrow_point(man, 2, 1.6)))
    after = get_state(window.session.project, "k1").pose.joints
    assert after["shoulder"] != pytest.approx(before["shoulder"]) or after["elbow"] != pytest.approx(before["elbow"])
    scene = window.session.scene
    for name in ("shoulder", "elbow"):
        j = scene.joint(name)
        assert j.lower - 1e-9 <= after[name] <= j.upper + 1e-9
    window.grab().save(str(tmp_path / "ik.png"))


def test_the_wheel_over_the_selected_link_turns_its_joint(window, qtbot):
    vp, man = window.viewport, window.manipulator
    window.playhead.select(("fore",))
    widget = vp.plotter.interactor
    b = vp.actors["fore"].GetBounds()
    pos = screen(vp, ((b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2))
    msgs = []
    man.message.connect(msgs.append)
    ev = QWheelEvent(QPointF(pos), QPointF(widget.mapToGlobal(pos)), QPoint(0, 0), QPoint(0, 120),
                     Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, ev)
    assert get_state(window.session.project, "k1").pose.joints["elbow"] == pytest.approx(0.6 + math.radians(2))
    assert msgs[-1].startswith("elbow +0.635")


def test_no_key_at_the_playhead_means_no_manipulator_and_says_how(window, qtbot):
    man = window.manipulator
    msgs = []
    man.message.connect(msgs.append)
    window.playhead.set_frame(1010)
    window.playhead.select(("panel",))
    assert man.visible_handles == []
    assert "Key this frame (I)" in msgs[-1]
    window.playhead.select(("wall",))
    assert "wall is static" in msgs[-1]
