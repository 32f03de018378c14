"""Render preview from the Jobs panel follows the playhead's in/out range: a range outside the
baked film is refused naming the valid one; a range inside renders only its frames."""
from __future__ import annotations


import pytest
from PySide6.QtCore import Qt

from studio.jobs import queue
from studio.scene.pose import Pose, Tracks
from studio.timeline.film import save_segment
from studio.ui.main_window import MainWindow
from studio.ui.session import Session
from ui_scenes import add_boxes

pytestmark = [pytest.mark.gui, pytest.mark.blender]


def bake_first_half(project) -> None:
    """The crate slides 1 m along x over s1..s2 (frames 1001..1025); s3 at 1049 is not baked yet."""
    poses = [Pose({"crate": [-1.0 + i / 24, 0, 0, 1, 0, 0, 0], "post": [1, 1, 0, 1, 0, 0, 0],
                   "floor": [0, 0, 0, 1, 0, 0, 0]}, {"shoulder": -1.0}) for i in range(25)]
    save_segment(project, "s1..s2", Tracks.from_poses(1001, poses), tool="test", bounds_hash="x")


def test_render_preview_renders_the_in_out_range_and_refuses_one_outside_the_film(qtbot, tmp_project, tmp_path,
                                                                                    monkeypatch, shots):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    add_boxes(tmp_project, states=3)
    bake_first_half(tmp_project)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    jobs = w.panels["Jobs"]
    said = []
    jobs.message.connect(said.append)
    assert w.playhead.first == 1001 and w.playhead.last >= 1040
    w.playhead.set_in_out(1020, 1040)                 # inside the timeline, past the baked film
    qtbot.mouseClick(jobs.preview_button, Qt.MouseButton.LeftButton)
    assert said[-1].endswith("frames 1020..1040 are outside the baked film; "
                             "expected an in/out range within 1001..1025")
    assert queue.list_jobs(tmp_project) == []
    w.playhead.set_in_out(1010, 1014)
    qtbot.mouseClick(jobs.preview_button, Qt.MouseButton.LeftButton)
    assert said[-1] == "job 1 started: preview 1010–1014"
    job = queue.get_job(tmp_project, 1)
    assert (job.spec["frame_start"], job.spec["frame_end"]) == (1010, 1014)
    assert jobs.table.item(0, 1).text() == "preview 1010–1014"
    qtbot.waitUntil(lambda: queue.get_job(tmp_project, 1).state in ("succeeded", "failed"), timeout=120000)
    job = queue.get_job(tmp_project, 1)
    assert job.state == "succeeded", job.error
    frames = sorted(p.name for p in (queue.job_dir(tmp_project, 1) / "frames").glob("*.png"))
    assert frames == [f"{f:06d}.png" for f in range(1010, 1015)]
    assert (tmp_project.path / "renders" / "preview.mp4").stat().st_size > 0
    w.session.poll()
    qtbot.waitUntil(lambda: jobs.log.toPlainText().startswith("job 1 (preview 1010–1014) succeeded"), timeout=5000)
    jobs.parentWidget().raise_()
    w.grab().save(str(shots / "jobs-preview-range.png"))
    flipbook_plays_the_render(qtbot, w, jobs, shots)


def flipbook_plays_the_render(qtbot, w, jobs, shots) -> None:
    """The finished preview in the flipbook: its video pictures match the stills Blender wrote,
    frame numbers follow the in/out range, play/pause and stepping work; the View menu finds it too."""
    import numpy as np
    from PySide6.QtGui import QImage

    jobs.select_job(1)
    assert jobs.flipbook_button.isEnabled()
    qtbot.mouseClick(jobs.flipbook_button, Qt.MouseButton.LeftButton)
    book = jobs.flipbook
    assert book is not None and book.isVisible()
    assert [name for name, _r in book.reels] == ["video preview.mp4", "stills (5)"]
    assert book.frame_label.text().startswith("frame 1010 · 1/5")
    qtbot.mouseClick(book.next_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(book.next_button, Qt.MouseButton.LeftButton)
    assert book.frame_label.text().startswith("frame 1012 · 3/5")
    video = book.reel.picture(book.index).astype(int)
    still = QImage(str(queue.job_dir(w.session.project, 1) / "frames" / "001012.png"))
    still = still.convertToFormat(QImage.Format.Format_RGB888)
    png = np.frombuffer(still.constBits(), np.uint8).reshape(still.height(), still.bytesPerLine())[:, :3 * still.width()]
    png = png.reshape(still.height(), still.width(), 3).astype(int)
    assert video.shape == png.shape and np.abs(video - png).mean() < 6      # the same picture, through H.264
    book.grab().save(str(shots / "flipbook-video.png"))
    qtbot.mouseClick(book.back_button, Qt.MouseButton.LeftButton)
    assert book.frame_label.text().startswith("frame 1011")
    qtbot.mouseClick(book.play_button, Qt.MouseButton.LeftButton)
    assert book.play_button.text() == "Pause"
    seen = [book.index]
    qtbot.waitUntil(lambda: seen.append(book.index) or seen[-1] < max(seen), timeout=5000)   # played on, looped
    qtbot.mouseClick(book.play_button, Qt.MouseButton.LeftButton)
    assert book.play_button.text() == "Play" and not book.timer.isActive()
    book.source.setCurrentIndex(1)                                          # the stills, one per frame
    assert book.frame_label.text().startswith("frame 1010 · 1/5")
    book.slider.setValue(4)
    assert book.frame_label.text().startswith("frame 1014 · 5/5")
    book.grab().save(str(shots / "flipbook-stills.png"))
    book.close()
    w.flipbook_action.trigger()                                             # View › Flipbook of the latest render
    assert jobs.flipbook is not book and jobs.flipbook.isVisible()
    assert jobs.flipbook.windowTitle() == "Flipbook — job 1 (preview 1010–1014)"
    jobs.flipbook.close()
