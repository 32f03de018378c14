"""Review notes in the window, as a review tool keeps them: a note with strokes drawn
over the viewport on frame 1012 (no key there) comes back on frame 1012, and only
there, after the project is closed and opened again; a shot marked for a retake;
both in the review report beside the exported film, the note as a PNG of the
rendered frame with its strokes where they were drawn."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from studio.checks.run import verify_film, verify_state
from studio.scene.io import load_scene, save_scene
from studio.timeline.bake import bake_segment
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.notes import load_notes
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import get_state
from studio.tools.box import ToolBox
from ui_scenes import add_boxes

pytestmark = pytest.mark.gui


def baked_film(project):
    """Two approved, verified keys 24 frames apart, the slide between them baked and verified, one shot."""
    add_boxes(project, states=2)
    scene = load_scene(project)
    scene.cameras[0].resolution = [320, 180]
    save_scene(project, scene)
    ToolBox(project, actor="person").call("set_plan", {"plan": {
        "prompt": "a crate slides", "shots": [{"id": "crate_slide", "camera": "wide", "start": 1001, "end": 1025}],
        "states": [{"id": "s1", "frame": 1001, "shot": "crate_slide"}, {"id": "s2", "frame": 1025, "shot": "crate_slide"}],
        "motion": [{"segment": "s1..s2"}]}})
    for sid in ("s1", "s2"):
        verify_state(project, sid)
        record_review(project, sid, "approve", "", "ana", scene)
    a, b = get_state(project, "s1"), get_state(project, "s2")
    bake_segment(project, "s1..s2", interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)]), "interpolate",
                 scene=scene)
    verify_film(project)


def drag(qtbot, widget, points: list[QPoint]) -> None:
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, pos=points[0])
    for p in points[1:]:
        QApplication.sendEvent(widget, QMouseEvent(QEvent.Type.MouseMove, QPointF(p), QPointF(widget.mapToGlobal(p)),
                                                   Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton,
                                                   Qt.KeyboardModifier.NoModifier))
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=points[-1])


def red(img: np.ndarray) -> np.ndarray:
    r, g, b = (img[..., i].astype(int) for i in range(3))
    return (r > 200) & (g < 90) & (b < 90)


def open_window(qtbot, path):
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    w = MainWindow(Session.open(path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
    w._raise_dock("Notes")
    return w


@pytest.mark.blender
def test_a_note_drawn_on_frame_1012_comes_back_there_after_reopening_and_is_in_the_export_report(
        qtbot, tmp_project, tmp_path, shots, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    baked_film(tmp_project)
    path = tmp_project.path
    w = open_window(qtbot, path)
    notes, vp = w.panels["Notes"], w.viewport
    w.playhead.set_frame(1012)
    notes.text.setPlainText("the crate should clear the post by a hand's width here")
    qtbot.mouseClick(notes.draw_button, Qt.MouseButton.LeftButton)
    assert notes.sketch.drawing and vp.camera_mode.currentIndex() == 0       # drawn through the shot's camera
    widget = vp.plotter.interactor
    cx, cy = widget.width() // 2, widget.height() // 2
    drag(qtbot, widget, [QPoint(cx - 60 + 10 * i, cy + 20 - 4 * i) for i in range(13)])
    assert len(notes.sketch.pending) == 1 and notes.add_button.text() == "Add note (1 stroke)"
    qtbot.mouseClick(notes.add_button, Qt.MouseButton.LeftButton)
    [note] = load_notes(w.session.project)
    assert (note.frame, note.camera, note.by) == (1012, "wide", "person") and len(note.strokes[0].points) >= 10
    u, v = note.strokes[0].points[6]              # the middle of the stroke: the viewport's centre, in the image
    assert u == pytest.approx(0.5, abs=0.02) and v == pytest.approx(0.5 - 4 / widget.height(), abs=0.02)
    notes.tabs.setCurrentIndex(1)                 # Shots: a retake, with what to change
    notes.shot.setCurrentText("crate_slide")
    notes.status.setCurrentIndex(notes.status.findData("retake"))
    notes.shot_note.setText("slower into the stop")
    qtbot.mouseClick(notes.mark_button, Qt.MouseButton.LeftButton)
    assert notes.shots.topLevelItem(0).text(2) == "retake"
    notes.tabs.setCurrentIndex(0)
    w.grab().save(str(shots / "notes-drawn-1012.png"))
    w.close()

    w = open_window(qtbot, path)                  # the project opened again: the note is stored, not kept in memory
    notes, vp = w.panels["Notes"], w.viewport
    assert [notes.list.topLevelItem(i).text(0) for i in range(notes.list.topLevelItemCount())] == ["1012"]
    w.playhead.set_frame(1020)
    assert notes.sketch.drawn_actors == 0 and "No note on frame 1020" in notes.here.text()
    without = vp.screenshot()
    notes.list.setCurrentItem(notes.list.topLevelItem(0))
    qtbot.mouseClick(notes.list.viewport(), Qt.MouseButton.LeftButton,
                     pos=notes.list.visualItemRect(notes.list.topLevelItem(0)).center())
    assert w.playhead.frame == 1012                # the list jumps to the note's frame
    assert notes.sketch.drawn_actors == 1 and "hand's width" in notes.here.text()
    with_note = vp.screenshot()
    assert red(with_note).sum() > red(without).sum() + 60     # the stroke is drawn over the frame
    w.grab().save(str(shots / "notes-reopened-1012.png"))
    w.playhead.set_frame(1013)
    assert notes.sketch.drawn_actors == 0         # only on its own frame

    out = tmp_path / "delivery"
    exporter = w.panels["Jobs"].exporter
    with qtbot.waitSignal(exporter.message, timeout=300000,
                          check_params_cb=lambda m: m.startswith(("exported", "export failed"))) as said:
        exporter.export_to(out)
    assert said.args[0].startswith("exported ") and "review report" in said.args[0], said.args[0]
    w.close()
    report = json.loads((out / "review-report.json").read_text())
    [entry] = report["notes"]
    assert (entry["frame"], entry["shot"], entry["on_rendered_frame"]) == (1012, "crate_slide", True)
    assert entry["text"].startswith("the crate should clear")
    assert report["shots"] == [{**report["shots"][0], "shot": "crate_slide", "status": "retake",
                                "note": "slower into the stop"}]
    md = (out / "review-report.md").read_text()
    assert "frame **1012** (crate_slide)" in md and "retake: slower into the stop" in md
    png = np.asarray(Image.open(out / entry["png"]).convert("RGB"))
    assert png.shape[1] == 320 and png.shape[0] > 180          # the rendered frame, the note's words under it
    hit = red(png[:180])
    ys, xs = np.nonzero(hit)
    assert len(xs) > 30                                        # the stroke, where it was drawn on the image
    assert abs(np.median(xs) / 320 - u) < 0.05 and abs(np.median(ys) / 180 - v) < 0.08
