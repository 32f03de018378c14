"""The plan dock shows the plan and the agent's steps, and reverts the project to a step."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from studio.agent.steps import list_steps, record_step, save_snapshot
from studio.scene.pose import Pose
from studio.timeline.commands import SetPose
from studio.timeline.storyboard import get_state
from studio.ui.main_window import MainWindow
from studio.ui.session import Session
from ui_scenes import add_boxes

pytestmark = pytest.mark.gui


def crate_at(x: float) -> Pose:
    return Pose({"crate": [x, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]}, {})


def test_plan_text_and_revert_to_an_agent_step(qtbot, tmp_project):
    add_boxes(tmp_project, states=2)
    tmp_project.put_doc("plan", {"prompt": "slide the crate past the arm", "scene_brief": "a floor and a post",
                                 "motion_brief": "the crate slides", "shots": [{"id": "wide", "start": 1001,
                                 "end": 1025, "camera": "wide"}], "states": [], "events": []})
    before = save_snapshot(tmp_project)
    SetPose(tmp_project, "s1", crate_at(-0.2), actor="agent").do()
    record_step(tmp_project, "pose s1", {"state": "s1", "cost": 0.0123}, tokens=120, seconds=1.5, before=before)
    SetPose(tmp_project, "s1", crate_at(0.9), actor="agent").do()
    record_step(tmp_project, "pose s1 again", {"state": "s1"}, tokens=80, seconds=0.5)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.show()
    plan = w.panels["Plan"]
    assert "slide the crate past the arm" in plan.text.toPlainText()
    assert "wide 1001–1025 camera wide" in plan.text.toPlainText()
    assert [plan.steps.topLevelItem(i).text(1) for i in range(plan.steps.topLevelItemCount())] == \
        ["pose s1", "pose s1 again"]
    assert [plan.steps.topLevelItem(i).text(3) for i in range(2)] == ["0.0123", ""]   # cost, when prices are set
    plan.steps.setCurrentItem(plan.steps.topLevelItem(0))
    qtbot.mouseClick(plan.revert_button, Qt.MouseButton.LeftButton)
    assert get_state(tmp_project, "s1").pose.roots["crate"][0] == pytest.approx(-0.2)
    assert list_steps(tmp_project)[-1]["action"] == "revert to step 1"
    qtbot.waitUntil(lambda: plan.steps.topLevelItemCount() == 3, timeout=5000)
    qtbot.waitUntil(lambda: w.panels["Pose"].roots["crate"][0].value() == pytest.approx(-0.2), timeout=5000)
