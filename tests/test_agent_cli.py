"""`studio agent plan|repair|log|revert` end to end, and the API key never lands anywhere."""
from __future__ import annotations

import json

import pytest

from agent_scenes import make_arm_project
from agent_scripts import db_dump, good_plan, plan_replies
from chat_server import ChatServer
from studio.cli import main
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.storyboard import State, get_state, put_state

KEY = "sk-cli-secret-9f8e7d6c5b4a"


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm"
    with Project.create(path) as p:
        make_arm_project(p)
    return path


def arm_plan():
    plan = good_plan("the arm lifts the panel")
    plan["objects"], plan["events"] = [{"name": "panel", "description": "a panel"}], []
    return plan


def test_plan_and_build_from_the_cli_keep_the_key_out_of_the_project(arm, monkeypatch, capsys):
    script = [*plan_replies(arm_plan()),
              {"tool_calls": [{"name": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide",
                                                                  "description": f"rest; key {KEY[:6]}"}}]},
              {"content": "ready"}]
    with ChatServer(script) as chat:
        monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", chat.base_url)
        monkeypatch.setenv("KEYPOSE_MODEL_NAME", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        assert main(["agent", "plan", str(arm), "--prompt", "the arm lifts the panel", "--build"]) == 0
    out = capsys.readouterr()
    assert "plan stored as step 1" in out.out and "state lift" in out.out and "set_state: set state start" in out.out
    # the key went to the server, and nowhere else
    auth = {k.lower(): v for k, v in chat.requests[0]["headers"].items()}["authorization"]
    assert auth == f"Bearer {KEY}"
    assert KEY not in out.out + out.err
    files = [f for f in arm.rglob("*") if f.is_file()]
    assert any(f.name == "studio.db" for f in files)
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    assert main(["agent", "log", str(arm), "--json"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert [s["action"] for s in log["steps"]] == ["plan", "tool set_state"]
    assert KEY not in json.dumps(log)
    assert main(["agent", "revert", str(arm), "1"]) == 0          # back to just after the plan
    assert "reverted to step 1; recorded as step 3" in capsys.readouterr().out
    with Project.open(arm) as p:
        assert get_state(p, "start") is None and p.get_doc("plan")["states"][1]["id"] == "lift"


def test_plan_without_a_model_is_an_environment_error(arm, monkeypatch, capsys):
    monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
    with Project.open(arm) as p:
        before = db_dump(p)
    assert main(["agent", "plan", str(arm), "--prompt", "anything"]) == 3
    assert "no model is configured" in capsys.readouterr().err
    with Project.open(arm) as p:
        assert db_dump(p) == before


def test_offline_repair_reject_apply_log_and_revert_from_the_cli(arm, monkeypatch, capsys):
    monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
    with Project.open(arm) as p:
        from studio.scene.io import load_scene
        scene = load_scene(p)
        pose = Pose.rest(scene)
        pose.roots["panel"] = [-0.3, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]     # 0.1 m into the wall
        pose.joints["elbow"] = 2.9                                      # past its 2.4 limit
        put_state(p, scene, State("hold", 1001, pose, "", "broken"))
    assert main(["agent", "repair", str(arm)]) == 0
    out = capsys.readouterr().out
    assert "no model configured: using the offline repairer" in out
    assert "#1 [proposed] state:hold" in out and "#2 [proposed] state:hold" in out
    with Project.open(arm) as p:
        from studio.repair.proposals import list_proposals
        props = {pr.check_name: pr.id for pr in list_proposals(p)}
        before = db_dump(p, skip=("audit", "repairs"))
    assert main(["agent", "repair", str(arm), "--reject", str(props["JointLimits"]),
                 "--note", "bend the shoulder instead"]) == 0
    assert main(["agent", "repair", str(arm), "--apply", str(props["NoPenetration"])]) == 0
    assert main(["agent", "repair", str(arm), "--apply", str(props["JointLimits"])]) == 1
    err = capsys.readouterr().err
    assert "is rejected; only a proposed repair can be approved" in err
    with Project.open(arm) as p:
        hold = get_state(p, "hold")
        assert hold.pose.joints["elbow"] == 2.9 and hold.pose.roots["panel"][0] < -0.4
        assert db_dump(p, skip=("audit", "repairs"))["states"] != before["states"]
    assert main(["agent", "repair", str(arm), "--list"]) == 0
    listing = capsys.readouterr().out
    assert "[rejected]" in listing and "note: bend the shoulder instead" in listing and "[approved]" in listing
    assert main(["agent", "log", str(arm)]) == 0
    log = capsys.readouterr().out
    assert "repairs" in log and f"#{props['NoPenetration']} [approved] state:hold NoPenetration (offline, verified)" in log
    assert main(["agent", "revert", str(arm), "5"]) == 2
    assert "no agent step 5" in capsys.readouterr().err


def test_the_model_comes_from_the_settings_file_and_the_key_from_the_named_variable(tmp_path, monkeypatch):
    from studio.agent.client import ModelClient
    settings = tmp_path / "settings.json"
    with ChatServer([{"content": "hello"}]) as chat:
        settings.write_text(json.dumps({"model_base_url": chat.base_url, "model_name": "local-llm",
                                        "api_key_env": "STUDIO_TEST_MODEL_KEY", "model_timeout": 7}))
        monkeypatch.setenv("KEYPOSE_SETTINGS", str(settings))
        monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
        monkeypatch.delenv("KEYPOSE_MODEL_NAME", raising=False)
        monkeypatch.setenv("STUDIO_TEST_MODEL_KEY", KEY)
        client = ModelClient.from_settings(max_retries=0)
        assert (client.model, client.timeout) == ("local-llm", 7.0)
        assert client.chat([{"role": "user", "content": "hi"}]).content == "hello"
    request = chat.requests[0]
    assert request["body"]["model"] == "local-llm"
    assert {k.lower(): v for k, v in request["headers"].items()}["authorization"] == f"Bearer {KEY}"
    assert KEY not in settings.read_text()


def test_repair_from_the_cli_asks_the_configured_model(arm, monkeypatch, capsys):
    with Project.open(arm) as p:
        from studio.scene.io import load_scene
        scene = load_scene(p)
        pose = Pose.rest(scene)
        pose.joints["elbow"] = 2.9
        put_state(p, scene, State("hold", 1001, pose, "", "broken"))
    fix = {"content": json.dumps({"summary": "clamp the elbow",
                                  "changes": [{"kind": "joint", "name": "elbow", "to": 2.4}]})}
    with ChatServer([fix]) as chat:
        monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", chat.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        assert main(["agent", "repair", str(arm), "--state", "hold"]) == 0
    out = capsys.readouterr().out
    assert "#1 [proposed] state:hold JointLimits (model, verified): clamp the elbow" in out
    assert "joint elbow: 2.9000 -> 2.4000" in out and KEY not in out
