"""`studio open` on the doorway project shows its scene in the VTK viewport (issue 2's must-show).

The studio runs as its own process (the real `studio open` entry point and
event loop, under the test's Xvfb display); a timer inside it saves the
viewport and window once the scene is drawn, then quits."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.ui.qt_viewport import BACKGROUND

pytestmark = pytest.mark.gui

CHILD = r"""
import json, sys
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from studio.cli import main
from studio.ui.main_window import MainWindow

out = Path(sys.argv[2])
app = QApplication(sys.argv[:1])

def look():
    wins = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    if wins and wins[0].viewport.actors:
        win = wins[0]
        win.viewport.screenshot(out / "doorway-viewport.png")
        win.grab().save(str(out / "doorway-window.png"))
        (out / "shown.json").write_text(json.dumps({"bodies": sorted(win.viewport.actors),
            "triangles": win.viewport.triangles, "title": win.windowTitle()}))
        win.close()
        app.quit()
    else:
        QTimer.singleShot(100, look)

QTimer.singleShot(100, look)
sys.exit(main(["open", sys.argv[1]]))
"""


@pytest.fixture(scope="module")
def doorway(tmp_path_factory):
    from example_films import scene_only
    path = tmp_path_factory.mktemp("doorway") / "doorway"
    scene_only("doorway", path).close()          # the doorway scene, replayed from its calls file
    return path


def test_studio_open_shows_the_doorway_scene(doorway, tmp_path):
    run = subprocess.run([sys.executable, "-c", CHILD, str(doorway), str(tmp_path)], capture_output=True,
                         text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    shown = json.loads((tmp_path / "shown.json").read_text())
    assert "doorway" in shown["title"]
    assert {"wall", "panel", "floor", "stand"} <= set(shown["bodies"])
    assert shown["triangles"] > 5000
    img = np.asarray(Image.open(tmp_path / "doorway-viewport.png").convert("RGB"))
    rgb = img.reshape(-1, 3).astype(int)
    bg = np.round(np.array(BACKGROUND) * 255).astype(int)
    assert len(np.unique(rgb, axis=0)) > 50
    assert np.mean(np.abs(rgb - bg).sum(axis=1) > 12) > 0.3     # the wall and floor fill the shot
    assert (tmp_path / "doorway-window.png").stat().st_size > 20_000


def test_open_refuses_a_folder_that_is_not_a_project(tmp_path, capsys):
    assert main(["open", str(tmp_path)]) == 2
    assert "not a Keypose project" in capsys.readouterr().err
