"""`studio agent check`, endpoint profiles and the agent log's tokens and cost, from the CLI."""
from __future__ import annotations

import json
import socket

import pytest

from agent_scenes import make_arm_project
from agent_scripts import MOTION_BRIEF, SCENE_BRIEF, good_plan
from chat_server import HABITS, ChatServer
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


def profile(url: str, name: str = "local", **more) -> None:
    """A named endpoint profile in the test's own settings file, in use."""
    settings_path().write_text(json.dumps({"endpoint": name, "endpoints": {name: {
        "base_url": url, "model": "scripted", "api_key_env": "STUDIO_CHECK_KEY", **more}}}))


@pytest.fixture
def profile_env(monkeypatch):
    monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
    monkeypatch.delenv("KEYPOSE_MODEL_NAME", raising=False)
    monkeypatch.setenv("STUDIO_CHECK_KEY", KEY)
    return profile


def test_check_reports_what_a_named_profile_supports_and_remembers_it_there(profile_env, capsys):
    with ChatServer(PROBES) as chat:
        profile_env(chat.base_url)
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert f"endpoint local: {chat.base_url}, model scripted" in out
    assert "model: listed (/v1/models lists scripted)" in out
    assert "streaming: yes (" in out
    assert "tools: yes (called report_ready)" in out
    assert "structured output: yes (response_format json_schema accepted)" in out
    assert f"remembered in {settings_path()} (profile local)" in out
    saved = json.loads(settings_path().read_text())
    assert saved["endpoints"]["local"]["capabilities"] == {"streaming": True, "tools": True, "structured_output": True}
    assert list(saved["endpoints"]) == ["local"]
    assert KEY not in settings_path().read_text() and KEY not in out
    probe = chat.requests[1]["body"]
    assert probe["tools"][0]["function"]["name"] == "report_ready" and probe["stream"] is True
    assert chat.requests[2]["body"]["response_format"]["json_schema"]["name"] == "ready"
    assert [r["body"]["max_tokens"] for r in chat.requests] == [64, 64, 64]     # every probe is bounded


def test_an_environment_override_is_checked_but_never_written(endpoint_env, capsys, tmp_path):
    with ChatServer(PROBES + PROBES) as chat:
        endpoint_env(chat.base_url)                      # the flat settings, from the environment
        assert main(["agent", "check"]) == 0
        assert "not remembered: KEYPOSE_MODEL_BASE_URL, KEYPOSE_MODEL_NAME sets the endpoint" in capsys.readouterr().out
        assert not settings_path().exists()
        profile(f"http://127.0.0.1:9/v1")                # a profile, overridden by the environment
        before = settings_path().read_text()
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert "not remembered: KEYPOSE_MODEL_BASE_URL overrides the settings; the profile 'local' is left as it is" in out
    assert settings_path().read_text() == before


def test_a_model_that_answers_in_text_is_accepted_but_not_called(profile_env, capsys):
    probes = [PROBES[0], {"content": "Yes, the tools are reaching me."}, PROBES[2]]
    with ChatServer(probes) as chat:
        profile_env(chat.base_url)
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert "tools: accepted but not called (the server took the tools; the model answered in text: " \
           "'Yes, the tools are reaching me.')" in out
    assert "tools: yes" not in out


@pytest.mark.parametrize("server_cut", [True, False], ids=["cut-by-max_tokens", "cut-by-the-server-limit"])
def test_a_probe_answered_with_500_tokens_still_reports_the_capabilities(profile_env, capsys, server_cut):
    rambling = {"content": "ready " + "and so on, " * 182}            # 500 tokens of text (4 characters each)
    assert len(rambling["content"]) // 4 >= 500
    first = rambling if server_cut else {**rambling, "finish": "length", "habits": {"max_tokens": "ignore"}}
    with ChatServer([first, PROBES[1], PROBES[2]]) as chat:
        profile_env(chat.base_url)
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert "streaming: yes (" in out and "(cut off at the probe's token limit)" in out
    assert "tools: yes (called report_ready)" in out and "structured output: yes" in out
    assert len(chat.requests) == 3                    # no continuation was asked for


def test_a_model_name_the_server_does_not_list_is_said_and_fails(profile_env, capsys):
    with ChatServer(PROBES, habits={"models": ["gemma-3-270m-q4_k_m.gguf"]}) as chat:
        profile_env(chat.base_url)
        assert main(["agent", "check"]) == 1
    out = capsys.readouterr().out
    assert "model: NOT listed ('scripted' is not among the models the server lists (gemma-3-270m-q4_k_m.gguf)" in out
    assert "streaming: yes (" in out                                    # the probes still ran
    assert "problem: the model name 'scripted' is not one the server lists" in out


def test_check_finds_a_small_local_model_without_tools_or_structured_output(profile_env, capsys):
    habits = {"tools": "registry.ollama.ai/library/gemma2:2b does not support tools",
              "response_format": "Invalid response_format: json_schema is not supported", "errors": "openai_plain"}
    text_call = {"content": '{"tool_calls": [{"name": "report_ready", "arguments": {"ready": true}}]}'}
    with ChatServer([PROBES[0], text_call, PROBES[2]], habits={"pieces": 1, **habits}) as chat:
        profile_env(chat.base_url)
        assert main(["agent", "check"]) == 0
    out = capsys.readouterr().out
    assert ("tools: no (the server refused tools; they go through the prompt as JSON in text, "
            "and the model used them)") in out
    assert "structured output: no (response_format refused; plans are asked for in the prompt)" in out
    caps = json.loads(settings_path().read_text())["endpoints"]["local"]["capabilities"]
    assert caps == {"streaming": True, "tools": False, "structured_output": False}


def test_check_says_the_context_each_server_gives(profile_env, capsys):
    for habits, source in (("llamacpp", "llama.cpp's /props (n_ctx)"), ("vllm", "max_model_len"),
                           ("ollama", "Ollama's /api/show (num_ctx)")):
        with ChatServer(PROBES, habits={**HABITS[habits], "context": 4096}) as chat:
            profile_env(chat.base_url)
            assert main(["agent", "check"]) == 0
        out = capsys.readouterr().out
        assert "context: 4096 tokens (" in out and source in out, out


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
