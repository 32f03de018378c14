"""From a prompt to an approved storyboard state through the scripted model,
with every tool call undoable and every step revertible to exact hashes."""
from __future__ import annotations

import json

import pytest

from agent_scenes import make_arm_project
from agent_scripts import db_dump, good_plan, plan_replies
from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.loop import run_tools
from studio.agent.planner import make_plan
from studio.agent.steps import list_steps, revert
from studio.scene.io import load_scene
from studio.scene.meshes import scene_design_id
from studio.timeline.commands import CommandStack, ReviewState
from studio.timeline.film import list_segments
from studio.timeline.gate import state_status
from studio.timeline.motion import motion_tools
from studio.timeline.reviews import latest_review
from studio.timeline.storyboard import content_hash, get_state, list_states


def arm_plan() -> dict:
    plan = good_plan("the arm lifts the panel")
    plan["objects"] = [{"name": "panel", "description": "a thin panel"}, {"name": "robot", "description": "the arm"}]
    plan["events"] = []
    return plan


def build_replies() -> list[dict]:
    return [
        {"tool_calls": [
            {"name": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide",
                                                "description": "panel on the floor"}},
            {"name": "set_state", "arguments": {"state": "lift", "frame": 1048, "shot": "wide",
                                                "description": "the panel is lifted",
                                                "joints": {"shoulder": -0.3}}}]},
        {"tool_calls": [
            {"name": "solve_ik", "arguments": {"state": "lift", "effector": "gripper", "joints": ["shoulder", "elbow"],
                                               "target_position": [-1.0, 0.0, 0.6]}},
            {"name": "place_relative", "arguments": {"state": "lift", "body": "panel", "frame": "gripper",
                                                     "offset": [0.0, 0.0, -0.04]}},
            {"name": "run_verifiers", "arguments": {"state": "start"}},
            {"name": "run_verifiers", "arguments": {"state": "lift"}}]},
        {"content": "Both key states are ready for review."},
    ]


def scene_hashes(project) -> dict:
    scene = load_scene(project)
    return {"design": scene_design_id(scene),
            "states": {s.id: content_hash(scene, s.pose, s.frame) for s in list_states(project)},
            "tracks": {r["segment"]: r["hash"] for r in list_segments(project)}}


def test_prompt_to_an_approved_state_and_gated_motion(tmp_project):
    make_arm_project(tmp_project)
    with ChatServer([*plan_replies(arm_plan()), *build_replies()]) as chat:
        client = ModelClient(chat.base_url, "scripted", "sk-roundtrip-key", timeout=5, max_retries=0)
        planned = make_plan(tmp_project, client, "the arm lifts the panel")
        stack = CommandStack()
        built = run_tools(tmp_project, client, "Author the key states.", stack)
        assert built.refused == [] and built.final_text == "Both key states are ready for review."
        # tools got the schemas; the loop answered each call with its result
        assert {t["function"]["name"] for t in chat.requests[3]["body"]["tools"]} >= {"set_state", "solve_ik"}
        answers = [json.loads(m["content"]) for m in chat.requests[5]["body"]["messages"] if m["role"] == "tool"]
        assert [a["ok"] for a in answers] == [True] * 6
        ik = answers[2]
        assert ik["error_m"] < 1e-3
        lift = get_state(tmp_project, "lift")
        from studio.timeline.motion.ik import frame_pose
        grip = frame_pose(load_scene(tmp_project), lift.pose, "gripper")
        assert grip[:3, 3] == pytest.approx([-1.0, 0.0, 0.6], abs=1e-3)
        # the offset is in the gripper's own frame (turned with the forearm)
        assert lift.pose.roots["panel"][:3] == pytest.approx((grip @ [0.0, 0.0, -0.04, 1.0])[:3], abs=1e-9)
        assert abs(lift.pose.roots["panel"][0] + 1.0) > 1e-3
        assert answers[4]["verdicts"]["NoPenetration"] == "pass"

        # a person approves 'start' (a command on the same stack)
        stack.run(ReviewState(tmp_project, "start", "approve", "looks right"))
        review = latest_review(tmp_project, "start")
        assert (review.verdict, review.note) == ("approve", "looks right")
        assert review.content_hash == content_hash(load_scene(tmp_project), get_state(tmp_project, "start").pose,
                                                    get_state(tmp_project, "start").frame)

        # motion across the unapproved 'lift' is refused with the gate's message, as the tool result
        chat.add({"tool_calls": [{"name": "author_segment", "arguments": {"segment": "start..lift"}}]},
                 {"content": "Waiting for lift to be approved."})
        before = db_dump(tmp_project, skip=("audit",))
        gated = run_tools(tmp_project, client, "Author the motion.", stack)
        assert db_dump(tmp_project, skip=("audit",)) == before
        assert len(gated.refused) == 1 and "motion is blocked" in gated.refused[0]
        assert "lift: unreviewed" in gated.refused[0]
        sent = chat.requests[-1]["body"]["messages"][-1]
        assert sent["role"] == "tool" and "motion is blocked" in json.loads(sent["content"])["error"]

        # the approved, verified state opens the gate on its side
        assert state_status(tmp_project, "start").ok
        assert state_status(tmp_project, "start").status == "approved"
        stack.run(ReviewState(tmp_project, "lift", "approve"))
        chat.add({"tool_calls": [{"name": "author_segment", "arguments": {"segment": "start..lift"}}]},
                 {"content": "Baked."})
        run_tools(tmp_project, client, "Author the motion.", stack)
        (seg,) = list_segments(tmp_project)
        assert (seg["segment"], seg["start"], seg["end"]) == ("start..lift", 1001, 1048)
        # the bake is a command like any other: undo removes it
        stack.undo()
        assert list_segments(tmp_project) == []
        stack.redo()
        assert len(list_segments(tmp_project)) == 1


