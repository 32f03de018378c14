"""One tool layer: the catalogue, refusals that name the field and change
nothing, segment tools as plan data, every call one audit row, undo and redo
in the history, reviews recorded as whoever called."""
from __future__ import annotations

import json

import pytest
from agent_scripts import db_dump
from calls_scenes import calls, fingerprint

from studio.tools.calls import history
from studio.tools.errors import ToolRefused
from studio.tools.box import ToolBox
from studio.cli import main
from studio.scene.io import load_scene
from studio.timeline.commands import CommandStack
from studio.timeline.film import film_hash
from studio.timeline.plan import PlanError, validate_plan
from studio.timeline.reviews import list_reviews

EDITS = {"name_scene", "add_material", "create_body", "build_part_code", "add_frame", "add_camera", "allow_overlap", "set_plan",
         "set_segment_tool", "set_state", "set_joint", "place_relative", "solve_ik", "review_state",
         "author_segment", "drop_segment", "run_verifiers", "request_render", "delete_state", "adopt_end_state",
         "frame_action", "add_note", "delete_note", "set_shot_status"}


def apply(project, items, actor="person", stack=None):
    box = ToolBox(project, stack, actor=actor)
    for c in items:
        box.call(c["tool"], c["arguments"])
    return box


def test_studio_tools_json_lists_every_tool_and_motion_tool_with_a_schema(capsys):
    assert main(["tools", "--json"]) == 0
    cat = json.loads(capsys.readouterr().out)
    tools = {t["name"]: t for t in cat["tools"]}
    assert set(tools) == EDITS
    for t in cat["tools"] + cat["motion_tools"]:
        assert t["description"] and t["parameters"]["type"] == "object" and "properties" in t["parameters"]
    motion = {t["name"]: t["parameters"] for t in cat["motion_tools"]}
    assert {"interpolate", "hold"} <= set(motion)
    assert motion["hold"]["properties"]["blend"]["type"] == "integer"
    # the agent's author_segment and set_segment_tool take exactly the registered motion tools
    assert tools["author_segment"]["parameters"]["properties"]["tool"]["enum"] == sorted(motion)
    assert tools["set_segment_tool"]["parameters"]["properties"]["tool"]["enum"] == sorted(motion)
    assert main(["tools"]) == 0
    assert "author_segment" in capsys.readouterr().out


@pytest.mark.parametrize("tool,arguments,message", [
    ("set_segment_tool", {"segment": "start..slid", "tool": "interpolate", "params": {"rotation": "spline"}},
     "set_segment_tool.params.rotation: 'spline' is not one of ['squad', 'slerp']"),
    ("set_segment_tool", {"segment": "start..slid", "tool": "hold", "params": {"blend": -3}},
     "set_segment_tool.params.blend: -3 is less than the minimum of 0"),
    ("set_segment_tool", {"segment": "start..slid", "tool": "teleport"},
     "set_segment_tool.tool: 'teleport' is not one of"),
    ("add_camera", {"name": "cam2", "position": [1, 2], "target": [0, 0, 0]},
     "add_camera.position: [1, 2] is too short"),
    ("author_segment", {"segment": "start..slid", "tool": "hold", "params": {"blend": "six"}},
     "author_segment.params.blend: 'six' is not of type 'integer'"),
    ("review_state", {"state": "slid", "verdict": "maybe"}, "review_state.verdict: 'maybe' is not one of"),
    ("set_plan", {"plan": {**calls()[5]["arguments"]["plan"],
                           "motion": [{"segment": "start..slid", "tool": "hold", "params": {"blend": 1},
                                       "extra": 1}, {"segment": "slid..rest", "tool": "glide"}]}},
     "plan.motion[1].tool: expected one of the motion tools"),
])
def test_a_bad_argument_is_refused_naming_the_field_and_changes_nothing(tmp_project, tool, arguments, message):
    apply(tmp_project, calls()[:9])
    before = db_dump(tmp_project)
    audit = tmp_project.db.execute("SELECT count(*) FROM audit").fetchone()[0]
    with pytest.raises(ToolRefused) as e:
        ToolBox(tmp_project).call(tool, arguments)
    assert message in str(e.value)
    assert db_dump(tmp_project) == before
    assert tmp_project.db.execute("SELECT count(*) FROM audit").fetchone()[0] == audit


def test_plan_validation_names_the_motion_field_and_checks_params_against_the_tools_schema():
    plan = calls()[5]["arguments"]["plan"]
    plan["motion"][0].update(tool="interpolate", params={"rotation": "slerp"})
    assert validate_plan(plan) is plan
    plan["motion"][1].update(tool="hold", params={"blend": 2, "speed": 3})
    with pytest.raises(PlanError, match=r"plan\.motion\[1\]\.params: Additional properties are not allowed"):
        validate_plan(plan)
    plan["motion"][1] = {"segment": "slid..rest", "params": {"blend": 2}}
    with pytest.raises(PlanError, match=r"plan\.motion\[1\]\.params: parameters given but no tool named"):
        validate_plan(plan)


