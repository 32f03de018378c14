"""Hostile or broken model replies: each gets a clear message and changes nothing."""
from __future__ import annotations

import json
import time

import pytest

from agent_scenes import make_arm_project
from studio.agent.steps import list_steps
from agent_scripts import LOG, MOTION_BRIEF, SCENE_BRIEF, db_dump, good_plan
from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.agent.loop import run_tools
from studio.agent.planner import make_plan
from studio.timeline.storyboard import State, get_state, put_state
from studio.scene.pose import Pose

KEY = "sk-hostile-secret-0123456789"


@pytest.fixture
def chat():
    with ChatServer() as server:
        yield server


@pytest.fixture
def project(tmp_project):
    scene = make_arm_project(tmp_project)
    put_state(tmp_project, scene, State("start", 1001, Pose.rest(scene), "wide", "rest"))
    return tmp_project


def client(server, timeout=5.0, **kw):
    return ModelClient(server.base_url, "scripted", KEY, timeout=timeout, max_retries=0, **kw)


@pytest.mark.parametrize("reply, message", [
    ({"content": "A scene brief that stops half way" * 20, "truncate": True}, "was truncated"),
    ({"content": "x" * 50_000, "habits": {"max_tokens": "ignore"}}, "is longer than 20000 characters"),
    ({"status": 401, "body": json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})},
     "refused the request (HTTP 401): Incorrect API key provided: ***"),
    ({"status": 500, "body": "<html>upstream crashed</html>"}, "(HTTP 500)"),
])
def test_broken_replies_during_planning(project, chat, reply, message):
    chat.add(reply)
    before = db_dump(project, skip=LOG)
    with pytest.raises(AgentError) as err:
        make_plan(project, client(chat, max_reply_chars=20_000), "carry the panel")
    assert message in str(err.value) and KEY not in str(err.value)
    assert db_dump(project, skip=LOG) == before


def test_a_stalled_model_times_out(project, chat):
    chat.add({"stall": 60, "content": SCENE_BRIEF})
    before = db_dump(project, skip=LOG)
    t0 = time.monotonic()
    with pytest.raises(AgentError, match=r"did not answer within 2 s"):
        make_plan(project, client(chat, timeout=2.0), "carry the panel")
    assert time.monotonic() - t0 < 60      # it gave up at its own limit, long before the stalled server answers
    assert db_dump(project, skip=LOG) == before


def test_a_stream_cut_after_the_briefs_leaves_no_plan(project, chat):
    chat.add({"content": SCENE_BRIEF}, {"content": MOTION_BRIEF},
             {"content": json.dumps(good_plan()), "truncate": True})
    before = db_dump(project, skip=LOG)
    with pytest.raises(AgentError, match="was truncated"):
        make_plan(project, client(chat), "carry the panel")
    assert db_dump(project, skip=LOG) == before and project.get_doc("plan") is None


def test_invalid_json_every_time_is_refused(project, chat):
    chat.add({"content": SCENE_BRIEF}, {"content": MOTION_BRIEF},
             *[{"content": "{'states': [1, 2,"} for _ in range(3)])
    before = db_dump(project, skip=LOG)
    with pytest.raises(AgentError, match=r"refused 3 times.*not valid JSON"):
        make_plan(project, client(chat), "carry the panel")
    assert db_dump(project, skip=LOG) == before


