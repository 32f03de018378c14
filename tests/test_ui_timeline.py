"""The timeline and failures as a person reads them, on a film the real verifiers judged:
lanes with runs and a filter, an advisory pin with its bodies tinted and its figure in the
caption, a penetration with its overlap drawn, transport keys from the frame box, and the
window at 1280x720 with the layout saved per user. Screenshots go to $KEYPOSE_SCREENSHOTS
(else the test's temporary folder)."""
from __future__ import annotations


import numpy as np
import pytest
from PySide6.QtCore import Qt

from studio.ui.main_window import MainWindow
from studio.ui.qt_shortcuts import window_shortcuts
from studio.ui.session import Session
from test_ui_verify import bake_through_the_post
from ui_scenes import add_boxes

pytestmark = pytest.mark.gui


@pytest.fixture
def verified(qtbot, tmp_project, tmp_path, monkeypatch):
    """The box film (crate slides through the post, the arm swings past its limit), verified
    from the Checks dock, in a 1280x720 window with a user config of its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    add_boxes(tmp_project, states=3)
    bake_through_the_post(tmp_project)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
    checks = w.panels["Checks"]
    qtbot.mouseClick(checks.verify_button, Qt.MouseButton.LeftButton)
    assert checks.bar.isVisible() and checks.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: checks.worker is None, timeout=60000)
    qtbot.waitUntil(lambda: bool(w.session.failures_at), timeout=5000)
    assert not checks.bar.isVisible()
    return w


def test_lanes_draw_runs_and_the_filter_narrows_them(verified, shots):
    w = verified
    bar = w.scrubber.bar
    runs = bar.runs()
    pen = sorted(f.frame for f in w.session.failures if f.check == "NoPenetration" and f.target == "film")
    assert any(r.first <= pen[0] and pen[-1] <= r.last for r in runs["required"])   # one bar, not a carpet
    assert all(r.count == r.last - r.first + 1 for r in runs["required"] + runs["advisory"])
    slip = sorted({f.frame for f in w.session.failures if f.check == "ContactSlip"})
    assert slip and len(runs["advisory"]) < len(slip)
    w.grab().save(str(shots / "lanes.png"))
    w.scrubber.set_filter(check="ContactSlip")
    assert w.playhead.pin_filter.check == "ContactSlip"
    assert bar.runs()["required"] == [] and bar.runs()["advisory"]
    w.scrubber.bar.grab().save(str(shots / "lanes-filtered-slip.png"))
    w.scrubber.set_filter(required_only=True)
    assert bar.runs()["advisory"] == [] and bar.runs()["required"]


def test_an_advisory_pin_tints_its_bodies_and_names_the_figure(verified, shots):
    w = verified
    w.scrubber.set_filter(check="ContactSlip")
    w.playhead.set_frame(w.playhead.first)
    assert w.scrubber.goto_pin(+1)
    frame = w.playhead.frame
    fail = next(f for f in w.session.failures_at[frame] if f.check == "ContactSlip")
    assert w.playhead.selected == tuple(sorted(fail.bodies)) == ("crate", "floor")
    caption = w.viewport.caption.text()
    assert "advisory ContactSlip: crate slips" in caption and "mm on floor" in caption
    assert w.viewport.body_color("crate") == pytest.approx(w.viewport.failure_color("crate", "other", False), abs=0.01)
    w.viewport.screenshot(shots / "advisory-pin-viewport.png")
    w.grab().save(str(shots / "advisory-pin.png"))


def test_a_penetration_draws_its_overlap_and_tints_the_pair_lightly(verified, shots):
    w = verified
    w.scrubber.set_filter(check="NoPenetration")
    fails = [f for f in w.session.failures if f.check == "NoPenetration" and f.target == "film"]
    deepest = max(fails, key=lambda f: float(f.text.split(" deep")[0].split()[-2]))
    w.scrubber.bar.jump_to_pin(deepest.frame)
    assert "overlap-marks" in w.viewport.plotter.actors
    crate = w.viewport.body_color("crate")
    assert crate == pytest.approx(w.viewport.failure_color("crate", "penetration"), abs=0.01)
    assert crate != pytest.approx((0.9, 0.1, 0.1), abs=0.05)          # tinted, not wholly red
    assert "mm deep" in w.viewport.caption.text()
    img = w.viewport.screenshot(shots / "penetration-overlap.png").astype(int)
    assert w.viewport.actors["crate"].prop.opacity < 1              # see-through, so the overlap shows
    marks = w.viewport.plotter.actors["overlap-marks"]
    marks.SetVisibility(False)
    without = w.viewport.screenshot().astype(int)
    marks.SetVisibility(True)
    changed = np.abs(img - without).sum(axis=2) > 60
    assert int(changed.sum()) >= 30                                  # the deepest point and its push arrow
    assert (img[changed][:, 0] > img[changed][:, 1] + 40).mean() > 0.8   # drawn in red


def test_the_window_at_1280x720_shows_every_check_row_and_its_verdict(verified, shots):
    w = verified
    table = w.panels["Checks"].table
    dock = next(d for d in w._docks if d.windowTitle() == "Checks")
    dock.raise_()
    w.grab()                                                          # lays the window out
    assert w.width() <= 1280 and w.height() <= 720, (w.width(), w.height())
    assert table.rowCount() >= 8
    vis = table.viewport().rect()
    shown = [i for i in range(table.rowCount()) if vis.intersects(table.visualItemRect(table.item(i, 3)))]
    assert len(shown) >= 8, f"only {len(shown)} check rows visible"
    verdict = table.visualItemRect(table.item(0, 3))
    assert vis.contains(verdict.center()), "the verdict column is off-screen"
    w.grab().save(str(shots / "layout-1280x720.png"))


def test_transport_keys_work_from_the_frame_box(verified, qtbot):
    w = verified
    w.activateWindow()
    qtbot.waitUntil(lambda: w.isActiveWindow(), timeout=5000)
    box = w.scrubber.frame_box
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    qtbot.keyClick(box, Qt.Key.Key_End)
    assert w.playhead.frame == w.playhead.last
    qtbot.keyClick(box, Qt.Key.Key_Home)
    assert w.playhead.frame == w.playhead.first
    qtbot.keyClick(box, Qt.Key.Key_BracketRight)
    assert w.playhead.frame == 1025                                   # the next key, s2
    qtbot.keyClick(box, Qt.Key.Key_L)
    assert w.playhead.playing and w.playhead.rate == 1
    qtbot.keyClick(box, Qt.Key.Key_L)
    assert w.playhead.rate == 2
    qtbot.keyClick(box, Qt.Key.Key_K)
    assert not w.playhead.playing
    qtbot.keyClick(box, Qt.Key.Key_I, Qt.KeyboardModifier.ShiftModifier)
    w.playhead.set_frame(1040)
    qtbot.keyClick(box, Qt.Key.Key_O, Qt.KeyboardModifier.ShiftModifier)
    assert w.playhead.in_out == (1025, 1040) and w.scrubber.in_out_label.text() == "in/out 1025–1040"
    keys = {(what, k) for _where, what, k in window_shortcuts(w)}
    assert ("Shuttle forwards (L: faster each press)", "L") in keys and ("Key this frame", "I") in keys


def test_playback_keeps_the_films_time_by_dropping_frames(verified, qtbot):
    import time
    w = verified
    w.playhead.set_frame(w.playhead.first)
    t0 = time.perf_counter()
    w.playhead.set_playing(True)
    qtbot.wait(1000)
    w.playhead.set_playing(False)
    elapsed = time.perf_counter() - t0
    advanced = w.playhead.frame - w.playhead.first
    clock = w.scrubber.clock
    assert clock.shown + clock.dropped == advanced                    # every frame was drawn or dropped
    assert advanced >= int(0.8 * 24 * elapsed) - 2                    # the film did not slow down


def test_the_layout_is_kept_per_user_and_reset_restores_it(verified, qtbot, tmp_project):
    w = verified
    plan = next(d for d in w._docks if d.windowTitle() == "Plan")
    plan.hide()
    w.close()
    w2 = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w2)
    w2.show()
    plan2 = next(d for d in w2._docks if d.windowTitle() == "Plan")
    assert not plan2.isVisible()                                      # as this user left it
    w2.reset_layout_action.trigger()
    assert plan2.isVisible()
    w2.close()


def test_onion_skin_and_trail_follow_the_selected_body(verified, shots):
    w = verified
    vp = w.viewport
    w.playhead.set_frame(1025)
    w.playhead.select(["crate"])
    assert "look-grid" in vp.plotter.actors                            # on by default
    vp.look.onion.setChecked(True)
    vp.look.trails.setChecked(True)
    assert vp.look.onion_frames == sorted(("crate", off) for off in (-6, -4, -2, 2, 4, 6))
    ghost = vp.look._onion[("crate", -2)][1]
    assert ghost.GetElement(0, 3) == pytest.approx(w.session.world_at(1023)["crate"][0, 3])
    trail = vp.plotter.actors["look-trails"].mapper.dataset
    assert trail.n_points == 49                                        # the whole 49-frame film, within 2 s
    vp.screenshot(shots / "onion-skin.png")
    w.playhead.set_frame(1003)                                         # near the start: only the later ghosts
    assert [off for _b, off in vp.look.onion_frames] == [-2, 2, 4, 6]
    vp.look.xray.setChecked(True)
    assert vp.actors["floor"].prop.opacity < 0.5
    vp.look.xray.setChecked(False)
    assert vp.actors["floor"].prop.opacity == 1.0
    w.playhead.select([])
    assert vp.look.onion_frames == [] and "look-trails" not in vp.plotter.actors
