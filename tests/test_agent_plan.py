"""Planning through the real OpenAI SDK against a scripted loopback server."""
from __future__ import annotations

import json

import pytest

from agent_scripts import LOG, MOTION_BRIEF, SCENE_BRIEF, db_dump, good_plan, plan_replies
from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.agent.planner import make_plan
from studio.agent.steps import list_steps


@pytest.fixture
def chat():
    with ChatServer() as server:
        yield server


def client_for(server, **kw) -> ModelClient:
    return ModelClient(server.base_url, "scripted-model", "sk-test-plan", timeout=kw.pop("timeout", 5.0),
                       max_retries=0, **kw)


def test_plan_uses_two_fresh_rewriters_and_stores_the_plan(tmp_project, chat):
    chat.add(*plan_replies(good_plan()))
    result = make_plan(tmp_project, client_for(chat), "carry the panel through the door")
    stored = tmp_project.get_doc("plan")
    assert stored["states"][1] == {"id": "lift", "frame": 1048, "shot": "wide",
                                   "description": "the panel is lifted", "objects": ["panel"]}
    assert stored["scene_brief"] == SCENE_BRIEF and stored["motion_brief"] == MOTION_BRIEF
    # each rewriter is its own conversation: a system message and one user message, no history
    scene_req, motion_req, plan_req = (r["body"] for r in chat.requests)
    assert [m["role"] for m in scene_req["messages"]] == ["system", "user"]
    assert [m["role"] for m in motion_req["messages"]] == ["system", "user"]
    assert "scene rewriter" in scene_req["messages"][0]["content"]
    assert "motion rewriter" in motion_req["messages"][0]["content"]
    assert SCENE_BRIEF not in scene_req["messages"][1]["content"]
    assert all(r["stream"] is True for r in (scene_req, motion_req, plan_req))
    assert SCENE_BRIEF in plan_req["messages"][1]["content"] and MOTION_BRIEF in plan_req["messages"][1]["content"]
    steps = list_steps(tmp_project)
    assert [s["action"] for s in steps] == ["plan"] and steps[0]["id"] == result.step
    assert steps[0]["tokens"] == result.tokens > 0
    assert steps[0]["detail"]["states"] == ["start", "lift"]


def test_invalid_plan_is_retried_with_the_validation_message(tmp_project, chat):
    bad = good_plan()
    bad["states"][1]["frame"] = 1300          # outside its shot
    chat.add(*plan_replies("this is not json {"), {"content": json.dumps(bad)},
             {"content": "```json\n" + json.dumps(good_plan()) + "\n```"})
    result = make_plan(tmp_project, client_for(chat), "carry the panel through the door")
    assert result.attempts == 3
    third = chat.requests[4]["body"]["messages"]
    feedback = [m["content"] for m in third if m["role"] == "user"][1:]
    assert "not valid JSON" in feedback[0]
    assert "plan.states[1].frame: 1300 is outside shot 'wide' (1001..1120)" in feedback[1]
    assert list_steps(tmp_project)[0]["detail"]["refused"][1].startswith("plan.states[1].frame")


def test_plan_refused_after_the_last_attempt_changes_nothing(tmp_project, chat):
    bad = good_plan()
    bad["events"][0]["kind"] = "teleport"
    chat.add(*plan_replies(json.dumps(bad)), {"content": json.dumps(bad)}, {"content": json.dumps(bad)})
    before = db_dump(tmp_project, skip=LOG)
    with pytest.raises(AgentError, match=r"refused 3 times.*plan.events\[0\].kind: expected one of"):
        make_plan(tmp_project, client_for(chat), "carry the panel")
    assert db_dump(tmp_project, skip=LOG) == before and tmp_project.get_doc("plan") is None
    (failed,) = list_steps(tmp_project)            # the tokens spent on the refusals are in the log
    assert failed["action"] == "plan (failed)" and "refused 3 times" in failed["detail"]["failed"]
    kinds = [a["kind"] for a in failed["detail"]["requests"]]
    assert kinds == ["brief", "brief", "plan", "plan", "plan"] and all(a["ok"] for a in failed["detail"]["requests"])
    assert failed["tokens"] == failed["detail"]["tokens_in"] + failed["detail"]["tokens_out"] > 0


def test_order_events_name_events_and_other_events_name_objects():
    from studio.agent.plan_shape import PlanInvalid, check_plan_shape
    plan = good_plan()
    plan["events"].append({"id": "lift_after_grasp", "kind": "order", "subjects": ["grasp_panel"],
                           "window": [1001, 1120], "params": {}, "after": []})
    assert check_plan_shape(plan) is plan
    plan["events"][1]["subjects"] = ["panel"]
    with pytest.raises(PlanInvalid, match=r"plan.events\[1\].subjects\[0\]: an order event lists event ids"):
        check_plan_shape(plan)
    plan["events"][1]["kind"] = "contact"
    plan["events"][1]["subjects"] = ["ghost"]
    with pytest.raises(PlanInvalid, match=r"no object named 'ghost' in plan.objects"):
        check_plan_shape(plan)
