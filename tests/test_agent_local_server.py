"""The agent as a person running a model on their own machine meets it, through the real
OpenAI SDK and the `studio` command against the scripted loopback server: every request
bounded, prompts fitted to a small context, a stream that never ends stopped at the
deadline, failed attempts in the log, model repair rounds that fail keeping the offline
proposals (and a rerun adding no duplicate), and one plan language (the doorway's own
plan is what the planner accepts and its schema describes)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest

from agent_scenes import make_arm_project
from agent_scripts import MOTION_BRIEF, SCENE_BRIEF, good_plan
from chat_server import HABITS, ChatServer, prompt_tokens
from motion_films import jamb_film
from studio.agent.steps import list_steps
from studio.cli import main
from studio.repair.proposals import list_proposals
from studio.store.project import Project
from studio.store.settings import settings_path

ROOT = Path(__file__).resolve().parents[1]
DOORWAY = ROOT / "resources" / "examples" / "doorway" / "calls.jsonl"
GOOD_FILM_REPAIR = {"summary": "slide it into the opening", "changes": [
    {"kind": "insert_state", "frame": 1013, "roots": {"crate": [0, 0.15, 1.0, 1, 0, 0, 0]}}]}


@pytest.fixture
def use_profile(monkeypatch):
    """A named endpoint profile in the test's own settings file, in use; no environment override."""
    monkeypatch.delenv("KEYPOSE_MODEL_BASE_URL", raising=False)
    monkeypatch.delenv("KEYPOSE_MODEL_NAME", raising=False)

    def write(url: str, **more) -> None:
        settings_path().write_text(json.dumps({"endpoint": "local", "endpoints": {"local": {
            "base_url": url, "model": "scripted", **more}}}))
    return write


def arm_plan() -> dict:
    plan = good_plan("the arm lifts the panel")
    plan["objects"], plan["events"] = [{"name": "panel", "description": "a panel"}], []
    return plan


