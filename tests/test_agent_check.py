"""`studio agent check`, endpoint profiles and the agent log's tokens and cost, from the CLI."""
from __future__ import annotations

import json
import socket

import pytest

from agent_scenes import make_arm_project
from agent_scripts import MOTION_BRIEF, SCENE_BRIEF, good_plan
from chat_server import ChatServer
from studio.cli import main
from studio.store.project import Project
from studio.store.settings import settings_path

KEY = "sk-check-secret-a1b2c3d4e5"
PROBES = [{"content": "ready"},
          {"tool_calls": [{"name": "report_ready", "arguments": {"ready": True}}]},
          {"content": '{"ready": true}'}]


@pytest.fixture
def endpoint_env(monkeypatch):
    monkeypatch.setenv("KEYPOSE_MODEL_NAME", "scripted")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def point_at(url: str) -> None:
        monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", url)
    return point_at


def test_check_reports_what_the_endpoint_supports_and_remembers_it(endpoint_env, capsys):
    with ChatServer(PROBES) as chat:
        endpoint_env(chat.base_url)
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert f"endpoint default: {chat.base_url}, model scripted" in out
    assert "streaming:          yes (" in out
    assert "tools:              yes (called report_ready)" in out
    assert "structured output:  yes (response_format json_schema accepted)" in out
    saved = json.loads(settings_path().read_text())
    assert saved["endpoints"]["default"] == {"base_url": chat.base_url, "model": "scripted", "capabilities": {
        "streaming": True, "tools": True, "structured_output": True}}
    assert KEY not in settings_path().read_text() and KEY not in out
    probe = chat.requests[1]["body"]
    assert probe["tools"][0]["function"]["name"] == "report_ready" and probe["stream"] is True
    assert chat.requests[2]["body"]["response_format"]["json_schema"]["name"] == "ready"


def test_check_finds_a_small_local_model_without_tools_or_structured_output(endpoint_env, capsys):
    habits = {"tools": "registry.ollama.ai/library/gemma2:2b does not support tools",
              "response_format": "Invalid response_format: json_schema is not supported", "errors": "openai_plain"}
    text_call = {"content": '{"tool_calls": [{"name": "report_ready", "arguments": {"ready": true}}]}'}
    with ChatServer([PROBES[0], text_call, PROBES[2]], habits={"pieces": 1, **habits}) as chat:
        endpoint_env(chat.base_url)
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert ("tools:              no (the server refused tools; they go through the prompt as JSON in text, "
            "and the model used them)") in out
    assert "structured output:  no (response_format refused; plans are asked for in the prompt)" in out
    caps = json.loads(settings_path().read_text())["endpoints"]["default"]["capabilities"]
    assert caps == {"streaming": True, "tools": False, "structured_output": False}


def test_check_against_a_closed_port_names_the_address(endpoint_env, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint_env(f"http://127.0.0.1:{port}/v1")
    assert main(["agent", "check"]) == 3
    err = capsys.readouterr().err
    assert f"cannot reach the model at http://127.0.0.1:{port}/v1" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_check_of_an_unknown_profile_is_bad_input(endpoint_env, capsys):
    settings_path().write_text(json.dumps({"endpoints": {"local": {"base_url": "http://127.0.0.1:1/v1",
                                                                   "model": "m"}}}))
    assert main(["agent", "check", "--endpoint", "remote"]) == 2
    assert "no endpoint profile 'remote' (profiles: local)" in capsys.readouterr().err


def test_tokens_and_cost_per_step_in_the_agent_log(tmp_path, monkeypatch, capsys):
    arm = tmp_path / "arm"
    with Project.create(arm) as p:
        make_arm_project(p)
    plan = good_plan("the arm lifts the panel")
    plan["objects"], plan["events"] = [{"name": "panel", "description": "a panel"}], []
    script = [{"content": SCENE_BRIEF}, {"content": MOTION_BRIEF}, {"content": json.dumps(plan)},
              {"tool_calls": [{"name": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide"}}]},
              {"content": "ready"}]
    monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
    monkeypatch.setenv("STUDIO_PAID_KEY", KEY)
    with ChatServer(script) as chat:
        settings_path().write_text(json.dumps({"endpoint": "paid", "endpoints": {"paid": {
            "base_url": chat.base_url, "model": "priced-model", "api_key_env": "STUDIO_PAID_KEY",
            "prices": {"input_per_million": 2.0, "output_per_million": 8.0}}}}))
        assert main(["agent", "plan", str(arm), "--prompt", "the arm lifts the panel", "--build"]) == 0
    capsys.readouterr()
    assert main(["agent", "log", str(arm), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    usage = [r["body"] for r in chat.requests]
    # the server's usage: prompt = characters of the messages // 4, completion = characters // 4 (+8 per call)
    prompt = [sum(len(str(m.get("content") or "")) for m in b["messages"]) // 4 for b in usage]
    completion = [len(SCENE_BRIEF) // 4, len(MOTION_BRIEF) // 4, len(json.dumps(plan)) // 4, 8]
    assert steps[0]["detail"]["tokens_in"] == sum(prompt[:3])
    assert steps[0]["detail"]["tokens_out"] == sum(completion[:3])
    assert steps[0]["detail"]["cost"] == pytest.approx((sum(prompt[:3]) * 2 + sum(completion[:3]) * 8) / 1e6, abs=1e-6)
    assert steps[1]["detail"]["cost"] == pytest.approx((prompt[3] * 2 + completion[3] * 8) / 1e6, abs=1e-6)
    assert main(["agent", "log", str(arm)]) == 0
    table = capsys.readouterr().out
    assert "cost" in table.splitlines()[0] and f"{steps[0]['detail']['cost']:.4f}" in table
    assert KEY not in settings_path().read_text() + table
