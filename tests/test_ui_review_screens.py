"""The doorway film reviewed on a laptop screen and on a desktop one (1280x800, 1920x1080):
the 3D view has at least half the window, the Checks dock shows check, verdict and
target whole, a repair proposal reads in words (no JSON) with its lines and changes
whole, the notes list shows its notes, and the key names on the ruler never cover
each other. Screenshots of each dock go to the `shots` folder to be looked at."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication

from studio.tools.box import ToolBox
from studio.timeline.storyboard import get_state
from studio.ui.main_window import MainWindow
from studio.ui.qt_layout import fit_to_screen
from studio.ui.session import Session

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]


def cut_columns(table, cols) -> list[str]:
    """The columns a reader sees cut: narrower than their contents need, or past the table's right edge."""
    vis = table.viewport().rect()
    cut = []
    for col in cols:
        x, width = table.columnViewportPosition(col), table.columnWidth(col)
        if width < table.sizeHintForColumn(col) or x < vis.left() or x + width > vis.right() + 1:
            cut.append(table.horizontalHeaderItem(col).text())
    return cut


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_doorway_review_reads_whole_on_laptop_and_desktop_screens(qtbot, tmp_path, monkeypatch, shots, size):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", "")
    path = tmp_path / "doorway"
    shutil.copytree(ROOT / "projects" / "doorway", path, ignore=shutil.ignore_patterns("jobs"))
    w = MainWindow(Session.open(path))
    qtbot.addWidget(w)
    fit_to_screen(w, QRect(0, 0, *size), wanted=size)      # the window as big as the screen
    w.show()
    qtbot.waitUntil(lambda: bool(w.viewport.actors), timeout=30000)
    qtbot.waitUntil(lambda: w.viewport.width() >= w.width() // 2, timeout=5000)
    tag = f"{size[0]}x{size[1]}"

    def snap(what: str) -> None:
        QApplication.processEvents()
        w.grab().save(str(shots / f"doorway-{tag}-{what}.png"))

    bar, fm = w.scrubber.bar, w.scrubber.bar.fontMetrics()
    labels = bar.key_labels(fm)
    assert len(labels) == len(w.session.states)             # every key named, elided where the room is short
    assert all(a[2] < b[0] for a, b in zip(labels, labels[1:]))           # and no name covers the next

    w._raise_dock("Checks")
    table = w.panels["Checks"].table
    qtbot.wait(200)
    cols = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert cut_columns(table, [cols.index(c) for c in ("check", "verdict", "target")]) == []
    snap("checks")

    # a key pushed into the stand: the offline repairer proposes, from the Repair review dock
    project = w.session.project
    st = get_state(project, "start")
    r = st.pose.roots["panel"]
    ToolBox(project, w.stack, actor="person").call("set_state", {"state": "start", "roots": {
        "panel": [r[0], r[1], r[2] - 0.015, *r[3:]]}})
    ToolBox(project, w.stack, actor="person").call("run_verifiers", {"state": "start"})
    w.session.refresh()
    w.playhead.set_frame(st.frame)
    w._raise_dock("Repair review")
    repair = w.panels["Repair review"]
    qtbot.mouseClick(repair.propose_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: repair.list.count() >= 1 and repair.worker is None, timeout=60000)
    repair.list.setCurrentRow(0)
    qtbot.wait(200)
    words = repair.verdicts.text()
    assert "fixes its NoPenetration failure" in words and "{" not in words, words
    item = repair.list.item(0)
    assert "\n" in item.text() and repair.list.visualItemRect(item).width() <= repair.list.viewport().width()
    rows = [[repair.changes.item(i, j).text() for j in range(4)] for i in range(repair.changes.rowCount())]
    assert rows and rows[0][:2] == ["move", "panel"] and "z +16.0 mm" in rows[0][3] and "[" not in rows[0][3]
    snap("repair")

    ToolBox(project, w.stack, actor="person").call("add_note", {
        "frame": 1350, "text": "the panel's far edge comes close to the jamb here", "camera": "cam_door",
        "strokes": [{"points": [[0.4, 0.3], [0.55, 0.45], [0.6, 0.6]]}]})
    w.session.refresh()
    w._raise_dock("Notes")
    notes = w.panels["Notes"]
    notes.list.setCurrentItem(notes.list.topLevelItem(0))
    w.playhead.set_frame(1350)
    qtbot.wait(200)
    assert notes.list.topLevelItemCount() == 1 and notes.list.topLevelItem(0).text(0) == "1350"
    snap("notes")