BUILD = [{"tool_calls": [{"name": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide"}}]},
         {"content": "The key state is ready for review."}]


def test_every_request_is_bounded_by_its_kind_and_the_profile(tmp_path, use_profile, capsys):
    with Project.create(tmp_path / "arm") as p:
        make_arm_project(p)
    script = [{"content": SCENE_BRIEF}, {"content": MOTION_BRIEF}, {"content": json.dumps(arm_plan())}, *BUILD]
    with ChatServer(script) as chat:
        use_profile(chat.base_url, max_tokens={"plan": 3000}, temperature=0.2)
        assert main(["agent", "plan", str(tmp_path / "arm"), "--prompt", "the arm lifts the panel", "--build"]) == 0
    bodies = [r["body"] for r in chat.requests]
    assert len(bodies) == 5 and all("max_tokens" in b for b in bodies)
    assert [b["max_tokens"] for b in bodies] == [768, 768, 3000, 2048, 2048]   # brief, brief, plan, build, build
    assert all(b["temperature"] == 0.2 for b in bodies)
    err = capsys.readouterr().err
    assert "  brief reply: " in err and "  plan reply: " in err and " tokens in " in err
    assert main(["agent", "log", str(tmp_path / "arm")]) == 0
    log = capsys.readouterr().out
    assert "request plan     " in log and "(max 3000)" in log and "(max 768)" in log


def test_a_hanging_stream_ends_at_the_overall_deadline_with_one_line(tmp_path, use_profile, capsys):
    assert main(["new", str(tmp_path / "film")]) == 0
    capsys.readouterr()
    with ChatServer([{"hang": 0.2}]) as chat:         # a piece every 0.2 s, never finished
        use_profile(chat.base_url, deadline=2, timeout=45)
        t0 = time.monotonic()
        code = main(["agent", "plan", str(tmp_path / "film"), "--prompt", "a box slides off a table"])
        took = time.monotonic() - t0
    # the 2 s deadline ended it: not the 45 s chunk timeout, nor the server giving up at 60 s
    assert code == 1 and took < 30
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not finish within the 2 s deadline" in err[0] and "Traceback" not in err[0]
    with Project.open(tmp_path / "film") as project:
        (step,) = list_steps(project)
    (request,) = step["detail"]["requests"]
    assert step["action"] == "plan (failed)" and "deadline" in step["detail"]["failed"]
    assert request["kind"] == "brief" and not request["ok"] and request["tokens_out"] >= 3


def _film_proposals(path) -> list:
    with Project.open(path) as project:
        return list_proposals(project)


def test_a_4096_token_context_gets_a_repair_prompt_that_fits(tmp_path, use_profile, capsys):
    jamb_film(tmp_path / "jamb").close()
    # the server says its context (llama.cpp's /props) and refuses any longer prompt, as llama.cpp does
    with ChatServer([{"content": json.dumps(GOOD_FILM_REPAIR)}], habits={**HABITS["llamacpp"], "context": 4096}) as chat:
        use_profile(chat.base_url)
        assert main(["agent", "repair", str(tmp_path / "jamb"), "--film"]) == 0
    out = capsys.readouterr().out
    assert "(model): slide it into the opening" in out
    (request,) = [r["body"] for r in chat.requests]
    assert prompt_tokens(request) + request["max_tokens"] <= 4096
    prompt = request["messages"][1]["content"]
    assert "Schema of interpolate's params" in prompt and '"crate": [' in prompt
    assert "(Not listed, to fit the context: the parameter schemas of " in prompt
    assert any(r["path"] == "/props" for r in chat.lookups)
    # the whole prompt, as it was sent before it was fitted, is more than that server takes
    from studio.agent.model_motion_repair import _context
    from studio.repair.motion_repair import propose_film
    from studio.repair.motion_trial import FilmTrial
    with Project.open(tmp_path / "jamb") as project:
        trial = FilmTrial(project)
        run = propose_film(project, store=False, trial=trial).runs[0]
        whole = _context(trial, run, [])
    assert prompt_tokens({"messages": [{"content": whole}]}) > 4096


def test_a_failed_model_round_keeps_the_offline_proposals_and_a_rerun_adds_no_duplicate(tmp_path, use_profile,
                                                                                          capsys):
    jamb_film(tmp_path / "jamb").close()
    path = str(tmp_path / "jamb")
    # a server that refuses the long prompt but does not say its context: the model's round fails
    with ChatServer([], habits={"context": 4096}) as chat:
        use_profile(chat.base_url)
        assert main(["agent", "repair", path, "--film"]) == 1
        first = capsys.readouterr().out
        kept = [p.id for p in _film_proposals(path)]
        assert kept and all(p.source == "offline" for p in _film_proposals(path))
        assert "the model's round failed: the conversation is longer than the context of scripted" in first
        assert f"kept the offline proposals: {', '.join(f'#{i}' for i in kept)}" in first
        assert main(["agent", "repair", path, "--film"]) == 1
        again = capsys.readouterr().out
    assert [p.id for p in _film_proposals(path)] == kept                  # no duplicate
    assert f"kept the offline proposals: {', '.join(f'#{i}' for i in kept)}" in again
    assert len(chat.requests) == 2
    with Project.open(path) as project:
        steps = list_steps(project)
    assert [s["action"] for s in steps] == ["propose motion repairs (failed)"] * 2
    assert not steps[0]["detail"]["requests"][0]["ok"] and "HTTP 400" in steps[0]["detail"]["requests"][0]["error"]


def test_a_continuation_keeps_the_schema(tmp_path, use_profile, capsys):
    with Project.create(tmp_path / "arm") as p:
        make_arm_project(p)
    text = json.dumps(arm_plan())
    # the first reply stops at the token limit; the server, held to the schema, answers anew whole
    script = [{"content": SCENE_BRIEF}, {"content": MOTION_BRIEF},
              {"content": text[:200], "finish": "length", "habits": {"max_tokens": "ignore"}}, {"content": text}]
    with ChatServer(script) as chat:
        use_profile(chat.base_url)
        assert main(["agent", "plan", str(tmp_path / "arm"), "--prompt", "the arm lifts the panel"]) == 0
    first, cont = chat.requests[2]["body"], chat.requests[3]["body"]
    assert cont["response_format"] == first["response_format"] and cont["max_tokens"] == first["max_tokens"]
    assert cont["messages"][-2] == {"role": "assistant", "content": text[:200]}
    assert "1 attempt(s)" in capsys.readouterr().out


@pytest.fixture(scope="module")
def doorway_scene(tmp_path_factory):
    """The doorway example's scene as its calls file builds it, without its plan."""
    folder = tmp_path_factory.mktemp("doorway")
    lines = DOORWAY.read_text().splitlines()
    upto = next(i for i, line in enumerate(lines) if json.loads(line)["tool"] == "set_plan")
    (folder / "scene.jsonl").write_text("\n".join(lines[:upto]) + "\n")
    plan = json.loads(lines[upto])["arguments"]["plan"]
    assert main(["new", str(folder / "doorway")]) == 0
    assert main(["agent", "replay", str(folder / "doorway"), str(folder / "scene.jsonl")]) == 0
    return folder / "doorway", plan


def test_the_doorway_plan_is_accepted_by_agent_plan_on_the_first_attempt(doorway_scene, tmp_path, use_profile,
                                                                           capsys):
    import shutil
    path = tmp_path / "doorway"
    shutil.copytree(doorway_scene[0], path)
    plan = doorway_scene[1]
    assert plan["events"][0]["subjects"] == ["gripper_l", "handle_left"]       # named frames of the scene
    with ChatServer([{"content": SCENE_BRIEF}, {"content": MOTION_BRIEF}, {"content": json.dumps(plan)}]) as chat:
        use_profile(chat.base_url)
        capsys.readouterr()
        assert main(["agent", "plan", str(path), "--prompt", plan["prompt"]]) == 0
    out = capsys.readouterr().out
    assert "(" in out and "1 attempt(s))" in out
    with Project.open(path) as project:
        stored = project.get_doc("plan")
    assert stored["events"] == plan["events"] and stored["motion"] == plan["motion"]
    schema = chat.requests[2]["body"]["response_format"]["json_schema"]["schema"]
    jsonschema.validate(plan, schema)                  # the schema the planner asks under describes it


def test_the_planner_and_set_plan_accept_the_same_plans(doorway_scene):
    from studio.agent.plan_shape import PlanInvalid, check_plan_shape
    from studio.scene.io import load_scene
    from studio.tools.box import ToolBox
    from studio.tools.errors import ToolRefused
    path, plan = doorway_scene
    variants = {"as stored": lambda p: None,
                "a frame as a subject": lambda p: p["events"][1].update(subjects=["gripper_r", "panel"]),
                "an unknown subject": lambda p: p["events"][1].update(subjects=["ghost", "panel"]),
                "a camera not in the scene": lambda p: p["shots"][0].update(camera="cam_ghost"),
                "a tool's wrong params": lambda p: p["motion"][0]["params"].update(body=7),
                "a tolerance as text": lambda p: p["events"][0]["params"].update(tolerance="close"),
                "an unknown kind": lambda p: p["events"][0].update(kind="teleport")}
    with Project.open(path) as project:
        scene = load_scene(project)
        for name, change in variants.items():
            p = json.loads(json.dumps(plan))
            change(p)
            try:
                check_plan_shape(json.loads(json.dumps(p)), scene)
                planner = True
            except PlanInvalid:
                planner = False
            try:
                ToolBox(project, actor="person").call("set_plan", {"plan": p})
                tool = True
            except (ToolRefused, ValueError):
                tool = False
            assert planner == tool, name
            assert planner == (name in ("as stored", "a frame as a subject")), name


def test_studio_tools_json_documents_the_plan(capsys):
    assert main(["tools", "--json"]) == 0
    tools_json = json.loads(capsys.readouterr().out)
    tools = {t["name"]: t for t in tools_json["tools"]}
    plan = tools["set_plan"]["parameters"]["properties"]["plan"]
    assert plan != {"type": "object"}
    assert {"shots", "states", "objects", "events", "motion"} <= set(plan["properties"])
    event = plan["properties"]["events"]["items"]["properties"]
    assert event["kind"]["enum"] == ["contact", "grasp", "release", "reach", "enter_region", "pass_through", "order"]
    assert {"tolerance", "point", "normal", "min", "max"} <= set(event["params"]["properties"])
    assert "named frames of the scene" in event["subjects"]["description"]
    segment = plan["properties"]["motion"]["items"]["properties"]
    assert "motion tools" in segment["tool"]["description"] and segment["params"]["type"] == "object"
    assert "interpolate" in {t["name"] for t in json.loads(json.dumps(tools_json))["motion_tools"]}
