"""Repair review of baked motion in the window: the repaired film as a ghost that
follows the playhead over the interval, a new key state approved only when
the person says so, one undoable command."""
from __future__ import annotations

import pytest
from calls_scenes import fingerprint
from motion_films import jamb_film
from PySide6.QtCore import Qt

from studio.repair.proposals import list_proposals
from studio.timeline.reviews import list_reviews
from studio.ui.main_window import MainWindow
from studio.ui.session import Session

pytestmark = pytest.mark.gui


def test_a_film_repair_is_previewed_over_its_interval_and_approved_with_its_key_state(qtbot, tmp_path):
    jamb_film(tmp_path / "jamb").close()
    w = MainWindow(Session.open(tmp_path / "jamb"))
    qtbot.addWidget(w)
    w.show()
    project = w.session.project
    qtbot.waitUntil(lambda: "crate" in w.viewport.actors, timeout=15000)
    repair = w.panels["Repair review"]
    w.playhead.set_frame(1013)
    qtbot.mouseClick(repair.propose_motion_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: repair.worker is None, timeout=60000)
    qtbot.waitUntil(lambda: repair.list.count() >= 1, timeout=5000)
    p = list_proposals(project, "proposed")[0]
    assert p.target == "film:out..in" and "removes 3 penetrating frames" in p.summary
    repair.select(p.id)
    assert w.playhead.frame == 1012 and w.viewport.showing == "film"
    assert w.viewport.ghost_bodies == ["crate"]                      # the repaired path, where it differs
    assert repair.verdicts.text().startswith("removes 3 penetrating frames at 1012–1014; adds none")
    w.playhead.set_frame(1001)                                        # the key state: both films agree
    assert w.viewport.ghost_bodies == []
    w.playhead.set_frame(1016)
    assert w.viewport.ghost_bodies == ["crate"]
    before = fingerprint(project)
    assert not repair.approve_button.isEnabled()                      # it inserts a key state: ask first
    repair.approve_keys.setChecked(True)
    assert repair.approve_button.isEnabled()
    qtbot.mouseClick(repair.approve_button, Qt.MouseButton.LeftButton)
    assert list_proposals(project)[0].status == "approved"
    key = next(c["state"] for c in p.changes if c["kind"] == "insert_state")
    assert [r.reviewer for r in list_reviews(project, key)] == ["person"]
    assert w.undo_action.text().startswith(f"Undo apply repair {p.id}")
    w.undo_action.trigger()
    assert fingerprint(project) == before and list_proposals(project)[0].status == "proposed"