def test_steps_record_what_the_agent_did(tmp_project):
    make_arm_project(tmp_project)
    with ChatServer([*plan_replies(arm_plan()), *build_replies()]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        planned = make_plan(tmp_project, client, "the arm lifts the panel")
        run_tools(tmp_project, client, "Author the key states.")
    steps = list_steps(tmp_project)
    assert planned.step == 1 and [s["action"] for s in steps] == \
        ["plan", "tool set_state", "tool set_state", "tool solve_ik", "tool place_relative",
         "tool run_verifiers", "tool run_verifiers"]
    assert steps[3]["detail"]["arguments"]["target_position"] == [-1.0, 0.0, 0.6]
    assert steps[1]["tokens"] > 0 and steps[2]["tokens"] == 0     # a reply's tokens go to its first step
    assert all(s["seconds"] >= 0 and s["snapshot"].endswith(".json") for s in steps)


def test_revert_restores_exact_hashes(tmp_project):
    make_arm_project(tmp_project)
    with ChatServer([*plan_replies(arm_plan()), *build_replies()]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        make_plan(tmp_project, client, "the arm lifts the panel")
        seen = {}
        steps_before = len(list_steps(tmp_project))
        run_tools(tmp_project, client, "Author the key states.")
    steps = list_steps(tmp_project)
    assert len(steps) == steps_before + 6 and all(s["tokens"] >= 0 for s in steps)
    # replay the snapshots: each step's restore gives the hashes the project had after it
    for s in steps:
        revert(tmp_project, s["id"])
        seen[s["id"]] = scene_hashes(tmp_project)
    assert seen[1]["states"] == {}
    assert set(seen[2]["states"]) == {"start"} and set(seen[3]["states"]) == {"start", "lift"}
    assert seen[4]["states"]["lift"] != seen[3]["states"]["lift"]      # solve_ik moved the arm
    final = steps[-1]["id"]
    revert(tmp_project, final)
    assert scene_hashes(tmp_project) == seen[final]
    revert(tmp_project, 0)                                              # before the agent's first step
    assert tmp_project.get_doc("plan") is None and list_states(tmp_project) == []
    assert scene_hashes(tmp_project)["design"] == seen[1]["design"]
    revert(tmp_project, 3)
    assert scene_hashes(tmp_project) == seen[3]
    assert get_state(tmp_project, "lift").pose.joints["shoulder"] == -0.3
    actions = [s["action"] for s in list_steps(tmp_project)]
    assert actions[-3:] == [f"revert to step {final}", "revert to step 0", "revert to step 3"]
    with pytest.raises(Exception, match="no agent step 999"):
        revert(tmp_project, 999)


@pytest.mark.skipif("carry" not in motion_tools(), reason="no carry motion tool is registered")
def test_carry_keeps_the_grasped_panel_on_the_gripper_between_approved_states(tmp_project):
    import numpy as np

    from studio.tools.box import ToolBox
    from studio.checks.run import verify_state
    from studio.scene.kinematics import tracks_world
    from studio.scene.pose import Pose
    from studio.scene.transforms import from_7, invert, to_7
    from studio.timeline.film import load_segment
    from studio.timeline.motion.ik import frame_pose
    from studio.timeline.storyboard import State, put_state
    scene = make_arm_project(tmp_project)
    plan = arm_plan()
    plan["objects"].append({"name": "gripper", "description": "the arm's gripper"})
    plan["events"] = [{"id": "grab", "kind": "grasp", "subjects": ["gripper", "panel"], "window": [1001, 1001],
                       "params": {}, "after": []}]
    tmp_project.put_doc("plan", plan)
    for sid, frame, shoulder in (("start", 1001, -0.6), ("lift", 1048, -1.0)):
        pose = Pose.rest(scene)
        pose.joints.update(shoulder=shoulder, elbow=1.2)
        grip = frame_pose(scene, pose, "gripper")
        held = grip @ from_7(np.array([0.3, 0.0, -0.03, 1.0, 0.0, 0.0, 0.0]))    # held the same way in both
        pose.roots["panel"] = to_7(held).tolist()
        put_state(tmp_project, scene, State(sid, frame, pose, "wide", sid))
        verify_state(tmp_project, sid)
    stack = CommandStack()
    for sid in ("start", "lift"):
        stack.run(ReviewState(tmp_project, sid, "approve"))
    box = ToolBox(tmp_project, stack)
    box.call("author_segment", json.dumps({"segment": "start..lift", "tool": "carry"}))
    tracks = load_segment(tmp_project, "start..lift")
    world = tracks_world(scene, tracks)
    grip = world["fore"] @ from_7(np.asarray(scene.frame("gripper").local.as_list()))
    rel = np.einsum("fij,fjk->fik", invert(grip), world["panel"])
    # the panel's pose in the gripper's frame is the same on every carried frame
    assert np.abs(rel - rel[0]).max() < 2e-3 and tracks.n_frames == 48
    plain = tracks.roots["panel"][24, :3]
    straight = (np.asarray(get_state(tmp_project, "start").pose.roots["panel"][:3]) +
                np.asarray(get_state(tmp_project, "lift").pose.roots["panel"][:3])) / 2
    assert np.linalg.norm(plain - straight) > 1e-3        # it follows the arc, not a straight in-between


def test_plan_state_repair_round_trip_through_the_model(tmp_project):
    from studio.agent.model_repair import propose_with_model
    from studio.repair.proposals import approve
    from studio.checks.report import load_reports, required_checks_pass
    make_arm_project(tmp_project)
    bad_state = {"tool_calls": [
        {"name": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide",
                                            "description": "panel against the wall",
                                            "roots": {"panel": [-0.3, 1.0, 0.01, 1, 0, 0, 0]}}},
        {"name": "run_verifiers", "arguments": {"state": "start"}}]}
    fix = {"content": json.dumps({"summary": "slide the panel back from the wall",
                                  "changes": [{"kind": "root", "name": "panel", "to": [-0.45, 1.0, 0.01, 1, 0, 0, 0]}]})}
    with ChatServer([*plan_replies(arm_plan()), bad_state, {"content": "start is authored"}, fix]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        make_plan(tmp_project, client, "the arm lifts the panel")
        built = run_tools(tmp_project, client, "Author the key states.")
        verdicts = json.loads(chat.requests[4]["body"]["messages"][-1]["content"])["verdicts"]
        assert verdicts["NoPenetration"] == "fail" and built.final_text == "start is authored"
        made, unsolved = propose_with_model(tmp_project, client, "start")
    assert unsolved == [] and [p.check_name for p in made] == ["NoPenetration"]
    evidence = json.loads(chat.requests[-1]["body"]["messages"][1]["content"].split("Evidence: ")[1].split("\n")[0])
    assert sorted([evidence["a"], evidence["b"]]) == ["panel", "wall"] and evidence["depth_m"] > evidence["tau_m"]
    stack = CommandStack()
    approve(tmp_project, made[0].id, stack)
    reports, _ = load_reports(tmp_project, "state:start")
    assert required_checks_pass(reports)
    stack.run(ReviewState(tmp_project, "start", "approve"))
    assert state_status(tmp_project, "start").ok
