"""The viewport's look as a person checks it on screen: contact points where bodies touch
(markers in the pixels where the contact projects), and ambient occlusion darkening the
picture. Screenshots go to $KEYPOSE_SCREENSHOTS (else the test's temporary folder)."""
from __future__ import annotations


import numpy as np
import pytest

from studio.ui.qt_contacts import CONTACT_COLOR
from ui_scenes import open_window

pytestmark = pytest.mark.gui


def on_screen(vp, point) -> tuple[int, int]:
    """The pixel (column, row from the top) where a world point lands in the viewport."""
    r = vp.plotter.renderer
    r.SetWorldPoint(*point, 1.0)
    r.WorldToDisplay()
    x, y, _ = r.GetDisplayPoint()
    h = vp.plotter.window_size[1]
    return int(round(x)), int(round(h - 1 - y))


def marker_pixels(img: np.ndarray, col: int, row: int, r: int = 3) -> int:
    patch = img[max(0, row - r):row + r + 1, max(0, col - r):col + r + 1, :3].astype(int)
    want = np.array([round(255 * c) for c in CONTACT_COLOR])
    return int((np.abs(patch - want).max(axis=2) <= 12).sum())


def test_contact_points_mark_where_bodies_touch(qtbot, tmp_project, tmp_path, monkeypatch, shots):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    w = open_window(qtbot, tmp_project, states=2)       # s1: the crate rests on the floor, the arm clear
    vp, look = w.viewport, w.viewport.look
    assert look.contacts.isChecked()                    # on by default
    qtbot.waitUntil(lambda: look.touch.probe is not None, timeout=20000)
    w.playhead.set_frame(1001)
    pairs = {(t.a, t.b) for t in look.touch.shown}
    assert ("floor", "crate") in pairs or ("crate", "floor") in pairs
    crate = next(t for t in look.touch.shown if "crate" in (t.a, t.b))
    assert abs(crate.point[2]) < 0.006                  # on the floor's top face, within tau
    img = vp.screenshot()
    col, row = on_screen(vp, crate.point)
    assert 0 <= col < img.shape[1] and 0 <= row < img.shape[0]
    assert marker_pixels(img, col, row) >= 20           # a marker a few pixels wide, where the contact projects
    w.grab().save(str(shots / "contact-points.png"))
    look.contacts.setChecked(False)
    img = vp.screenshot()
    assert marker_pixels(img, col, row) == 0 and look.touch.shown == []
    look.contacts.setChecked(True)
    w.playhead.set_frame(1025)                          # s2: the crate moved on; its marker follows
    moved = next(t for t in look.touch.shown if "crate" in (t.a, t.b))
    assert moved.point[0] > crate.point[0] + 0.3


def test_ambient_occlusion_darkens_the_picture_and_turns_off_again(qtbot, tmp_project, tmp_path, monkeypatch, shots):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    w = open_window(qtbot, tmp_project, states=2)
    vp, look = w.viewport, w.viewport.look
    assert not look.ssao.isChecked()                    # off by default: costly on a software GL
    look.contacts.setChecked(False)
    plain = vp.screenshot().astype(float)
    look.ssao.setChecked(True)
    shaded = vp.screenshot().astype(float)
    w.grab().save(str(shots / "ambient-occlusion.png"))
    darker = (plain[..., :3].sum(axis=2) - shaded[..., :3].sum(axis=2)) > 30
    assert darker.mean() > 0.005                        # creases and the crate's foot darken
    assert shaded[..., :3].mean() < plain[..., :3].mean()
    look.shadows.setChecked(True)                       # one pass at a time: shadows turn it off
    assert not look.ssao.isChecked()
    look.ssao.setChecked(True)
    assert not look.shadows.isChecked()
    look.ssao.setChecked(False)
    again = vp.screenshot().astype(float)
    assert np.abs(again - plain).mean() < 1.0