def test_every_accepted_call_is_one_audit_row_with_who_tool_and_arguments(tmp_project):
    items = calls()
    apply(tmp_project, items, actor="agent")
    rows = list(tmp_project.db.query("SELECT actor, target, detail FROM audit WHERE action = 'tool call' ORDER BY id"))
    details = [json.loads(r["detail"]) for r in rows]
    assert [(r["actor"], r["target"], d["tool"], d["arguments"]) for r, d in zip(rows, details)] == \
        [("agent", c["tool"], c["tool"], c["arguments"]) for c in items]
    assert {r.reviewer for r in list_reviews(tmp_project)} == {"agent"}     # reviews as whoever called
    assert [c.tool for c in history(tmp_project)] == [c["tool"] for c in items]


def test_segment_tool_is_one_undoable_edit_covered_by_the_film_hash(tmp_project):
    stack = CommandStack()
    apply(tmp_project, calls(), stack=stack)
    film = film_hash(tmp_project)
    plan = tmp_project.get_doc("plan")
    assert plan["motion"][1] == {"segment": "slid..rest", "tool": "hold", "params": {}}
    box = ToolBox(tmp_project, stack, actor="person")
    out = box.call("set_segment_tool", {"segment": "slid..rest", "tool": "hold", "params": {"blend": 4}})
    assert stack.undo_label == f"Undo {out.result['done']}" == "Undo slid..rest by hold"
    assert tmp_project.get_doc("plan")["motion"][1]["params"] == {"blend": 4}
    assert film_hash(tmp_project) != film          # the params are part of what film reports bind to
    stack.undo()
    assert tmp_project.get_doc("plan") == plan and film_hash(tmp_project) == film


def test_an_undone_call_leaves_the_history_and_a_redone_one_comes_back(tmp_project):
    stack = CommandStack()
    apply(tmp_project, calls()[:9], stack=stack)
    box = ToolBox(tmp_project, stack, actor="person")
    box.call("add_frame", {"name": "mark", "body": "crate_b", "position": [0, 0, 0.2]})
    box.call("set_state", {"state": "slid", "description": "crate_a slid a long way"})
    stack.undo()
    assert [c.tool for c in history(tmp_project)][-2:] == ["set_state", "add_frame"]
    assert "mark" in {f.name for f in load_scene(tmp_project).frames}
    stack.undo()
    assert [c.tool for c in history(tmp_project)] == [c["tool"] for c in calls()[:9]]
    stack.redo()
    last = history(tmp_project)[-1]
    assert last.tool == "add_frame" and last.arguments["name"] == "mark"


def test_approve_is_refused_until_the_checks_pass_on_this_version(tmp_project):
    apply(tmp_project, calls()[:9])
    with pytest.raises(ToolRefused, match="not approved: state slid failing: checks have not been run; "
                                          "run_verifiers first"):
        ToolBox(tmp_project).call("review_state", {"state": "slid", "verdict": "approve"})
    assert list_reviews(tmp_project) == []


def test_author_segment_is_refused_by_the_gate_and_bakes_nothing(tmp_project):
    items = calls()
    apply(tmp_project, items[:12])                          # verified, not yet reviewed
    before = fingerprint(tmp_project)
    with pytest.raises(ToolRefused, match="segment start..slid: motion is blocked .* start: unreviewed"):
        ToolBox(tmp_project).call("author_segment", {"segment": "start..slid"})
    assert fingerprint(tmp_project) == before and before["tracks"] == {}


def test_a_deleted_key_state_comes_back_on_undo_and_the_history_replays(tmp_path):
    import calls_scenes
    from studio.tools.box import ToolBox
    from studio.store.project import Project
    from studio.timeline.commands import CommandStack
    from studio.timeline.storyboard import get_state
    project = Project.create(tmp_path / "p")
    stack = CommandStack()
    box = ToolBox(project, stack, actor="person")
    for c in calls_scenes.calls()[:9]:
        box.call(c["tool"], c["arguments"])
    before = get_state(project, "slid")
    box.call("delete_state", {"state": "slid"})
    assert get_state(project, "slid") is None
    stack.undo()
    assert get_state(project, "slid").pose.to_dict() == before.pose.to_dict()
    with pytest.raises(Exception, match="delete_state|no state"):
        box.call("delete_state", {"state": "nowhere"})
