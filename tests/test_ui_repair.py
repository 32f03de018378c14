"""Repair review in the window: an offline proposal shown as a before/after overlay, then approved."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from studio.repair.proposals import list_proposals
from studio.scene.pose import Pose
from studio.timeline.commands import SetPose
from studio.timeline.storyboard import get_state
from studio.ui.main_window import MainWindow
from studio.ui.session import Session
from ui_scenes import add_boxes

pytestmark = pytest.mark.gui


def test_propose_show_overlay_and_approve_a_repair(qtbot, tmp_project):
    add_boxes(tmp_project, states=2)
    # s1: the crate pushed 0.15 m into the post (post at x = 1, y = 1; crate 0.5 wide)
    SetPose(tmp_project, "s1", Pose({"crate": [0.7, 1.0, 0, 1, 0, 0, 0], "post": [1, 1, 0, 1, 0, 0, 0]},
                                    {"shoulder": 0.0})).do()
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
    repair = w.panels["Repair review"]
    said = []
    repair.message.connect(said.append)
    w.playhead.set_frame(1001)
    qtbot.mouseClick(repair.propose_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: repair.worker is None, timeout=60000)
    assert any(m.startswith("the offline repairer (no model configured): ") for m in said), said
    qtbot.waitUntil(lambda: repair.list.count() >= 1, timeout=5000)
    proposal = list_proposals(tmp_project, "proposed")[0]
    assert proposal.check_name == "NoPenetration"
    repair.select(proposal.id)
    assert repair.changes.rowCount() == len(proposal.changes) >= 1
    assert [(c["kind"], c["name"]) for c in proposal.changes] == [("root", "crate")]
    assert w.viewport.ghost_bodies == ["crate"]          # the 'after' overlay: only what moves
    assert w.playhead.frame == 1001
    before = get_state(tmp_project, "s1").pose.roots["crate"]
    qtbot.mouseClick(repair.approve_button, Qt.MouseButton.LeftButton)
    after = get_state(tmp_project, "s1").pose.roots["crate"]
    assert not np.allclose(before, after)
    assert list_proposals(tmp_project)[0].status == "approved"
    assert w.undo_action.text().startswith(f"Undo apply repair {proposal.id}")
    qtbot.waitUntil(lambda: not w.viewport.ghost_bodies, timeout=5000)
    w.undo_action.trigger()
    assert np.allclose(get_state(tmp_project, "s1").pose.roots["crate"], before)
    assert list_proposals(tmp_project)[0].status == "proposed"


def test_propose_shows_a_bar_and_cancel_stops_the_model(qtbot, tmp_project, monkeypatch, tmp_path):
    """Propose asks a (slow) model; the bar names what it asks, Cancel stops it and nothing is proposed."""
    import json
    import os
    from pathlib import Path

    from chat_server import ChatServer
    add_boxes(tmp_project, states=2)
    SetPose(tmp_project, "s1", Pose({"crate": [0.7, 1.0, 0, 1, 0, 0, 0], "post": [1, 1, 0, 1, 0, 0, 0]},
                                    {"shoulder": 1.8})).do()
    good = {"summary": "clamp", "changes": [{"kind": "joint", "name": "shoulder", "to": 1.4}]}
    with ChatServer([{"content": json.dumps(good), "stall": 4.0}] * 4) as chat:
        monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", chat.base_url)
        monkeypatch.setenv("KEYPOSE_MODEL_NAME", "scripted")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        w = MainWindow(Session.open(tmp_project.path))
        qtbot.addWidget(w)
        w.resize(1280, 800)
        w.show()
        qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
        repair = w.panels["Repair review"]
        repair.parentWidget().raise_()                 # its tab, as a person clicks it
        qtbot.waitUntil(repair.isVisible, timeout=5000)
        said = []
        repair.message.connect(said.append)
        w.playhead.set_frame(1001)
        qtbot.mouseClick(repair.propose_button, Qt.MouseButton.LeftButton)
        assert repair.running.isVisible() and repair.cancel_button.isEnabled()
        assert not repair.propose_button.isEnabled() and not repair.propose_motion_button.isEnabled()
        qtbot.waitUntil(lambda: "asking about JointLimits shoulder" in repair.doing.text(), timeout=15000)
        shots = Path(os.environ.get("KEYPOSE_SCREENSHOTS") or tmp_path / "shots")
        shots.mkdir(parents=True, exist_ok=True)
        repair.window().grab().save(str(shots / "propose-running.png"))
        qtbot.mouseClick(repair.cancel_button, Qt.MouseButton.LeftButton)
        assert not repair.cancel_button.isEnabled() and "cancelling" in repair.doing.text()
        qtbot.waitUntil(lambda: repair.worker is None, timeout=20000)
        assert len(chat.requests) == 1                 # the second failure was never asked about
    assert not repair.running.isVisible() and repair.propose_button.isEnabled()
    assert said == ["cancelled: the model scripted kept 0 verified proposal(s) for s1"]
    assert list_proposals(tmp_project) == [] and repair.list.count() == 0
