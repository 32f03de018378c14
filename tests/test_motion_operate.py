"""Operate: a hand drives a part on its joint by the handle it holds, through the tool layer, and the
film passes because the hand really stays on the handle (measured here by forward kinematics of the
baked tracks, not taken from the tool's word). Fixed joints anywhere in a chain bake; bad parameters
are refused naming the field, and change nothing."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hold_films import (ARM_R, CHAIN, FLANGED, distances, door_film, drawer_film, holding, open_by_hand,
                        robot_and_chest)
from motion_scenes import ROBOT_LEGS, segment

from studio.checks.report import required_checks_pass
from studio.checks.run import verify_film
from studio.cli import main
from studio.scene.io import load_scene
from studio.timeline.film import film_hash, list_segments, load_film_tracks
from studio.timeline.motion import MotionError, motion_tool
from studio.tools.box import ToolBox
from studio.tools.errors import ToolRefused


def _reports(project):
    return {r.name: r for r in verify_film(project)}


def test_a_hinged_door_opened_by_a_hand_on_its_knob_passes_and_the_hand_stays_on_the_handle(tmp_path):
    project = door_film(tmp_path / "door")
    out, _tracks, gap = open_by_hand(project, "closed..open", "gripper", 1.4)
    assert gap.max() < 0.005, gap.max()                        # within 5 mm at every frame
    said = float(out.result["notes"][-1].split("within ")[1].split(" mm")[0]) / 1000
    assert said == pytest.approx(gap.max(), abs=1e-4)          # the tool's figure is its worst, not its last
    reports = _reports(project)
    assert required_checks_pass(list(reports.values())), {n: r.evidence[:2] for n, r in reports.items()}
    events = reports["EventsSatisfied"]
    assert events.verdict == "pass" and events.metrics["holds"] == 1
    assert max(events.metrics["hold_drift_m"].values()) < 0.005
    assert reports["NoPenetration"].verdict == "pass"


def test_a_drawer_pulled_on_its_slide_passes_and_the_hand_stays_on_the_pull(tmp_path):
    project = drawer_film(tmp_path / "drawer")
    ToolBox(project, actor="Ada").call("author_segment", {"segment": "shut..pulled"})
    slide = load_film_tracks(project).joints["slide"]
    assert slide[0] == 0.0 and slide[-1] == pytest.approx(0.25)
    assert distances(project, "gripper", "pull").max() < 0.005
    reports = _reports(project)
    assert required_checks_pass(list(reports.values())), {n: r.evidence[:2] for n, r in reports.items()}
    assert reports["EventsSatisfied"].metrics["holds"] == 1


def test_a_bake_through_a_fixed_joint_runs_as_a_job_and_ik_reach_follows_the_moving_knob(tmp_path, capsys):
    # the knob hangs on the door by a fixed joint, the hand on the forearm by another, named in the chain
    params = {"effectors": [{"frame": "gripper", "joints": FLANGED, "target": "handle"}]}
    project = door_film(tmp_path / "reach", tool="ik_reach", params=params, flange=True)
    path = project.path
    project.close()
    assert main(["bake", str(path)]) == 0                      # the bake job, its own process
    out = capsys.readouterr().out
    assert "baked closed..open with ik_reach" in out and "KeyError" not in out
    from studio.store.project import Project
    with Project.open(path) as p:
        gap = distances(p, "gripper", "handle")
        assert [r["segment"] for r in list_segments(p)] == ["closed..open"]
        reports = _reports(p)
    # the hand starts on the knob and the reach follows it as the door swings: on it at every frame
    assert gap.max() < 0.001, gap.max()
    assert required_checks_pass(list(reports.values()))
    note = next(line for line in out.splitlines() if "ik_reach closed..open" in line)
    assert "at every frame" in note


def test_operate_through_a_flanged_hand_solves_the_moving_joints_only(tmp_path):
    project = door_film(tmp_path / "flanged", flange=True)
    ToolBox(project, actor="Ada").call("author_segment", {"segment": "closed..open"})
    tracks = load_film_tracks(project)
    assert "flange" not in tracks.joints and "knob_mount" not in tracks.joints
    assert distances(project, "gripper", "handle").max() < 0.005


def test_bad_parts_and_holds_are_refused_naming_the_field_and_nothing_changes(tmp_path):
    project = door_film(tmp_path / "bad")
    box = ToolBox(project, actor="Ada")
    plan_before = json.dumps(project.get_doc("plan"), sort_keys=True)
    rows = project.db.execute("SELECT count(*) FROM audit").fetchone()[0]
    effs = [{"frame": "gripper", "joints": CHAIN}]
    cases = [
        ({"part": "knob", "handle": "handle", "effectors": effs}, "operate",
         "set_segment_tool.params.part: 'knob' hangs on 'knob_mount', a fixed joint, which cannot move"),
        ({"part": "cabinet", "handle": "handle", "effectors": effs}, "operate",
         "set_segment_tool.params.part: 'cabinet' hangs on no joint"),
        ({"part": "door", "handle": "gripper", "effectors": effs}, "operate",
         "set_segment_tool.params.handle: 'gripper' is on 'fore', which the joint 'hinge' of 'door' does not move"),
        ({"part": "door", "handle": "handle", "effectors": [{"frame": "gripper", "joints": ["yaw", "hinge"]}]},
         "operate", "set_segment_tool.params.effectors[0].joints: 'hinge' is the part's own joint"),
        ({"body": "ghost", "on": "gripper", "effectors": []}, "carry",
         "set_segment_tool.params.body: 'ghost' is no body of the scene"),
        ({"body": "door", "effectors": effs}, "grasp",
         "set_segment_tool.params.body: 'door' hangs on a joint"),
    ]
    for params, tool, said in cases:
        with pytest.raises(ToolRefused) as e:
            box.call("set_segment_tool", {"segment": "closed..open", "tool": tool, "params": params})
        assert str(e.value).startswith(said), str(e.value)
        assert "\n" not in str(e.value)
    with pytest.raises(ToolRefused, match=r"^author_segment.params.body: 'ghost' is no body of the scene"):
        box.call("author_segment", {"segment": "closed..open", "tool": "place",
                                    "params": {"body": "ghost", "effectors": effs}})
    plan = project.get_doc("plan")
    plan["motion"][0]["params"] = {"body": "ghost", "on": "gripper", "effectors": []}
    plan["motion"][0]["tool"] = "carry"
    with pytest.raises(ToolRefused, match=r"plan.motion\[0\].params.body: 'ghost' is no body of the scene"):
        box.call("set_plan", {"plan": plan})
    assert json.dumps(project.get_doc("plan"), sort_keys=True) == plan_before
    assert project.db.execute("SELECT count(*) FROM audit").fetchone()[0] == rows
    assert list_segments(project) == []


def test_studio_bake_refuses_an_operate_on_a_part_whose_joint_became_fixed(tmp_path, capsys):
    project = door_film(tmp_path / "stuck")
    box = ToolBox(project, actor="Ada")
    box.call("author_segment", {"segment": "closed..open"})
    # the person makes the door's hinge fixed after the plan was written
    box.call("create_body", {"name": "door", "kind": "link", "size": [0.02, 0.58, 0.76], "offset": [0, -0.29, 0],
                             "parent": "cabinet", "joint": {"name": "hinge", "type": "fixed",
                                                            "origin": [-0.21, 0.3, 0.0]}})
    before = (film_hash(project), list_segments(project))
    path = project.path
    project.close()
    capsys.readouterr()
    assert main(["bake", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "plan segment closed..open params.part: 'door' hangs on 'hinge', a fixed joint" in err[0]
    from studio.store.project import Project
    with Project.open(path) as p:
        assert p.db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0      # nothing queued
        assert (film_hash(p), list_segments(p)) == before


def test_operate_refuses_a_hand_that_is_not_on_its_handle_in_a_state(tmp_path):
    project = door_film(tmp_path / "apart")
    box = ToolBox(project, actor="Ada")
    box.call("set_joint", {"state": "open", "joint": "elbow", "value": 0.2})
    box.call("run_verifiers", {"state": "open"})
    box.call("review_state", {"state": "open", "verdict": "approve", "note": "moved the elbow"})
    with pytest.raises(ToolRefused, match=r"operate closed\.\.open: in state 'open' effector 'gripper' is "
                                          r"\d+\.\d mm from its handle 'handle' \(more than 10\.0 mm\)"):
        box.call("author_segment", {"segment": "closed..open"})
    assert list_segments(project) == []


@pytest.mark.parametrize("legs", ["walk", "legs"])
def test_a_robot_pulls_a_drawer_walking_back_or_with_its_feet_planted(tmp_path, legs):
    scene = robot_and_chest()
    if legs == "walk":        # it steps back 25 cm as the drawer comes 25 cm out
        pa, pb = holding(scene, 0.0, 0.0), holding(scene, -0.25, 0.25)
        extra = {"walk": {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.15}}
    else:
        pa, pb = holding(scene, 0.0, 0.0), holding(scene, 0.0, 0.15)
        extra = {"legs": {"root": "pelvis", "legs": ROBOT_LEGS}}
    seg = segment(scene, pa, pb, 60, tmp_path)
    out = motion_tool("operate").author(seg, {"part": "drawer", "handle": "pull",
                                              "effectors": [{"frame": "gripper_r", "joints": ARM_R}], **extra})
    t = out.tracks
    assert t.joints["slide"][-1] == pytest.approx(pb.joints["slide"])
    from studio.scene.kinematics import frame_world, tracks_world
    full = dict(t.roots)
    for r in scene.roots:
        full.setdefault(r, np.tile(pa.roots[r], (t.n_frames, 1)))
    joints = {j: t.joints.get(j, np.full(t.n_frames, float(pa.joints[j]))) for j in pa.joints}
    from studio.scene.pose import Tracks
    w = tracks_world(scene, Tracks(t.frame_start, full, joints))
    gap = np.linalg.norm(frame_world(scene, w, "gripper_r")[:, :3, 3] - frame_world(scene, w, "pull")[:, :3, 3], axis=1)
    assert gap.max() < 0.002, gap.max()
    sole = frame_world(scene, w, "sole_r")[:, :3, 3]
    if legs == "legs":
        assert np.abs(sole - sole[0]).max() < 0.005              # the planted foot stays put
    else:
        assert sole[-1, 0] - sole[0, 0] < -0.2                   # it stepped back
    assert out.attachments == [{"frame": "gripper_r", "body": "drawer", "grip": "pull", "start": 1001,
                                "end": 1060, "tolerance": 0.01}]


def test_operate_is_in_the_catalogue_with_its_schema(capsys):
    assert main(["tools", "--json"]) == 0
    motion = {m["name"]: m for m in json.loads(capsys.readouterr().out)["motion_tools"]}
    schema = motion["operate"]["parameters"]
    assert schema["required"] == ["part", "effectors"]
    assert {"part", "handle", "effectors", "ease", "orient", "tolerance", "legs", "walk"} <= set(schema["properties"])


def test_operate_refuses_a_handle_path_out_of_reach_naming_the_frame(tmp_path):
    project = door_film(tmp_path / "far")
    scene = load_scene(project)
    from studio.timeline.author import segment_of
    seg = segment_of(project, "closed..open", scene, project.get_doc("plan"))
    seg.b.pose.joints["hinge"] = 1.4
    with pytest.raises(MotionError, match=r"effector gripper at frame \d+ is \d+\.\d mm off its handle"):
        motion_tool("operate").author(seg, {"part": "door", "handle": "handle", "tolerance": 0.01,
                                            "effectors": [{"frame": "gripper", "joints": CHAIN,
                                                           "limits": {"yaw": [-1.2, None]}}]})
