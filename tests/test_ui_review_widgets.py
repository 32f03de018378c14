"""Widgets a review needs: the flipbook comparing two renders of the same frames
(side by side, and a wipe whose place a slider sets, picture for picture by film
frame), and the form made from a JSON schema (defaults shown, a value that does not
hold refused with its field named and nothing returned), and the Motion dock's Adopt end
state running a simulation's adoption as a job."""
from __future__ import annotations

import numpy as np
import pytest

from studio.ui.flipbook import VideoReel
from test_flipbook import shade, write_mp4

pytestmark = pytest.mark.gui


def test_the_flipbook_compares_two_renders_side_by_side_and_with_a_wipe(qtbot, tmp_path):
    from studio.ui.qt_flipbook import QtFlipbook
    a = write_mp4(tmp_path / "take_1.mp4", n=24)
    b = write_mp4(tmp_path / "take_2.mp4", n=36)                     # a longer render, from 12 frames earlier
    book = QtFlipbook("job 2 (preview 1010–1033)", [("video take_1.mp4", VideoReel(a, first=1010))], None,
                      [("job 1 (preview 998–1033)", lambda: VideoReel(b, first=998))])
    qtbot.addWidget(book)
    book.show()
    assert book.comparing == "off" and book.compare.count() == 2
    book.step(5)                                     # film frame 1015: picture 5 of take 1, picture 17 of take 2
    book.compare.setCurrentIndex(1)
    book.mode.setCurrentText("side by side")
    pic = book.composed(book.index)
    assert pic.shape == (48, 64 * 2 + 4, 3)
    assert np.abs(pic[24, 32].astype(int) - shade(5)).max() <= 8
    assert np.abs(pic[24, 68 + 32].astype(int) - shade(17)).max() <= 8     # the same film frame, not picture 5
    book.mode.setCurrentText("wipe")
    book.wipe.setValue(25)
    pic = book.composed(book.index)
    assert pic.shape == (48, 64, 3)
    assert np.abs(pic[24, 8].astype(int) - shade(5)).max() <= 8 and np.abs(pic[24, 40].astype(int) - shade(17)).max() <= 8
    book.compare.setCurrentIndex(0)
    assert book.comparing == "off" and book.composed(book.index).shape == (48, 64, 3)
    book.close()


def test_a_schema_form_shows_defaults_and_refuses_a_bad_value_by_its_field(qtbot):
    from studio.timeline.motion import motion_tools
    from studio.ui.qt_schema_form import FormError, SchemaForm
    form = SchemaForm(motion_tools()["simulate"].schema, {"bodies": ["ball"]})
    qtbot.addWidget(form)
    assert form.fields["substeps"].text() == "20" and form.fields["bodies"].text() == '["ball"]'
    assert form.values() == {"bodies": ["ball"]}                 # defaults left out: the tool's own apply
    form.fields["substeps"].setText("0")
    with pytest.raises(FormError, match="substeps: 0 is less than the minimum of 1"):
        form.values()
    assert "color: #d1453b" in form.labels["substeps"].styleSheet() and "substeps" in form.error.text()
    form.fields["substeps"].setText("many")
    with pytest.raises(FormError, match="substeps: expected a whole number, got 'many'"):
        form.values()
    form.fields["substeps"].setText("40")
    form.fields["bodies"].setText("")
    with pytest.raises(FormError, match="bodies: 'bodies' is a required property"):
        form.values()
    form.fields["bodies"].setText('["ball", "cup"]')
    form.fields["bounds"].setText("[[0, 0, 0], [1, 1]]")
    with pytest.raises(FormError, match=r"bounds\[1\]: \[1, 1\] is too short"):
        form.values()
    form.fields["bounds"].setText("")
    assert form.values() == {"bodies": ["ball", "cup"], "substeps": 40} and form.error.text() == ""


def test_adopt_end_state_from_the_motion_dock_runs_the_simulation_in_a_job(qtbot, tmp_path):
    import json

    from PySide6.QtCore import QPoint, Qt

    from studio.cli import main
    from studio.jobs import queue
    from studio.store.project import Project
    from studio.timeline.storyboard import get_state
    from studio.ui.main_window import MainWindow
    from studio.ui.qt_scrubber import FILM_Y
    from studio.ui.session import Session
    from test_adopt_end_state import GUESS, calls
    path = tmp_path / "crate"
    assert main(["new", str(path)]) == 0
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls(GUESS)))
    assert main(["agent", "replay", str(path), str(tmp_path / "c.jsonl"), "--quiet"]) == 0
    w = MainWindow(Session.open(path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    bar, motion = w.scrubber.bar, w.panels["Motion"]
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(int(bar.x_of(1020)), FILM_Y + 3))
    assert motion.current().segment == "dropped..lying" and motion.tool.currentData() == "simulate"
    assert motion.form.fields["bodies"].text() == '["crate"]'       # the plan's parameters, in the form
    assert motion.adopt_button.isEnabled()
    qtbot.mouseClick(motion.adopt_button, Qt.MouseButton.LeftButton)
    project = w.session.project
    [job] = queue.list_jobs(project)
    assert job.spec["segments"] == ["dropped..lying"] and job.spec.get("adopt_end") is True
    qtbot.waitUntil(lambda: queue.get_job(project, job.id).finished, timeout=120_000)
    with Project.open(path) as p:
        assert get_state(p, "lying").pose.roots["crate"] != GUESS          # the run's own end, adopted
