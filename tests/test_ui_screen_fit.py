"""The studio on a laptop screen: opened on the approved doorway film at 1280x720 and 1280x800,
the window fits the screen and the Checks dock shows each check's name and verdict whole."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QRect

from studio.ui.main_window import MainWindow
from studio.ui.qt_layout import fit_to_screen
from studio.ui.session import Session

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("size", [(1280, 720), (1280, 800)])
def test_checks_and_verdicts_are_whole_on_a_laptop_screen(qtbot, tmp_path, monkeypatch, size):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shutil.copytree(ROOT / "projects" / "doorway", tmp_path / "doorway", ignore=shutil.ignore_patterns("jobs"))
    w = MainWindow(Session.open(tmp_path / "doorway"))
    qtbot.addWidget(w)
    screen = QRect(0, 0, *size)
    fit_to_screen(w, screen)                      # as `studio open` places it (the default asks 1400x900)
    w.show()
    dock = next(d for d in w._docks if d.windowTitle() == "Checks")
    dock.raise_()
    qtbot.waitUntil(lambda: bool(w.viewport.actors), timeout=30000)
    qtbot.wait(200)                               # the docks settle into the screen's size
    assert screen.contains(w.frameGeometry()), (w.frameGeometry(), size)
    table = w.panels["Checks"].table
    assert table.rowCount() >= 8
    vis = table.viewport().rect()
    rows = [i for i in range(table.rowCount()) if vis.intersects(table.visualItemRect(table.item(i, 3)))]
    assert len(rows) >= 6
    for i in rows:
        for col in (1, 3):                        # check, verdict
            r = table.visualItemRect(table.item(i, col))
            assert vis.left() <= r.left() and r.right() <= vis.right(), (table.item(i, col).text(), r, vis)
    verdicts = {table.item(i, 3).text() for i in range(table.rowCount())}
    assert verdicts <= {"pass", "fail", "not_applicable", "error", "missing"} and "pass" in verdicts
    shots = Path(os.environ.get("KEYPOSE_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    w.grab().save(str(shots / f"doorway-{size[0]}x{size[1]}.png"))
