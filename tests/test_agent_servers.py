"""The agent against the habits of real servers (OpenAI, Ollama, vLLM, llama.cpp),
one habit per test, each through the real OpenAI SDK over loopback HTTP: the
planner stores a plan, then a build's tool calls store the key states."""
from __future__ import annotations

import json

import pytest

from agent_scenes import make_arm_project
from agent_scripts import LOG, MOTION_BRIEF, SCENE_BRIEF, db_dump, good_plan
from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.agent.loop import run_tools
from studio.agent.planner import make_plan
from studio.agent.steps import list_steps
from studio.store.endpoints import active_endpoint
from studio.store.settings import load_settings, settings_path
from studio.timeline.storyboard import get_state

KEY = "sk-servers-secret-4b3c2d1e"
CHAT_STYLE = ("Sure! Here is the plan for your film.\n\n```json\n{plan}\n```\n\n"
              "Let me know if you want changes.")


def arm_plan() -> dict:
    plan = good_plan("the arm lifts the panel")
    plan["objects"], plan["events"] = [{"name": "panel", "description": "a panel"}], []
    return plan


BUILD_CALLS = [
    {"name": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide", "description": "at rest"}},
    {"name": "set_state", "arguments": {"state": "lift", "frame": 1048, "shot": "wide",
                                        "description": "the panel is lifted", "joints": {"shoulder": -0.3}}},
]


def script(plan_reply: dict | None = None, build: dict | None = None) -> list[dict]:
    return [{"content": SCENE_BRIEF}, {"content": MOTION_BRIEF},
            plan_reply or {"content": json.dumps(arm_plan())},
            build or {"tool_calls": BUILD_CALLS}, {"content": "Both key states are ready for review."}]


@pytest.fixture
def arm(tmp_project):
    make_arm_project(tmp_project)
    return tmp_project


def client_for(chat, **kw) -> ModelClient:
    return ModelClient(chat.base_url, "scripted", KEY, timeout=kw.pop("timeout", 5.0),
                       max_retries=kw.pop("max_retries", 0), **kw)


def plan_and_build(project, client):
    result = make_plan(project, client, "the arm lifts the panel")
    loop = run_tools(project, client, "Build the scene this plan needs and author its key states.")
    return result, loop


def assert_built(project, loop, calls: int = 2):
    """The plan is stored, each tool call ran as its own command and step, and the model was answered."""
    assert [s["id"] for s in project.get_doc("plan")["states"]] == ["start", "lift"]
    assert get_state(project, "start").description == "at rest"
    assert get_state(project, "lift").pose.joints["shoulder"] == pytest.approx(-0.3)
    assert loop.refused == [] and loop.final_text == "Both key states are ready for review."
    assert [s["action"] for s in list_steps(project)] == ["plan"] + ["tool set_state"] * calls


def tool_exchange(chat) -> tuple[list[str], list[str]]:
    """The ids of the calls the studio sent back as the assistant's, and the ids its tool results answer."""
    last = chat.requests[-1]["body"]["messages"]
    asked = [c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    return asked, answered


@pytest.mark.parametrize("server", ["openai", "ollama", "vllm", "llamacpp"])
def test_each_server_plans_and_builds(arm, server):
    with ChatServer(script(), habits=server) as chat:
        result, loop = plan_and_build(arm, client_for(chat))
    assert result.attempts == 1
    assert_built(arm, loop)
    asked, answered = tool_exchange(chat)
    assert asked == answered and len(set(asked)) == 2


def test_the_chat_style_reply_is_accepted_on_the_first_attempt(arm):
    reply = {"content": CHAT_STYLE.format(plan=json.dumps(arm_plan(), indent=2))}
    with ChatServer(script(reply)) as chat:
        result, loop = plan_and_build(arm, client_for(chat))
    assert result.attempts == 1 and list_steps(arm)[0]["detail"]["refused"] == []
    assert_built(arm, loop)


def test_the_plan_is_asked_for_with_its_schema_as_structured_output(arm):
    with ChatServer(script()) as chat:
        plan_and_build(arm, client_for(chat))
    plan_request = chat.requests[2]["body"]
    fmt = plan_request["response_format"]
    # the plan's own schema (the one set_plan checks): its free objects (a tool's params) make it non-strict
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "plan" and not fmt["json_schema"]["strict"]
    motion = fmt["json_schema"]["schema"]["properties"]["motion"]["items"]["properties"]
    assert "params" in motion and "carry" in motion["tool"]["enum"]
    assert fmt["json_schema"]["schema"]["required"] == ["prompt", "scene_brief", "motion_brief", "shots",
                                                         "states", "objects", "events", "motion"]
    assert "response_format" not in chat.requests[0]["body"]      # a brief is prose
    assert [t["function"]["name"] for t in chat.requests[3]["body"]["tools"]][:1] == ["create_body"]


def test_strict_output_nulls_in_event_params_mean_not_given(arm):
    plan = arm_plan()
    plan["events"] = [{"id": "grasp_panel", "kind": "grasp", "subjects": ["panel"], "window": [1020, 1040],
                       "params": {"tolerance": 0.05, "point": None, "normal": None, "min": None, "max": None},
                       "after": []}]
    with ChatServer(script({"content": json.dumps(plan)})) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert arm.get_doc("plan")["events"][0]["params"] == {"tolerance": 0.05}
    assert_built(arm, loop)


@pytest.mark.parametrize("habits", [
    {"ids": "missing"}, {"ids": "same"}, {"ids": "every_piece"}, {"index": False}, {"args": "double"},
    {"name_every_piece": True}, {"empty_choices": True}, {"done": False}, {"usage": "none"},
    {"role_chunk": False}, {"pieces": 12},
    {"index": False, "name_every_piece": True}, {"index": False, "ids": "same"}, {"index": False, "ids": "missing"},
], ids=lambda h: "+".join(f"{k}={v}" for k, v in h.items()))
def test_one_stream_habit(arm, habits):
    with ChatServer(script(), habits=habits) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert_built(arm, loop)
    asked, answered = tool_exchange(chat)
    assert asked == answered and len(set(asked)) == 2 and all(asked)
    steps = list_steps(arm)   # tokens estimated when the server sends no usage; a reply's tokens go to its first step
    assert steps[0]["tokens"] > 0 and steps[1]["tokens"] > 0 and steps[2]["tokens"] == 0


def test_arguments_as_an_object_whole_in_one_chunk(arm):
    with ChatServer(script(), habits={"pieces": 1, "args": "object", "calls_in_one_chunk": True}) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert_built(arm, loop)


def test_reasoning_beside_the_content_stays_out_of_the_plan(arm):
    reply = {"reasoning": "The user wants a lift; {not json} I should plan two states.",
             "content": json.dumps(arm_plan())}
    with ChatServer(script(reply), habits="vllm") as chat:
        result, loop = plan_and_build(arm, client_for(chat))
    assert result.attempts == 1
    assert_built(arm, loop)


def test_content_and_tool_calls_together(arm):
    build = {"content": "I will create both states now.", "tool_calls": BUILD_CALLS}
    with ChatServer(script(build=build)) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert_built(arm, loop)
    assistant = [m for m in chat.requests[-1]["body"]["messages"] if m["role"] == "assistant"][0]
    assert assistant["content"] == "I will create both states now." and len(assistant["tool_calls"]) == 2


def test_repeated_ids_across_replies_stay_unique_in_the_conversation(arm):
    first = {"tool_calls": [{**BUILD_CALLS[0], "id": "call_0"}]}
    second = {"tool_calls": [{**BUILD_CALLS[1], "id": "call_0"}]}
    with ChatServer([*script()[:3], first, second, script()[-1]]) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert_built(arm, loop)
    asked, answered = tool_exchange(chat)
    assert asked == answered == ["call_0", "call_0_2"]


def test_structured_output_refused_is_found_once_and_remembered(arm, monkeypatch):
    refusal = "response_format json_schema is not supported by this server"
    with ChatServer([*script(), *script()[:3]], habits={"response_format": refusal}) as chat:
        monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
        settings_path().write_text(json.dumps({"endpoint": "local", "endpoints": {"local": {
            "base_url": chat.base_url, "model": "local-llm"}}}))
        client = ModelClient.from_settings(max_retries=0)
        _, loop = plan_and_build(arm, client)
        assert_built(arm, loop)
        assert [("response_format" in r["body"]) for r in chat.requests[:4]] == [False, False, True, False]
        remembered = active_endpoint(load_settings()).capabilities
        assert remembered == {"streaming": True, "structured_output": False, "tools": True}
        # a new client for the same endpoint does not ask again
        again = ModelClient.from_settings(max_retries=0)
        assert again.capabilities["structured_output"] is False
        n = len(chat.requests)
        make_plan(arm, again, "the arm lifts the panel")
        assert all("response_format" not in r["body"] for r in chat.requests[n:])
    assert KEY not in settings_path().read_text()


def test_a_person_can_override_what_was_found(arm, monkeypatch):
    with ChatServer(script()) as chat:
        settings_path().write_text(json.dumps({"endpoint": "mine", "endpoints": {"mine": {
            "base_url": chat.base_url, "model": "m", "api_key_env": "STUDIO_KEY",
            "capabilities": {"structured_output": False}}}}))
        monkeypatch.setenv("STUDIO_KEY", KEY)
        client = ModelClient.from_settings(max_retries=0)
        _, loop = plan_and_build(arm, client)
    assert_built(arm, loop)
    assert all("response_format" not in r["body"] for r in chat.requests)
    auth = {k.lower(): v for k, v in chat.requests[0]["headers"].items()}["authorization"]
    assert auth == f"Bearer {KEY}"
    saved = json.loads(settings_path().read_text())["endpoints"]["mine"]["capabilities"]
    assert saved == {"structured_output": False, "streaming": True, "tools": True}


@pytest.mark.parametrize("refusal", [
    "registry.ollama.ai/library/gemma2:2b does not support tools",                                   # Ollama
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',        # vLLM
    "tools param requires --jinja flag",                                                             # llama.cpp
])
def test_a_model_without_tool_calling_gets_the_tools_as_json_in_text(arm, refusal):
    text_calls = {"content": "```json\n" + json.dumps({"tool_calls": BUILD_CALLS}) + "\n```"}
    status: list[str] = []
    with ChatServer(script(build=text_calls), habits={**{"tools": refusal}, "errors": "openai_plain"}) as chat:
        client = client_for(chat, on_status=status.append)
        _, loop = plan_and_build(arm, client)
    assert_built(arm, loop)
    assert client.capabilities["tools"] is False
    assert any("has no tool calling" in s for s in status)
    build_requests = [r["body"] for r in chat.requests[3:]]
    assert "tools" in build_requests[0] and all("tools" not in b for b in build_requests[1:])
    system = build_requests[1]["messages"][0]["content"]
    assert '{"tool_calls": [{"name": "<tool name>"' in system and "set_joint:" in system
    last = build_requests[-1]["messages"]
    assert all(m["role"] != "tool" for m in last)
    results = [m["content"] for m in last if m["role"] == "user" and m["content"].startswith("Tool result")]
    assert len(results) == 2 and json.loads(results[0].split(": ", 1)[1])["ok"] is True


def test_rate_limit_and_busy_are_waited_for_with_a_countdown(arm):
    status: list[str] = []
    limited = {"status": 429, "headers": {"Retry-After": "1"}}
    busy = {"status": 503, "headers": {"Retry-After": "1"}}
    s = script()
    with ChatServer([s[0], limited, s[1], s[2], busy, *s[3:]]) as chat:
        _, loop = plan_and_build(arm, client_for(chat, max_retries=2, on_status=status.append))
    assert_built(arm, loop)
    assert any("rate limited (HTTP 429); retrying in 1 s" in m for m in status)
    assert any("busy (HTTP 503); retrying in 1 s" in m for m in status)


def test_a_wait_longer_than_the_cap_is_refused_and_nothing_is_stored(arm):
    with ChatServer([{"status": 429, "headers": {"Retry-After": "3600"}}]) as chat:
        before = db_dump(arm, skip=LOG)
        with pytest.raises(AgentError, match=r"asks to wait 3600 s, more than the 30 s the studio waits"):
            make_plan(arm, client_for(chat, max_retries=2, max_wait=30), "the arm lifts the panel")
    assert db_dump(arm, skip=LOG) == before


@pytest.mark.parametrize("server", ["openai", "vllm", "llamacpp"])
def test_a_context_length_error_shrinks_the_conversation_once(arm, server):
    s = script()
    build = [{"tool_calls": [BUILD_CALLS[0]]}, {"tool_calls": [BUILD_CALLS[1]]}, {"error": "context"}, s[-1]]
    status: list[str] = []
    with ChatServer([*s[:3], *build], habits=server) as chat:
        _, loop = plan_and_build(arm, client_for(chat, on_status=status.append))
    assert_built(arm, loop)
    assert any("older tool results summarised" in m for m in status)
    full, shrunk = chat.requests[-2]["body"]["messages"], chat.requests[-1]["body"]["messages"]
    assert len(full) == len(shrunk)
    tool_full = [m["content"] for m in full if m["role"] == "tool"]
    tool_shrunk = [m["content"] for m in shrunk if m["role"] == "tool"]
    assert json.loads(tool_shrunk[0]) == {"ok": True, "done": json.loads(tool_full[0])["done"], "summarised": True}
    assert tool_shrunk[1] == tool_full[1]     # the latest result is kept whole


def test_a_context_length_error_twice_is_a_clear_refusal(arm):
    s = script()
    with ChatServer([*s[:3], {"tool_calls": [BUILD_CALLS[0]]}, {"tool_calls": [BUILD_CALLS[1]]},
                     {"error": "context"}, {"error": "context"}], habits="vllm") as chat:
        with pytest.raises(AgentError, match=r"longer than the context of scripted at http://127\.0\.0\.1:\d+/v1, "
                                             r"even with older tool results summarised \(HTTP 400\): This model's"):
            plan_and_build(arm, client_for(chat))
    assert [s["action"] for s in list_steps(arm)] == ["plan", "tool set_state", "tool set_state", "build (failed)"]
    assert "longer than the context" in list_steps(arm)[-1]["detail"]["failed"]


def test_a_plan_cut_by_the_token_limit_is_continued_not_restarted(arm):
    text = CHAT_STYLE.format(plan=json.dumps(arm_plan()))
    half = len(text) // 2
    s = script()
    with ChatServer([*s[:2], {"content": text[:half], "finish": "length"}, {"content": text[half:]},
                     *s[3:]]) as chat:
        result, loop = plan_and_build(arm, client_for(chat))
    assert result.attempts == 1
    assert_built(arm, loop)
    cont = chat.requests[3]["body"]["messages"]
    assert cont[-2] == {"role": "assistant", "content": text[:half]}
    assert cont[-1]["content"].startswith("Your reply was cut off by the length limit. Continue exactly")


def test_a_prose_only_reply_is_retried_with_the_reason(arm):
    s = script()
    with ChatServer([*s[:2], {"content": "I think the arm should lift the panel slowly."}, *s[2:]]) as chat:
        result, loop = plan_and_build(arm, client_for(chat))
    assert result.attempts == 2
    feedback = chat.requests[3]["body"]["messages"][-1]["content"]
    assert ("there is no JSON object in it (it began 'I think the arm should lift the panel slowly.'); "
            "expected one JSON object") in feedback
    assert_built(arm, loop)


def test_a_tool_call_stream_cut_in_the_middle_runs_nothing(arm):
    s = script()
    with ChatServer([*s[:3], {"tool_calls": BUILD_CALLS, "truncate": True}], habits={"pieces": 6}) as chat:
        make_plan(arm, client_for(chat), "the arm lifts the panel")
        before = db_dump(arm, skip=LOG)
        with pytest.raises(AgentError, match=r"the reply from http://127\.0\.0\.1:\d+/v1 was truncated"):
            run_tools(arm, client_for(chat), "Build.")
    assert db_dump(arm, skip=LOG) == before and get_state(arm, "start") is None


@pytest.mark.parametrize("server, status, message", [
    ("vllm", 404, "The model `scripted` does not exist."),
    ("llamacpp", 401, "Invalid API key provided: " + KEY),
    ("ollama", 400, "model requires more system memory (9.2 GiB) than is available (4.1 GiB)"),
])
def test_error_bodies_of_each_server_reach_the_person(arm, server, status, message):
    with ChatServer([{"status": status, "message": message}], habits=server) as chat:
        before = db_dump(arm, skip=LOG)
        with pytest.raises(AgentError) as err:
            make_plan(arm, client_for(chat), "the arm lifts the panel")
    shown = message.replace(KEY, "***")
    assert str(err.value).endswith(f"refused the request (HTTP {status}): {shown}")
    assert KEY not in str(err.value) and db_dump(arm, skip=LOG) == before


def test_an_unknown_tool_asked_for_in_text_is_refused_back_to_the_model(arm):
    text_call = {"content": json.dumps({"tool_calls": [{"name": "delete_project", "arguments": {}}, BUILD_CALLS[0]]})}
    s = script(build=text_call)
    with ChatServer([*s[:4], {"content": json.dumps({"tool_calls": [BUILD_CALLS[1]]})}, s[-1]],
                    habits={"tools": "this model does not support tools"}) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert len(loop.refused) == 1 and loop.refused[0].startswith("there is no tool named 'delete_project'")
    assert [s["action"] for s in list_steps(arm)] == ["plan", "tool set_state", "tool set_state"]
    said = [m["content"] for m in chat.requests[-1]["body"]["messages"] if m["role"] == "user"]
    assert any(t.startswith("Tool result of delete_project: ") and "there is no tool named" in t for t in said)


def test_a_request_refused_for_another_reason_is_not_mistaken_for_missing_tools(arm):
    s = script()
    with ChatServer([*s[:3], {"status": 400, "message": "tools[0].function.parameters: invalid schema"}]) as chat:
        make_plan(arm, client_for(chat), "the arm lifts the panel")
        before = db_dump(arm, skip=LOG)
        client = client_for(chat)
        with pytest.raises(AgentError, match=r"refused the request \(HTTP 400\): tools\[0\]\.function\.parameters"):
            run_tools(arm, client, "Build.")
    assert client.capabilities.get("tools") is None and db_dump(arm, skip=LOG) == before


def test_a_first_request_too_long_for_the_context_is_refused_plainly(arm):
    with ChatServer([{"error": "context"}], habits="llamacpp") as chat:
        before = db_dump(arm, skip=LOG)
        with pytest.raises(AgentError, match=r"longer than the context of scripted at .*, and has nothing older to "
                                             r"summarise \(HTTP 400\): the request exceeds the available context"):
            make_plan(arm, client_for(chat), "the arm lifts the panel")
    assert db_dump(arm, skip=LOG) == before and len(chat.requests) == 1


def test_a_think_block_before_the_content_is_reasoning_not_plan_or_brief(arm):
    draft = json.dumps({"prompt": "a first draft", "states": []})
    think = f"<think>\nThe user wants a lift. A draft: {draft}\nNo, two states.\n</think>\n\n"
    s = script({"content": think + CHAT_STYLE.format(plan=json.dumps(arm_plan()))})
    s[0] = {"content": "<think>short</think>" + SCENE_BRIEF}
    with ChatServer(s) as chat:
        result, loop = plan_and_build(arm, client_for(chat))
    assert result.attempts == 1 and arm.get_doc("plan")["scene_brief"] == SCENE_BRIEF
    assert_built(arm, loop)


def test_retry_after_as_an_http_date_is_waited_for(arm):
    import email.utils
    import time
    when = email.utils.formatdate(time.time() + 2, usegmt=True)
    status: list[str] = []
    s = script()
    with ChatServer([{"status": 503, "headers": {"Retry-After": when}}, *s]) as chat:
        t0 = time.monotonic()
        result, loop = plan_and_build(arm, client_for(chat, max_retries=1, on_status=status.append))
    assert time.monotonic() - t0 >= 1.0
    assert status and status[0].startswith(f"the model at {chat.base_url} is busy (HTTP 503); retrying in ")
    assert_built(arm, loop)


def test_a_server_that_refuses_stream_options_is_asked_without_them(arm):
    habits = {"stream_options": "Unrecognized request argument supplied: stream_options", "errors": "vllm"}
    with ChatServer(script(), habits=habits) as chat:
        _, loop = plan_and_build(arm, client_for(chat))
    assert_built(arm, loop)
    assert "stream_options" in chat.requests[0]["body"]
    assert all("stream_options" not in r["body"] for r in chat.requests[1:])
    assert all(s["tokens"] > 0 for s in list_steps(arm)[:2])     # estimated without the server's usage
