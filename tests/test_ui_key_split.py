"""An animator in the window: a key added inside a baked segment splits it, the film's
verdicts read stale until the Checks dock has verified the film again by itself, Bake
honours the split, and the status bar, the Checks dock, the scrubber and the export
refusal say the same thing, the real reason first. The Shot camera view follows the
shot holding the playhead."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

import calls_scenes
from shot_scenes import CAMERAS, film_calls
from studio.cli import main
from studio.jobs import queue
from studio.store.project import Project
from studio.timeline.bake import bounds_hash
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.storyboard import get_state
from studio.tools.box import ToolBox
from studio.ui.main_window import MainWindow
from studio.ui.session import Session

pytestmark = pytest.mark.gui


def made(path, calls) -> None:
    with Project.create(path, name=path.name) as p:
        box = ToolBox(p, actor="person")
        for c in calls:
            box.call(c["tool"], c["arguments"])


def window_on(qtbot, path):
    w = MainWindow(Session.open(path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == len(w.session.scene.bodies), timeout=20000)
    return w


def film_rows(w) -> dict[str, str]:
    return {r[1]: r[3] for r in w.panels["Checks"].rows() if r[0] == "film"}


def test_keying_inside_a_baked_segment_then_baking_in_the_window(qtbot, tmp_path, shots):
    path = tmp_path / "slide"
    made(path, calls_scenes.calls())
    assert main(["verify", str(path)]) == 0
    w = window_on(qtbot, path)
    checks, board, jobs = w.panels["Checks"], w.storyboard, w.panels["Jobs"]
    assert w.session.verdict.ready and w.progress.text().startswith("ready to export")
    assert set(film_rows(w).values()) <= {"pass", "not_applicable", "fail"} and film_rows(w)["NoPenetration"] == "pass"

    w.playhead.set_frame(1007)                                 # inside start..slid, baked
    assert board.key_name.text() == "key_1007"                 # the name proposed follows the playhead
    board.key_name.setText("nudge")
    qtbot.mouseClick(board.key_button, Qt.MouseButton.LeftButton)
    assert w.undo_action.text() == "Undo key nudge splitting start..slid"
    cards = {c.state_id: c for c in w.session.cards}
    assert (cards["start"].segment, cards["start"].segment_status) == ("start..nudge", "stale")
    assert (cards["nudge"].segment, cards["nudge"].segment_status) == ("nudge..slid", "stale")
    # before the dock has verified again: every verdict of the film reads stale, and all say why first
    assert set(film_rows(w).values()) == {"stale"}
    status = w.progress.text()
    assert status.startswith("not ready: state nudge: unreviewed") and "film verdicts stale" in status
    assert checks.verdict_label.text().startswith("not ready: state nudge: unreviewed")
    assert w.scrubber.pins_label.texts[0].startswith("film changed since verified: verdicts stale")
    w.grab().save(str(shots / "split-keyed-stale.png"))

    qtbot.waitUntil(lambda: checks.worker is not None, timeout=5000)       # verifies by itself
    assert checks.bar.isVisible()
    w.grab().save(str(shots / "split-verifying.png"))
    qtbot.waitUntil(lambda: checks.worker is None and w.session.verdict.film == "current", timeout=120000)
    assert film_rows(w)["NoPenetration"] == "pass"
    board.select_state("nudge")
    board.note.setText("a pause mid-slide")
    qtbot.mouseClick(board.approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: {c.state_id: c.status for c in w.session.cards}["nudge"] == "approved", timeout=10000)
    assert w.session.verdict.reasons[0].startswith("segment start..nudge: cut from start..slid")

    qtbot.mouseClick(jobs.bake_button, Qt.MouseButton.LeftButton)
    job_id = jobs.selected_id()
    project = w.session.project
    assert queue.get_job(project, job_id).spec["segments"] == ["start..nudge", "nudge..slid", "slid..rest"]
    qtbot.waitUntil(lambda: queue.get_job(project, job_id).finished, timeout=120000)
    assert queue.get_job(project, job_id).state == "succeeded", queue.get_job(project, job_id).error
    rows = {r["segment"]: r for r in list_segments(project)}
    assert all(rows[s]["bounds_hash"] == bounds_hash(project, s) for s in ("start..nudge", "nudge..slid"))
    key = get_state(project, "nudge").pose
    assert load_film_tracks(project).pose_at(1007).roots == key.roots
    qtbot.waitUntil(lambda: checks.worker is None and w.session.verdict.ready, timeout=120000)
    statuses = {c.segment: c.segment_status for c in w.session.cards if c.segment}
    assert statuses == {"start..nudge": "passing", "nudge..slid": "passing", "slid..rest": "passing"}
    assert w.progress.text().startswith("ready to export") and checks.verdict_label.text().startswith("ready")
    w.grab().save(str(shots / "split-baked-verified.png"))

    w.undo_action.trigger()                                    # the approval of nudge
    assert w.statusBar().currentMessage() == "Undone: approve nudge"
    qtbot.waitUntil(lambda: not w.session.verdict.ready, timeout=10000)
    assert w.progress.text().startswith("not ready: state nudge: unreviewed")
    export = jobs.exporter.export_to(tmp_path / "delivery")
    assert export is not None and export.refused
    text = jobs.exporter.refusal.informativeText()
    assert text.startswith("• state nudge: unreviewed") and "Next: review nudge on the storyboard" in text
    assert "Verify the film" not in text
    jobs.exporter.refusal.grab().save(str(shots / "split-export-refused.png"))
    jobs.exporter.refusal.reject()


def test_the_shot_camera_view_follows_the_shot_holding_the_playhead(qtbot, tmp_path, shots):
    path = tmp_path / "crossing"
    made(path, film_calls())
    w = window_on(qtbot, path)
    camera = w.viewport.plotter.camera
    for frame, name in ((1003, "cam_north"), (1006, "cam_north"), (1007, "cam_south"), (1012, "cam_south")):
        w.playhead.set_frame(frame)
        assert np.allclose(camera.position, CAMERAS[name][0]) and np.allclose(camera.focal_point, CAMERAS[name][1])
        w.viewport.grab().save(str(shots / f"shot-camera-{frame}.png"))


def test_a_film_opened_stale_is_shown_stale_and_verified_only_once_something_changes(qtbot, tmp_path):
    path = tmp_path / "slide"
    made(path, calls_scenes.calls())
    assert main(["verify", str(path)]) == 0
    with Project.open(path) as p:                        # re-baked by another tool after it was verified
        ToolBox(p, actor="person").call("author_segment", {"segment": "start..slid", "tool": "hold",
                                                           "params": {"blend": 6}})
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    assert w.open_project(path)                          # read on a worker: the window is live meanwhile
    qtbot.waitUntil(lambda: w.session.sigs[0] is not None and "Checks" in w.panels, timeout=20000)
    checks = w.panels["Checks"]
    qtbot.waitUntil(lambda: set(film_rows(w).values()) == {"stale"}, timeout=10000)
    qtbot.wait(1500)                                     # longer than the dock waits after a change
    assert checks.worker is None and set(film_rows(w).values()) == {"stale"}
    assert "film verdicts stale: verify the film" in w.progress.text()
    w.storyboard.select_state("rest")                    # an edit: the last key moved on by five frames
    w.playhead.set_frame(1030)
    w.storyboard.move_selected()
    assert get_state(w.session.project, "rest").frame == 1030
    qtbot.waitUntil(lambda: checks.worker is not None or w.session.verdict.film == "current", timeout=10000)
    qtbot.waitUntil(lambda: checks.worker is None and w.session.verdict.film == "current", timeout=120000)
    assert "stale" not in film_rows(w).values()