HOSTILE_CALLS = [
    ({"name": "rm_rf", "arguments": {"path": "/"}}, "there is no tool named 'rm_rf'"),
    ({"name": "set_joint", "arguments": "{\"state\": \"start\", \"joint\": "}, "arguments are not valid JSON"),
    ({"name": "set_joint", "arguments": {"state": "start", "joint": "elbow", "value": 2.9}},
     "2.9 is outside the limits of joint 'elbow' [0.0000, 2.4000]"),
    ({"name": "set_joint", "arguments": {"state": "start", "joint": "elbow", "value": 1e9}},
     "set_joint.value: 1000000000.0 is greater than the maximum of 100"),
    ({"name": "set_state", "arguments": {"state": "new", "frame": -5}}, "set_state.frame: -5 is less than the minimum of 0"),
    ({"name": "set_state", "arguments": {"state": "start", "roots": {"panel": [1e6, 0, 0, 1, 0, 0, 0]}}},
     "set_state.roots.panel[0]: 1000000.0 is greater than the maximum of 1000"),
    ({"name": "set_state", "arguments": {"state": "start", "roots": {"upper": [0, 0, 0, 1, 0, 0, 0]}}},
     "set_state.roots.upper: not a root body"),
    ({"name": "set_state", "arguments": {"state": "../../x", "frame": 1}}, "does not match"),
    ({"name": "set_joint", "arguments": {"state": "start", "joint": "elbow", "value": 1.0, "sudo": True}},
     "Additional properties are not allowed ('sudo' was unexpected)"),
    ({"name": "create_body", "arguments": {"name": "leak", "mesh": "../../../etc/passwd.stl"}},
     "names a file outside the project folder"),
    ({"name": "create_body", "arguments": {"name": "leak", "mesh": "/etc/ssl/cert.stl"}},
     "names a file outside the project folder"),
    ({"name": "create_body", "arguments": {"name": "gear", "part": "spur_gear", "params": {"teeth": 2}}},
     "part 'spur_gear', parameter 'teeth'"),
    ({"name": "place_relative", "arguments": {"state": "start", "body": "panel", "frame": "nowhere"}},
     "no named frame 'nowhere'"),
    ({"name": "solve_ik", "arguments": {"state": "start", "effector": "gripper", "joints": ["shoulder", "elbow"],
                                        "target_position": [5.0, 5.0, 5.0]}}, "cannot reach the target"),
]


@pytest.mark.parametrize("call, message", HOSTILE_CALLS, ids=[c[0]["name"] + str(i) for i, c in enumerate(HOSTILE_CALLS)])
def test_hostile_tool_calls_are_refused_and_change_nothing(project, chat, call, message):
    chat.add({"tool_calls": [call]}, {"content": "giving up"})
    before = db_dump(project)
    result = run_tools(project, client(chat), "Do the thing.")
    assert len(result.refused) == 1 and message in result.refused[0], result.refused
    assert result.steps == [] and result.final_text == "giving up"
    assert db_dump(project) == before
    # the refusal went back to the model as the tool's result
    tool_msg = chat.requests[-1]["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and json.loads(tool_msg["content"]) == {"ok": False, "error": result.refused[0]}


def test_agent_code_writing_outside_its_job_folder_is_refused(project, chat, tmp_path):
    target = tmp_path / "escaped.txt"
    code = f"open({str(target)!r}, 'w').write('x')\n"
    chat.add({"tool_calls": [{"name": "build_part_code", "arguments": {"body": "part", "code": code}}]},
             {"content": "ok"})
    before = db_dump(project)
    result = run_tools(project, client(chat), "Build a part.")
    assert "Read-only file system" in result.refused[0]
    assert not target.exists() and db_dump(project) == before


def test_too_many_calls_in_one_reply_run_none(project, chat):
    calls = [{"name": "set_joint", "arguments": {"state": "start", "joint": "elbow", "value": 0.1 * i}}
             for i in range(17)]
    chat.add({"tool_calls": calls})
    before = db_dump(project, skip=LOG)
    with pytest.raises(AgentError, match="17 tool calls in one reply"):
        run_tools(project, client(chat), "Pose it.")
    assert db_dump(project, skip=LOG) == before and get_state(project, "start").pose.joints["elbow"] == 0.0


def test_a_broken_stream_mid_loop_keeps_the_finished_steps(project, chat):
    chat.add({"tool_calls": [{"name": "set_joint", "arguments": {"state": "start", "joint": "elbow", "value": 1.0}}]},
             {"content": "and now", "truncate": True})
    with pytest.raises(AgentError, match="was truncated"):
        run_tools(project, client(chat), "Pose it.")
    assert get_state(project, "start").pose.joints["elbow"] == 1.0
    steps = list_steps(project)
    assert [s["action"] for s in steps] == ["tool set_joint", "build (failed)"]
    assert "was truncated" in steps[1]["detail"]["failed"] and not steps[1]["detail"]["requests"][-1]["ok"]


def test_a_part_stl_that_links_outside_the_job_folder_is_never_read(project, chat, tmp_path):
    import trimesh
    outside = tmp_path / "outside.stl"
    trimesh.creation.box((0.1, 0.1, 0.1)).export(outside)
    code = f"import os\nos.symlink({str(outside)!r}, 'part.stl')\n"
    chat.add({"tool_calls": [{"name": "build_part_code", "arguments": {"body": "part", "code": code}}]},
             {"content": "ok"})
    before = db_dump(project)
    result = run_tools(project, client(chat), "Build a part.")
    assert "wrote no part.stl in its job folder (it wrote nothing)" in result.refused[0]
    assert db_dump(project) == before and not list((project.path / "assets").rglob("*.stl"))
