"""The offline repairer on the doorway film: a state broken three ways, repaired
through verified proposals a person approves or rejects."""
from __future__ import annotations

import shutil

import pytest

from agent_scripts import db_dump
from studio.repair.errors import RepairError
from studio.repair.offline import propose_offline
from studio.repair.proposals import approve, get_proposal, list_proposals, reject
from studio.checks.report import required_checks_pass
from studio.scene.io import load_scene
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.commands import CommandStack
from studio.timeline.storyboard import State, content_hash, get_state, put_state

WALL_HALF = 0.075


@pytest.fixture(scope="module")
def doorway_template(tmp_path_factory):
    from example_films import scene_only
    path = tmp_path_factory.mktemp("template") / "doorway"
    scene_only("doorway", path).close()          # the doorway scene, replayed from its calls file
    return path


@pytest.fixture
def broken(doorway_template, tmp_path):
    """The doorway project with state 'carry': the panel pushed 0.125 m into the wall at
    1 m height (off the doorway) and the left elbow bent 0.4 rad past its upper limit."""
    path = tmp_path / "doorway"
    shutil.copytree(doorway_template, path)
    project = Project.open(path)
    scene = load_scene(project)
    pose = Pose.rest(scene)
    pose.roots["panel"] = [-0.25, 1.5, 1.0, 1.0, 0.0, 0.0, 0.0]
    pose.joints["elbow_l"] = 0.4
    put_state(project, scene, State("carry", 1001, pose, "", "carrying the panel (broken)"))
    yield project
    project.close()


def by_check(proposals):
    return {p.check_name: p for p in proposals}


def test_offline_repairer_fixes_the_wall_the_elbow_and_then_the_float(broken):
    proposals, unsolved = propose_offline(broken, "carry")
    assert unsolved == []
    got = by_check(proposals)
    assert set(got) == {"NoPenetration", "JointLimits"}
    push, clamp = got["NoPenetration"], got["JointLimits"]
    for p in proposals:    # verified before shown: the target is gone, no new required failure
        assert p.verified["ok"] and p.verified["fixes_target"] and p.verified["new_required_failures"] == []
        assert get_proposal(broken, p.id).status == "proposed"
    # the panel moves straight back out of the wall (-x), far enough to clear its face
    (change,) = push.changes
    assert change["name"] == "panel" and change["from"][:3] == [-0.25, 1.5, 1.0]
    assert change["to"][1:3] == [1.5, 1.0]
    assert change["to"][0] + 0.3 < -WALL_HALF
    # the elbow is clamped to its limit (0.0) and the shoulder re-solved to keep the gripper
    assert clamp.changes[0] == {"kind": "joint", "name": "elbow_l", "from": 0.4, "to": pytest.approx(0.0, abs=1e-5)}
    assert len(clamp.changes) > 1
    # nothing has touched the state yet
    assert get_state(broken, "carry").pose.roots["panel"][0] == -0.25

    stack = CommandStack()
    approve(broken, push.id, stack)
    approve(broken, clamp.id, stack)
    state = get_state(broken, "carry")
    assert state.pose.joints["elbow_l"] == pytest.approx(0.0, abs=1e-5)
    assert state.pose.roots["panel"][0] == change["to"][0]
    # out of the wall, the panel now floats at 1 m: the next round proposes the drop
    proposals, unsolved = propose_offline(broken, "carry")
    assert [p.check_name for p in proposals] == ["Supported"] and unsolved == []
    drop = proposals[0]
    z_from, z_to = drop.changes[0]["from"][2], drop.changes[0]["to"][2]
    assert z_from == 1.0 and z_to == pytest.approx(0.01, abs=2e-3)     # onto the floor (top z = 0)
    approve(broken, drop.id, stack)
    from studio.checks.report import load_reports
    reports, checked = load_reports(broken, "state:carry")
    assert required_checks_pass(reports)
    assert {r.name: r.verdict for r in reports}["Supported"] == "pass"
    carry = get_state(broken, "carry")
    assert checked == content_hash(load_scene(broken), carry.pose, carry.frame)
    assert [p.status for p in list_proposals(broken)] == ["approved"] * 3
    # each approval is one undoable command
    stack.undo()
    assert get_state(broken, "carry").pose.roots["panel"][2] == 1.0
    assert get_proposal(broken, drop.id).status == "proposed"


def test_rejecting_a_proposal_changes_nothing_but_is_logged(broken):
    proposals, _ = propose_offline(broken, "carry")
    target = by_check(proposals)["JointLimits"]
    before = db_dump(broken, skip=("audit", "repairs"))
    reject(broken, target.id, "keep the elbow; move the shoulder instead")
    assert db_dump(broken, skip=("audit", "repairs")) == before
    p = get_proposal(broken, target.id)
    assert (p.status, p.note) == ("rejected", "keep the elbow; move the shoulder instead")
    last = broken.audit_log(1)[0]
    assert (last["action"], last["target"]) == ("reject repair", f"repair:{target.id}")
    assert "move the shoulder" in last["detail"]
    with pytest.raises(RepairError, match="is rejected; only a proposed repair can be approved"):
        approve(broken, target.id)
    with pytest.raises(RepairError, match="say why"):
        reject(broken, by_check(proposals)["NoPenetration"].id, "  ")


