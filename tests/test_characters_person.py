"""The shipped skinned person moved by the motion tools, through the tool layer: it walks 2 m on the
legs found from its skeleton with planted feet (measured here from the tracks' sole frames), its
right hand opens a door on a revolute hinge by the knob with `operate` (the hand on the handle at
every baked frame, by forward kinematics of the stored tracks), and the film passes the required
checks, between frames included. Between frames a skin is swept by its deformed vertices: a still
crouch does not sink its rest-pose feet into the floor, and a person carried through a thin board
from one frame to the next is caught although both frames pass."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hold_films import approve, open_by_hand
from test_characters_motion import planted_slide, sole_tracks

from studio.checks.footage import Footage
from studio.checks.report import required_checks_pass
from studio.checks.run import verify_film
from studio.checks.sweep import sweep
from studio.scene.io import load_scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7, quat_mul
from studio.store.project import Project
from studio.timeline.bake import complete, pin
from studio.timeline.motion import Segment, motion_tool
from studio.timeline.motion.ik import Goal, solve_ik
from studio.timeline.motion.legs import expand_characters
from studio.timeline.motion.walk import legs_of, place_flat, sole_placements
from studio.timeline.storyboard import State
from studio.tools.box import ToolBox

A = 1001
HAND = "anna-hand_R-grip"


def new_hall(path) -> Project:
    project = Project.create(path, name="hall", fps=24, frame_start=A)
    box = ToolBox(project, actor="Ada")
    box.call("import_character", {"name": "anna", "character": "person"})
    box.call("create_body", {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
                             "size": [8, 8, 0.1], "offset": [1, 0, -0.05]})
    box.call("add_camera", {"name": "side_cam", "position": [1.0, -4.0, 1.2], "target": [1.0, 0, 0.9]})
    return project


def stand(scene, x: float, y: float, crouch: float = 0.03, joints: dict | None = None) -> Pose:
    """Standing at (x, y) facing +x, hips `crouch` lower than at rest, soles where they are at rest
    (moved with the hips), arms down beside the thighs."""
    params = expand_characters(scene, {"character": "anna"})
    legs = legs_of(scene, params)
    pose = Pose.rest(scene)
    feet = sole_placements(scene, pose, legs)
    root = list(pose.roots["anna-spine"])
    root[0], root[1], root[2] = x, y, root[2] - crouch
    pose.roots["anna-spine"] = root
    pose.joints.update(joints or {})
    for leg in legs:
        for name in leg.joints:
            j = scene.joint(name)
            pose.joints[name] = 0.1 * (j.upper if abs(j.upper) > abs(j.lower) else j.lower)
        at = feet[leg.name] + [x, y, 0, 0]
        pose, _ = solve_ik(scene, pose, leg.joints, [Goal(leg.sole, at[:3])], 200)
        pose, err = place_flat(scene, pose, {leg.name: (leg.joints, leg.sole)}, {leg.name: at}, 200)
        assert err < 1e-3, (leg.name, err)
    arms = {h["frame"]: h["joints"] for h in scene.character("anna").hands}
    for side, hand in ((1, "anna-hand_L-grip"), (-1, HAND)):
        pose, _ = solve_ik(scene, pose, arms[hand], [Goal(hand, np.array([x + 0.02, y + side * 0.24, 0.82]))], 300)
    return pose


def frame_at(scene, pose, name: str) -> np.ndarray:
    f = scene.frame(name)
    return (pose_world(scene, pose)[f.body] @ from_7(np.asarray(f.local.as_list())))[:3, 3]


def test_the_person_walks_2_m_on_the_legs_found_from_its_skeleton_with_planted_feet(tmp_path):
    project = new_hall(tmp_path / "walk")
    scene = load_scene(project)
    params = expand_characters(scene, {"character": "anna", "step_length": 0.3, "sway": 0.8})
    assert [leg["sole"] for leg in params["legs"]] == ["anna-foot_L-sole", "anna-foot_R-sole"]
    a, b = stand(scene, 0.0, 0.0), stand(scene, 2.0, 0.0)
    seg = Segment("a..b", scene, State("a", A, a), State("b", A + 143, b), {}, 24, project.path)
    out = motion_tool("walk").author(seg, params)
    full = complete(scene, out.tracks, a.completed(scene), b.completed(scene), A, A + 143)
    tracks, residual = pin(full, a.completed(scene), b.completed(scene))
    assert residual < 0.01
    soles = sole_tracks(scene, tracks, ["anna-foot_L-sole", "anna-foot_R-sole"])
    start = sole_tracks(scene, Tracks.from_poses(A, [a]), list(soles))
    for sole, s in soles.items():
        floor = float(start[sole][0, 2]) + 0.005
        assert s[-1, 0] - s[0, 0] == pytest.approx(2.0, abs=1e-3), sole
        assert (s[:, 2] > floor + 0.01).any(), sole                    # it steps
        assert (s[:, 2] <= floor).sum() >= len(s) // 3, sole
        assert planted_slide(s, floor) <= 0.005, sole                  # planted feet within 5 mm
    film = Footage.build(scene, scene_meshes(scene, project.path), tracks)
    evidence, metrics = sweep(film)
    assert evidence == [] and metrics["unresolved"] == []             # the skin's feet stay out of the floor


def door_hall(path, opened: float = 0.4) -> Project:
    """Anna at a door in a wall frame: the door hangs on `hinge` (revolute about z, 0..1.7 rad) on
    the frame's +y post, a knob fixed to it, the `handle` frame on the knob's face; her right hand
    holds the knob in 'closed' (hinge 0) and, leaning in, in 'pushed' (hinge `opened`)."""
    project = new_hall(path)
    box = ToolBox(project, actor="Ada")
    box.call("create_body", {"name": "post", "kind": "static", "size": [0.12, 0.1, 2.1],
                             "rest": [2.0, 0.54, 1.05, 1, 0, 0, 0]})
    box.call("create_body", {"name": "door", "kind": "link", "size": [0.04, 0.96, 2.06], "mass": 20.0,
                             "offset": [0.0, -0.48, 1.04], "parent": "post",
                             "joint": {"name": "hinge", "type": "revolute", "axis": [0, 0, 1],
                                       "origin": [0.0, -0.055, -1.05], "lower": 0.0, "upper": 1.7}})
    box.call("create_body", {"name": "knob", "kind": "link", "size": [0.07, 0.03, 0.03], "mass": 0.2,
                             "offset": [-0.035, 0, 0], "parent": "door",
                             "joint": {"name": "knob_mount", "type": "fixed", "origin": [-0.02, -0.86, 1.02]}})
    box.call("add_frame", {"name": "handle", "body": "knob", "position": [-0.055, 0, 0]})
    box.call("allow_overlap", {"a": "anna-skin", "b": "knob", "reason": "the hand closes round the knob"})
    scene = load_scene(project)
    arm = next(h["joints"] for h in scene.character("anna").hands if h["frame"] == HAND)
    lean = ["anna-spine_001-x", "anna-spine_002-x", "anna-spine_003-x"]
    end = A + 35
    box.call("set_plan", {"plan": {
        "prompt": "a person pushes a door open", "scene_brief": "", "motion_brief": "",
        "shots": [{"id": "wide", "camera": "side_cam", "start": A, "end": end}],
        "states": [{"id": s, "frame": f, "shot": "wide", "description": s, "objects": ["anna", "door"]}
                   for s, f in (("closed", A), ("pushed", end))],
        "objects": [{"name": "anna", "description": "a person"}, {"name": "door", "description": "a door"}],
        "events": [], "motion": [{"segment": "closed..pushed", "tool": "operate",
                                  "params": {"part": "door", "handle": "handle",
                                             "effectors": [{"frame": HAND, "joints": lean + arm}],
                                             "legs": {"character": "anna"}}}]}})
    for state, frame, hinge in (("closed", A, 0.0), ("pushed", end, opened)):
        pose = stand(scene, 1.72, -0.2, joints={"hinge": hinge})
        pose, err = solve_ik(scene, pose, lean + arm, [Goal(HAND, frame_at(scene, pose, "handle"))], 400)
        assert err < 1e-3
        pose = pose.completed(scene)
        box.call("set_state", {"state": state, "frame": frame, "shot": "wide", "description": state,
                               "roots": {k: list(map(float, v)) for k, v in pose.roots.items() if k == "anna-spine"},
                               "joints": {k: float(v) for k, v in pose.joints.items()}})
        approve(box, state)
    return project


def test_the_persons_hand_opens_a_hinged_door_by_its_knob_and_stays_on_it_at_every_frame(tmp_path):
    project = door_hall(tmp_path / "door")
    _out, tracks, gap = open_by_hand(project, "closed..pushed", HAND, 0.4)
    assert gap.max() < 0.005, gap.max()                   # the hand on the knob within 5 mm at every frame
    soles = sole_tracks(load_scene(project), tracks, ["anna-foot_L-sole", "anna-foot_R-sole"])
    assert max(float(np.linalg.norm(s - s[0], axis=1).max()) for s in soles.values()) < 0.005   # feet planted
    reports = {r.name: r for r in verify_film(project)}
    assert required_checks_pass(list(reports.values())), {n: r.evidence[:2] for n, r in reports.items()}
    assert reports["EventsSatisfied"].metrics["holds"] == 1
    assert max(reports["EventsSatisfied"].metrics["hold_drift_m"].values()) < 0.005
    assert reports["NoPenetration"].metrics["frame_pairs_with_penetration"] == 0


def test_a_person_moved_through_a_thin_board_between_two_frames_fails_though_both_frames_pass(tmp_path):
    project = new_hall(tmp_path / "board")
    box = ToolBox(project, actor="Ada")
    box.call("create_body", {"name": "board", "kind": "static", "size": [0.02, 0.1, 0.3],
                             "rest": [0.3, 0.0, 1.2, 1, 0, 0, 0]})
    scene = load_scene(project)
    # standing before the 2 cm board at chest height, then 60 cm on, past it: one frame apart
    tracks = Tracks.from_poses(A, [stand(scene, x, 0.0).completed(scene) for x in (0.0, 0.6)])
    film = Footage.build(scene, scene_meshes(scene, project.path), tracks)
    board = film.pair_index("anna-skin", "board")
    assert board is None or film.gap[:, board[0]].min() > 0.0          # both frames pass
    evidence, metrics = sweep(film)
    hits = [e for e in evidence if {e["a"], e["b"]} == {"anna-skin", "board"}]
    assert len(hits) == 1 and hits[0]["between"] and hits[0]["frames"] == [A, A + 1], evidence
    assert hits[0]["depth_m"] > 0.005 and A < hits[0]["deepest_frame"] < A + 1
    assert metrics["frame_pairs_with_penetration"] == 1
