"""`studio open` on the doorway project shows its scene in the VTK viewport (issue 2's must-show)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from studio.cli import main
from studio.ui.main_window import MainWindow
from studio.ui.qt_viewport import BACKGROUND

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def doorway(tmp_path_factory):
    from studio.examples.doorway import create
    path = tmp_path_factory.mktemp("doorway") / "doorway"
    create(path).close()
    return path


def test_studio_open_shows_the_doorway_scene(qapp, doorway, tmp_path):
    shots = {}

    def look():
        wins = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if wins and wins[0].viewport.actors:
            win = wins[0]
            shots["img"] = win.viewport.screenshot(tmp_path / "doorway-viewport.png")
            win.grab().save(str(tmp_path / "doorway-window.png"))
            shots["bodies"] = sorted(win.viewport.actors)
            shots["triangles"] = win.viewport.triangles
            shots["title"] = win.windowTitle()
            win.close()
            qapp.quit()
        else:
            QTimer.singleShot(100, look)

    QTimer.singleShot(100, look)
    assert main(["open", str(doorway)]) == 0
    assert "doorway" in shots["title"]
    assert {"wall", "panel", "floor", "stand"} <= set(shots["bodies"])
    assert shots["triangles"] > 5000
    img = shots["img"]
    rgb = img[..., :3].reshape(-1, 3).astype(int)
    bg = np.round(np.array(BACKGROUND) * 255).astype(int)
    assert len(np.unique(rgb, axis=0)) > 200
    assert np.mean(np.abs(rgb - bg).sum(axis=1) > 12) > 0.3     # the wall and floor fill the shot
    assert (tmp_path / "doorway-viewport.png").stat().st_size > 10_000


def test_open_refuses_a_folder_that_is_not_a_project(tmp_path, capsys):
    assert main(["open", str(tmp_path)]) == 2
    assert "not a Keypose project" in capsys.readouterr().err
