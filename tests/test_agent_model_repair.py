"""Repairs the model proposes: verified before they are shown, rejected notes fed back."""
from __future__ import annotations

import json

import pytest

from agent_scenes import make_arm_project
from agent_scripts import db_dump
from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.model_repair import propose_with_model
from studio.repair.proposals import approve, list_proposals, reject
from studio.agent.steps import list_steps
from studio.tools.box import ToolBox
from studio.scene.io import load_scene
from studio.scene.pose import Pose
from studio.timeline.storyboard import State, get_state, put_state


@pytest.fixture
def bent(tmp_project):
    scene = make_arm_project(tmp_project)
    pose = Pose.rest(scene)
    pose.joints["elbow"] = 2.9
    put_state(tmp_project, scene, State("reach", 1001, pose, "", "reaching"))
    return tmp_project


def reply(changes, summary="repair"):
    return {"content": json.dumps({"summary": summary, "changes": changes})}


def test_model_repair_is_verified_stored_and_rejection_notes_go_back(bent):
    script = ["not json at all",
              reply([{"kind": "joint", "name": "elbow", "to": 2.4}], "clamp the elbow at its limit")]
    with ChatServer([{"content": s} if isinstance(s, str) else s for s in script]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        made, unsolved = propose_with_model(bent, client, "reach")
        assert unsolved == [] and len(made) == 1
        p = made[0]
        assert (p.source, p.check_name, p.summary) == ("model", "JointLimits", "clamp the elbow at its limit")
        assert p.changes == [{"kind": "joint", "name": "elbow", "from": 2.9, "to": 2.4}]
        assert p.verified["ok"] and p.verified["after"]["JointLimits"] == "pass"
        first = chat.requests[0]["body"]["messages"][1]["content"]
        assert '"joint": "elbow"' in first and '"elbow": [0.0, 2.4]' in first
        assert "not valid JSON" in chat.requests[1]["body"]["messages"][-1]["content"]
        assert get_state(bent, "reach").pose.joints["elbow"] == 2.9       # shown, not applied

        reject(bent, p.id, "keep the reach; turn the shoulder instead")
        chat.add(reply([{"kind": "joint", "name": "elbow", "to": 2.4}, {"kind": "joint", "name": "shoulder", "to": -0.4}],
                       "clamp the elbow and lower the shoulder"))
        made, _ = propose_with_model(bent, client, "reach")
        context = chat.requests[-1]["body"]["messages"][1]["content"]
        assert "clamp the elbow at its limit: keep the reach; turn the shoulder instead" in context
    approve(bent, made[0].id)
    pose = get_state(bent, "reach").pose
    assert (pose.joints["elbow"], pose.joints["shoulder"]) == (2.4, -0.4)
    assert [p.status for p in list_proposals(bent)] == ["rejected", "approved"]
    assert [s["action"] for s in list_steps(bent)] == ["propose repairs", "propose repairs"]
    assert list_steps(bent)[0]["tokens"] > 0


def test_a_model_repair_that_does_not_hold_is_never_shown(bent):
    script = [reply([{"kind": "joint", "name": "elbow", "to": 9.0}]),            # out of range
              reply([{"kind": "joint", "name": "shoulder", "to": 0.5}])]        # fixes nothing
    with ChatServer(script) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=5, max_retries=0)
        before = db_dump(bent, skip=("audit", "agent_steps"))
        made, unsolved = propose_with_model(bent, client, "reach")
    assert made == [] and len(unsolved) == 1
    assert "verification refused it: fixes the failure False" in unsolved[0]
    assert "outside the limits of elbow" in chat.requests[1]["body"]["messages"][-1]["content"]
    assert db_dump(bent, skip=("audit", "agent_steps")) == before


def test_tools_build_a_part_in_the_sandbox_and_queue_a_still(bent):
    box = ToolBox(bent)
    stl = ("solid t\n" + "".join(
        f"facet normal 0 0 0\nouter loop\nvertex {a}\nvertex {b}\nvertex {c}\nendloop\nendfacet\n"
        for a, b, c in [("0 0 0", "0.1 0 0", "0 0.1 0"), ("0 0 0", "0 0.1 0", "0 0 0.1"),
                        ("0 0 0", "0 0 0.1", "0.1 0 0"), ("0.1 0 0", "0 0 0.1", "0 0.1 0")]) + "endsolid t\n")
    out = box.call("build_part_code", json.dumps({"body": "wedge", "code": f"open('part.stl', 'w').write({stl!r})"}))
    body = load_scene(bent).body("wedge")
    assert body.geometry.source == "mesh" and body.geometry.path.startswith("assets/")
    assert (bent.path / body.geometry.path).is_file() and out.result["bodies"] == 7
    from studio.scene.meshes import body_mesh
    assert body_mesh(body, bent.path).extents == pytest.approx([0.1, 0.1, 0.1])
    # the same file, now inside the project, may be named as a mesh path
    box.call("create_body", json.dumps({"name": "wedge2", "mesh": body.geometry.path}))
    assert load_scene(bent).body("wedge2").geometry.path == body.geometry.path
    box.stack.undo()
    assert "wedge2" not in load_scene(bent).body_names
    queued = box.call("request_render", json.dumps({"state": "reach"}))
    from studio.jobs.queue import get_job
    job = get_job(bent, queued.result["queued"])
    assert (job.kind, job.state) == ("still", "queued") and [s["id"] for s in job.spec["states"]] == ["reach"]
