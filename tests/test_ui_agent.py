"""The agent driven from the window: a prompt in the Plan dock, Plan and Build
as jobs talking to the loopback chat server through the real OpenAI SDK, the
plan shown (and editable) before Build, the agent log growing with tokens, and
a clear word when no model is configured."""
from __future__ import annotations

import json
import re

import pytest
from PySide6.QtCore import Qt

import calls_scenes
from agent_scripts import plan_replies
from chat_server import ChatServer
from studio.agent.steps import list_steps
from studio.timeline.plan import load_plan
from studio.timeline.storyboard import list_states

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_project, monkeypatch):
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    return w


def agent_plan() -> dict:
    """The small film's plan as a model would write it: every segment names its tool."""
    plan = calls_scenes.plan()
    plan["motion"] = [{"segment": "start..slid", "tool": "interpolate"},
                      {"segment": "slid..rest", "tool": "hold", "params": {}}]
    return plan


def finished(w, qtbot, timeout=60000):
    from studio.ui.agent_jobs import latest_agent_job
    qtbot.waitUntil(lambda: latest_agent_job(w.session.project).state not in ("queued", "running"), timeout=timeout)
    w.session.poll()
    w.session.refresh()
    return latest_agent_job(w.session.project)


def test_plan_then_build_from_the_window_against_a_loopback_model(window, qtbot, monkeypatch, tmp_path):
    build = [{"tool_calls": [{"name": c["tool"], "arguments": c["arguments"]}
                             for c in calls_scenes.calls()[:9] if c["tool"] != "set_plan"]},
             {"content": "The scene and its three key states are authored."}]
    with ChatServer(plan_replies(agent_plan()) + build) as chat:
        monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", chat.base_url)
        monkeypatch.setenv("KEYPOSE_MODEL_NAME", "scripted")
        dock = window.panels["Plan"]
        assert not dock.build_button.isEnabled()                # nothing to build before a plan
        dock.prompt.setPlainText("a crate slides across the floor and stops")
        qtbot.mouseClick(dock.plan_button, Qt.MouseButton.LeftButton)
        job = finished(window, qtbot)
        assert job.state == "succeeded", job.error
        plan = load_plan(window.session.project)
        assert [s["id"] for s in plan["states"]] == ["start", "slid", "rest"]
        qtbot.waitUntil(lambda: dock.build_button.isEnabled(), timeout=5000)
        assert "slid" in dock.text.toPlainText() and "Plan done" in dock.agent_status.text()
        window.grab().save(str(tmp_path / "planned.png"))
        qtbot.mouseClick(dock.build_button, Qt.MouseButton.LeftButton)
        job = finished(window, qtbot)
        assert job.state == "succeeded", job.error
        assert [s.id for s in list_states(window.session.project)] == ["start", "slid", "rest"]
        steps = list_steps(window.session.project)
        assert steps[0]["action"] == "plan" and steps[0]["tokens"] > 0
        assert [s["action"] for s in steps[1:]][:2] == ["tool create_body", "tool create_body"]
        qtbot.waitUntil(lambda: dock.steps.topLevelItemCount() == len(steps), timeout=5000)
        assert json.loads((window.session.project.path / "jobs" / str(job.id) / "out" / "agent.json")
                          .read_text())["turns"] == 2
        log = (window.session.project.path / "jobs" / str(job.id) / "log.txt").read_text()
        assert "sk-" not in log and '"stage": "step"' in log
        window.grab().save(str(tmp_path / "built.png"))


def test_without_a_model_the_dock_says_where_to_set_one(window, qtbot):
    dock = window.panels["Plan"]
    dock.prompt.setPlainText("a marble rolls down three ramps")
    qtbot.mouseClick(dock.plan_button, Qt.MouseButton.LeftButton)
    assert "No model is configured" in dock.agent_status.text()
    assert "File › Settings" in dock.agent_status.text()
    from studio.jobs import queue
    assert queue.list_jobs(window.session.project) == []       # nothing queued


def test_an_edited_plan_is_checked_and_a_bad_one_is_not_stored(window, qtbot):
    from studio.tools.box import ToolBox
    from studio.ui.qt_plan import QtPlanEditor
    box = ToolBox(window.session.project, actor="person")
    for c in calls_scenes.calls()[:6]:                         # the bodies, the camera, then the plan
        box.call(c["tool"], c["arguments"])
    dock = window.panels["Plan"]
    editor = QtPlanEditor(load_plan(window.session.project), dock._save_plan, dock)
    qtbot.addWidget(editor)
    plan = json.loads(editor.edit.toPlainText())
    plan["states"][1]["frame"] = 2000                          # outside its shot
    editor.edit.setPlainText(json.dumps(plan))
    editor.save()
    assert "2000" in editor.error.text() and editor.result() == 0
    assert load_plan(window.session.project)["states"][1]["frame"] == 1013
    plan["states"][1]["frame"] = 1015
    plan["motion"][0] = {"segment": "start..slid", "tool": "hold", "params": {"blend": 6}}
    editor.edit.setPlainText(json.dumps(plan))
    editor.save()
    stored = load_plan(window.session.project)
    assert stored["states"][1]["frame"] == 1015 and stored["motion"][0]["params"] == {"blend": 6}
    assert window.undo_action.text().startswith("Undo")


def test_the_agent_panel_shows_the_model_streaming_and_the_failed_attempt_in_the_log(window, qtbot, tmp_path, shots):
    from studio.store.settings import settings_path
    with ChatServer([{"hang": 0.2}]) as chat:           # a brief that streams and never finishes
        settings_path().write_text(json.dumps({"endpoint": "local", "endpoints": {"local": {
            "base_url": chat.base_url, "model": "scripted", "deadline": 8}}}))
        dock = window.panels["Plan"]
        dock.prompt.setPlainText("a crate slides across the floor and stops")
        qtbot.mouseClick(dock.plan_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "brief reply: " in dock.agent_status.text(), timeout=20000)
        words = dock.agent_status.text()
        assert words.startswith("Planning (job ") and re.search(r"brief reply: \d+ tokens?, \d+ s", words)
        window.grab().save(str(shots / "agent-streaming.png"))
        job = finished(window, qtbot)
    assert job.state == "failed" and "8 s deadline" in job.error
    qtbot.waitUntil(lambda: dock.steps.topLevelItemCount() == 1, timeout=5000)
    item = dock.steps.topLevelItem(0)
    assert item.text(1) == "plan (failed)" and int(item.text(2)) > 0
    assert "deadline" in dock.agent_status.text()