def test_a_rejection_is_one_undoable_command(broken):
    proposals, _ = propose_offline(broken, "carry")
    target = by_check(proposals)["JointLimits"]
    stack = CommandStack()
    reject(broken, target.id, "the elbow is fine", stack=stack)
    assert stack.undo_label == f"Undo reject repair {target.id} ({target.summary})"
    assert get_proposal(broken, target.id).status == "rejected"
    stack.undo()
    p = get_proposal(broken, target.id)
    assert (p.status, p.note) == ("proposed", "")
    assert broken.audit_log(1)[0]["action"] == "undo reject repair"
    stack.redo()
    assert get_proposal(broken, target.id).status == "rejected"


def test_a_stale_proposal_is_refused_on_approval(broken):
    proposals, _ = propose_offline(broken, "carry")
    push = by_check(proposals)["NoPenetration"]
    scene = load_scene(broken)
    st = get_state(broken, "carry")
    st.pose.roots["panel"] = [-0.25, 1.5, 1.0, 0.0, 0.0, 0.0, 1.0]   # someone turned the panel since
    st.pose.roots["panel"][0] = 0.3
    put_state(broken, scene, st)
    before = db_dump(broken, skip=("audit",))
    with pytest.raises(RepairError, match="no longer holds on the state as it is now"):
        approve(broken, push.id)
    assert db_dump(broken, skip=("audit",)) == before


def test_a_floating_body_the_plan_has_grasped_is_attached_to_its_carrier(tmp_project):
    from agent_scenes import make_arm_project
    from agent_scripts import good_plan
    from studio.timeline.motion.ik import frame_pose
    scene = make_arm_project(tmp_project)
    plan = good_plan()
    plan["objects"] = [{"name": "panel", "description": ""}, {"name": "gripper", "description": ""}]
    plan["events"] = [{"id": "grab", "kind": "grasp", "subjects": ["gripper", "panel"], "window": [1001, 1001],
                       "params": {}, "after": []}]
    tmp_project.put_doc("plan", plan)
    pose = Pose.rest(scene)
    pose.joints.update(shoulder=-0.6, elbow=1.2)
    grip = frame_pose(scene, pose, "gripper")[:3, 3]
    pose.roots["panel"] = [grip[0], grip[1], grip[2] - 0.15, 1.0, 0.0, 0.0, 0.0]   # 14 cm below the grip
    put_state(tmp_project, scene, State("held", 1001, pose, "wide", "the arm holds the panel"))
    proposals, unsolved = propose_offline(tmp_project, "held")
    (p,) = [p for p in proposals if p.check_name == "Supported"]
    assert p.summary.startswith("attach panel to its carrier gripper") and p.verified["ok"]
    (change,) = p.changes
    # moved straight up under the grip, its top face 2 cm below the gripper
    assert change["to"][:2] == pytest.approx(list(grip[:2]), abs=1e-6)
    assert change["to"][2] + 0.01 == pytest.approx(grip[2] - 0.02, abs=1e-6)
    assert p.verified["after"]["Supported"] == "pass" and p.verified["before"]["Supported"] == "fail"


def test_a_ball_joint_past_its_cone_is_scaled_back_along_its_own_axis(tmp_project):
    import numpy as np

    from studio.scene.io import save_scene
    from studio.scene.ir import Scene
    scene = Scene.from_dict({
        "name": "ball",
        "bodies": [{"name": "floor", "kind": "ground", "geometry": {"size": [2, 2, 0.1],
                                                                     "offset": {"position": [0, 0, -0.05]}}},
                   {"name": "post", "geometry": {"size": [0.1, 0.1, 0.5], "offset": {"position": [0, 0, 0.25]}}},
                   {"name": "head", "kind": "link", "geometry": {"size": [0.1, 0.1, 0.1],
                                                                  "offset": {"position": [0, 0, 0.1]}}}],
        "joints": [{"name": "neck", "type": "ball", "parent": "post", "child": "head",
                    "origin": {"position": [0, 0, 0.55]}, "upper": 0.5}],
        "rest": {"floor": [0, 0, 0, 1, 0, 0, 0], "post": [0, 0, 0, 1, 0, 0, 0]}})
    save_scene(tmp_project, scene)
    pose = Pose.rest(scene)
    pose.joints["neck"] = [0.0, 0.6, 0.8]                      # 1.0 rad, past the 0.5 cone
    put_state(tmp_project, scene, State("nod", 1001, pose))
    (p,), unsolved = propose_offline(tmp_project, "nod")
    assert unsolved == [] and p.check_name == "JointLimits" and p.verified["ok"]
    to = np.asarray(p.changes[0]["to"])
    assert np.linalg.norm(to) == pytest.approx(0.5, abs=1e-5)
    assert to / np.linalg.norm(to) == pytest.approx([0.0, 0.6, 0.8])
    assert "1.0000 rad (ball)" in p.summary
