"""The repair's two-hand grasp key: a robot passing side-on beside a table is keyed square before
the box on it, a hand on each side of the box, and that key passes its own one-frame checks."""
from __future__ import annotations

import math

import numpy as np
import trimesh

from motion_films import REVIEWER, plan
from motion_scenes import robot_scene, robot_standing

from studio.repair.film_failures import failing_runs
from studio.repair.motion_candidates import key_candidates
from studio.repair.motion_trial import FilmTrial
from studio.repair.proposals import apply_changes
from studio.scene.io import save_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.store.reports import failing_required
from studio.timeline.motion.ik import frame_pose
from studio.tools.box import ToolBox
from studio.tools.verify import check_pose

A, B = 1001, 1025
BOX = [0.75, 0.0, 0.74, 1, 0, 0, 0]
TOL = 0.03                 # a grasp's default tolerance


def table_film(path) -> Project:
    """The robot is carried side-on (facing +y, interpolated) past a table whose box sits at its near
    edge, 0.55 m to the robot's right; the plan wants both its hands on the box meanwhile."""
    project = Project.create(path, name="table", fps=24, frame_start=A)
    d = robot_scene().to_dict()
    d["bodies"] += [{"name": "table", "kind": "static", "flags": ["static"], "mass": 0,
                     "geometry": {"size": [0.5, 0.8, 0.62], "offset": {"position": [0, 0, 0.31]}}},
                    {"name": "box", "kind": "rigid", "mass": 2, "geometry": {"size": [0.26, 0.334, 0.24]}}]
    d["rest"].update(table=[0.86, 0, 0, 1, 0, 0, 0], box=BOX)     # the box at its near edge
    d["cameras"] = [{"name": "cam", "position": [3, -3, 2], "target": [0.5, 0, 0.6], "resolution": [160, 96]}]
    scene = Scene.from_dict(d)
    save_scene(project, scene)
    box = ToolBox(project, actor=REVIEWER)
    events = [{"id": f"grasp_{s}", "kind": "grasp", "subjects": [f"gripper_{s}", "box"], "window": [1009, 1017]}
              for s in "lr"]
    box.call("set_plan", {"plan": plan([("here", A), ("there", B)], ["pelvis", "box"], events, [
        {"segment": "here..there", "tool": "interpolate", "params": {}}])})
    for sid, frame, y in (("here", A, -0.6), ("there", B, 0.6)):
        pose = robot_standing(scene, 0.2, y, yaw=math.pi / 2)
        box.call("set_state", {"state": sid, "frame": frame, "shot": "wide", "description": sid,
                               "roots": {"pelvis": list(pose.roots["pelvis"]), "box": BOX},
                               "joints": dict(pose.joints)})
        box.call("run_verifiers", {"state": sid})
        box.call("review_state", {"state": sid, "verdict": "approve", "note": "as planned"})
    box.call("author_segment", {"segment": "here..there"})
    return project


def _off_box(scene: Scene, project: Project, pose: Pose, frame: str) -> float:
    world = pose_world(scene, pose)
    mesh = body_mesh(scene.body("box"), project.path).copy()
    mesh.apply_transform(world["box"])
    return float(trimesh.proximity.closest_point(mesh, frame_pose(scene, pose, frame)[:3, 3][None])[1][0])


def test_a_two_hand_grasp_is_keyed_square_before_the_box_where_it_rests(tmp_path):
    project = table_film(tmp_path / "table")
    trial = FilmTrial(project)
    run = next(r for r in failing_runs(trial.base_reports, trial.segments)
               if r.check == "EventsSatisfied" and r.evidence.get("event") == "grasp_l")
    keys = []
    for _, summary, changes in key_candidates(trial, run):
        key = next(c for c in changes if c["kind"] == "insert_state")
        pose = Pose.from_dict(key["pose"]).completed(trial.scene)
        if list(pose.roots["box"]) == BOX:             # the box held where it sits on the table
            keys.append((summary, key, pose))
    assert keys, "no key state holds the box where it rests"
    summary, key, pose = keys[0]
    assert "square before box" in summary
    for hand in ("gripper_l", "gripper_r"):
        assert _off_box(trial.scene, project, pose, hand) <= TOL
    left, right = (frame_pose(trial.scene, pose, f"gripper_{s}")[:3, 3] for s in "lr")
    assert abs(left[1] - right[1]) > 0.3                # on the box's two sides across y, 0.334 m apart
    yaw = 2 * math.atan2(pose.roots["pelvis"][6], pose.roots["pelvis"][3])
    assert abs(yaw) < 0.05                             # turned from side-on to face the box (+x)
    assert np.asarray(pose.roots["pelvis"])[0] < 0.86 - 0.25    # before the table, not in it
    assert not failing_required(check_pose(project, trial.scene, pose, key["frame"], key["state"]))
    for name in ("table", "floor"):
        assert list(pose.roots.get(name, trial.scene.rest.get(name))) == list(trial.scene.rest[name])
