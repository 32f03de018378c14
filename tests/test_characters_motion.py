"""Motion tools on imported robots: the G1 and the Go2 walk 2 m on the legs found from their
URDF (planted feet within 5 mm, the centre of mass within the walk's tolerance of the support
polygon, measured here from the tracks), IK keeps every joint inside the URDF's limits, and the
Panda's gripper and the G1's hands grasp, carry and release a box the verifiers accept."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from studio.checks import events as event_checks
from studio.checks import support_margin, supported
from studio.checks.footage import Footage
from studio.cli import main
from studio.scene.characters import find_entry
from studio.scene.io import load_scene
from studio.scene.kinematics import tracks_world
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7, to_7
from studio.store.project import Project
from studio.timeline.bake import complete, pin
from studio.timeline.motion import Segment, motion_tool
from studio.timeline.motion.ik import Goal, frame_pose, solve_ik
from studio.timeline.motion.legs import expand_characters
from studio.timeline.motion.reach import attachment_events
from studio.timeline.motion.walk import COM_TOLERANCE, legs_of, place_flat, sole_placements
from studio.timeline.storyboard import State
from studio.tools.box import ToolBox

FLOOR = {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0, "size": [8, 8, 0.1],
         "offset": [1, 0, -0.05]}


def robot_project(tmp_path_factory, character: str, name: str, extra=()):
    path = tmp_path_factory.mktemp(name) / "lab"
    assert main(["new", str(path)]) == 0
    assert main(["scene", "import-urdf", str(path), character, "--name", name]) == 0
    with Project.open(path) as p:
        box = ToolBox(p, actor="person")
        for body in (FLOOR, *extra):
            box.call("create_body", body)
        scene = load_scene(p)
    return path, scene


@pytest.fixture(scope="module")
def g1(tmp_path_factory):
    return robot_project(tmp_path_factory, "g1", "g1")


@pytest.fixture(scope="module")
def go2(tmp_path_factory):
    return robot_project(tmp_path_factory, "go2", "go2")


def stance(scene, params, x: float, crouch: float) -> Pose:
    """Standing at x, the root `crouch` lower than at rest, soles where they are at rest (legs bent off
    their straight, singular start)."""
    legs = legs_of(scene, params)
    pose = Pose.rest(scene)
    feet = sole_placements(scene, pose, legs)
    root = list(pose.roots[params["root"]])
    root[0] += x
    root[2] -= crouch
    pose.roots[params["root"]] = root
    for leg in legs:
        for name in leg.joints:                 # a tenth of the way into each joint's wider side
            j = scene.joint(name)
            pose.joints[name] = 0.1 * (j.upper if abs(j.upper) > abs(j.lower) else j.lower)
        pose, err = solve_ik(scene, pose, leg.joints, [Goal(leg.sole, feet[leg.name][:3] + [x, 0, 0])], 200)
        at = {leg.name: feet[leg.name] + [x, 0, 0, 0]}         # then level, as the walk keeps a sole
        pose, err = place_flat(scene, pose, {leg.name: (leg.joints, leg.sole)}, at, 200,
                               frozenset([leg.name] if leg.point else []))
        assert err < 1e-4, (leg.name, err)
    return pose


def sole_tracks(scene, tracks, soles):
    world = tracks_world(scene, tracks)
    out = {}
    for name in soles:
        f = scene.frame(name)
        out[name] = (world[f.body] @ from_7(np.asarray(f.local.as_list())))[:, :3, 3]
    return out


def planted_slide(soles: np.ndarray, floor: float) -> float:
    """The most a sole moves along the floor during any run of frames it stays down."""
    down = soles[:, 2] <= floor
    worst, start = 0.0, None
    for i in range(len(down) + 1):
        if i < len(down) and down[i]:
            start = i if start is None else start
            worst = max(worst, float(np.linalg.norm(soles[i, :2] - soles[start, :2])))
        else:
            start = None
    return worst


def walked(path, scene, name: str, frames: int, crouch: float, extra: dict):
    params = expand_characters(scene, {"character": name, **extra})
    a, b = stance(scene, params, 0.0, crouch), stance(scene, params, 2.0, crouch)
    seg = Segment("a..b", scene, State("a", 1001, a), State("b", 1000 + frames, b), {}, 24, path)
    out = motion_tool("walk").author(seg, params)
    full = complete(scene, out.tracks, a.completed(scene), b.completed(scene), 1001, 1000 + frames)
    tracks, residual = pin(full, a.completed(scene), b.completed(scene))
    assert residual < 0.01          # ends in the second stance (the bake fades up to 0.05)
    return params, a, out, tracks


def check_walk(path, scene, params, rest, tracks):
    soles = sole_tracks(scene, tracks, [leg["sole"] for leg in params["legs"]])
    start = sole_tracks(scene, Tracks.from_poses(1001, [rest]), list(soles))
    for sole, s in soles.items():
        floor = float(start[sole][0, 2]) + 0.005          # down: within 5 mm of its height standing
        assert s[-1, 0] - s[0, 0] == pytest.approx(2.0, abs=1e-3), sole
        assert (s[:, 2] > floor + 0.01).any(), sole        # it steps
        assert (s[:, 2] <= floor).sum() >= len(s) // 3, sole
        assert planted_slide(s, floor) <= 0.005, sole
    film = Footage.build(scene, scene_meshes(scene, path), tracks)
    report = support_margin.verify(film)
    worst = min([e["margin_m"] for e in report.evidence], default=0.0)
    assert worst >= -COM_TOLERANCE, worst


def test_the_g1_walks_2_m_on_the_legs_found_in_its_urdf(g1):
    path, scene = g1
    params, rest, out, tracks = walked(path, scene, "g1", 144, 0.05,
                                       {"step_length": 0.3, "sway": 0.9, "balance": "between"})
    assert [leg["sole"] for leg in params["legs"]] == ["g1-left_ankle_roll_link-sole",
                                                        "g1-right_ankle_roll_link-sole"]
    check_walk(path, scene, params, rest, tracks)
    assert "planted feet slide at most" in out.notes[0]


def test_the_go2_walks_2_m_trotting_on_its_four_round_feet(go2):
    path, scene = go2
    params, rest, out, tracks = walked(path, scene, "go2", 144, 0.03, {"step_length": 0.25})
    assert {leg["foot"] for leg in params["legs"]} == {"point"}
    phases = {leg["sole"]: leg["phase"] for leg in params["legs"]}
    assert phases["go2-FL_foot-sole"] == phases["go2-RR_foot-sole"] != phases["go2-FR_foot-sole"]
    check_walk(path, scene, params, rest, tracks)


def test_ik_keeps_every_joint_inside_the_urdfs_limits(g1):
    path, scene = g1
    root = ET.parse(find_entry("g1", {}).file).getroot()
    limits = {f"g1-{j.get('name')}": (float(j.find("limit").get("lower")), float(j.find("limit").get("upper")))
              for j in root.findall("joint") if j.get("type") == "revolute"}
    arm = [h for h in scene.character("g1").hands if h["frame"].startswith("g1-left")][0]
    pose = Pose.rest(scene)
    for target in ([0.9, 0.6, 1.4], [-0.6, 0.2, 0.2], [0.0, 0.0, 2.5]):        # out of reach every way
        got, err = solve_ik(scene, pose, arm["joints"], [Goal(arm["frame"], np.asarray(target))], 200)
        assert err > 0.05
        for j in arm["joints"]:
            lo, hi = limits[j]
            assert lo <= got.joints[j] <= hi, (j, got.joints[j], lo, hi)


def bake(scene, path, poses, frames, tools):
    parts, holds, f = [], [], 1001
    for (pa, pb), (tool, params) in zip(zip(poses, poses[1:]), tools):
        seg = Segment("a..b", scene, State("a", f, pa), State("b", f + frames - 1, pb), {}, 24, path)
        out = motion_tool(tool).author(seg, expand_characters(scene, params))
        full = complete(scene, out.tracks, pa.completed(scene), pb.completed(scene), seg.a.frame, seg.b.frame)
        pinned, residual = pin(full, pa.completed(scene), pb.completed(scene))
        assert residual < 0.01, (tool, residual)      # the bake fades up to 0.05
        parts.append(pinned)
        holds += out.attachments
        f = seg.b.frame
    joined = parts[0]
    for p in parts[1:]:
        joined = Tracks(joined.frame_start, {k: np.concatenate([v, p.roots[k][1:]]) for k, v in joined.roots.items()},
                        {k: np.concatenate([v, p.joints[k][1:]]) for k, v in joined.joints.items()})
    return joined, holds


def reached(scene, pose, goals: dict, iterations=300) -> Pose:
    for frame, (joints, target, rot) in goals.items():
        pose, err = solve_ik(scene, pose, joints, [Goal(frame, np.asarray(target, float), rot)], iterations)
        assert err < 2e-3, (frame, err)
    return pose


def check_holds(scene, path, tracks, holds, body):
    plan = {"events": attachment_events(holds)}
    film = Footage.build(scene, scene_meshes(scene, path), tracks, plan=plan)
    verdicts = event_checks.evaluate(film, plan["events"])
    assert all(v[0] for v in verdicts.values()), verdicts
    assert supported.verify(film).verdict == "pass"
    return film


@pytest.fixture(scope="module")
def panda(tmp_path_factory):
    crate = {"name": "crate", "size": [0.05, 0.05, 0.05], "offset": [0, 0, 0.025], "mass": 0.2,
             "rest": [0.5, 0.0, 0.0, 1, 0, 0, 0]}
    return robot_project(tmp_path_factory, "panda", "arm", [crate])


def test_the_pandas_gripper_grasps_carries_and_releases_a_crate(panda):
    path, scene = panda
    grip, joints = scene.character("arm").hands[0]["frame"], scene.character("arm").hands[0]["joints"]
    fingers = ["arm-panda_finger_joint1", "arm-panda_finger_joint2"]
    down = np.array([0.0, 1.0, 0.0, 0.0])                      # the hand turned over: fingers pointing down
    rest = Pose.rest(scene)
    rest.joints.update({"arm-panda_joint4": -2.0, "arm-panda_joint6": 2.0, fingers[0]: 0.04, fingers[1]: 0.04})
    over = reached(scene, rest, {grip: (joints, [0.5, 0.0, 0.12], down)})
    at = reached(scene, over, {grip: (joints, [0.5, 0.0, 0.025], down)})
    at.joints.update({fingers[0]: 0.0252, fingers[1]: 0.0252})   # closed on the 5 cm crate
    moved = reached(scene, at, {grip: (joints, [0.3, 0.35, 0.025], down)})
    w = frame_pose(scene, moved, grip) @ np.linalg.inv(frame_pose(scene, at, grip)) @ frame_pose(scene, at, "crate")
    moved.roots["crate"] = to_7(w).tolist()
    up = moved.copy()
    up.joints.update({fingers[0]: 0.04, fingers[1]: 0.04})
    up = reached(scene, up, {grip: (joints, [0.3, 0.35, 0.15], down)})
    eff = {"frame": grip}
    tools = [("ik_reach", {"effectors": [eff]}), ("grasp", {"body": "crate", "effectors": [eff]}),
             ("carry", {"body": "crate", "on": grip, "effectors": [eff]}),
             ("release", {"body": "crate", "effectors": [eff]})]
    tracks, holds = bake(scene, path, [rest, over, at, moved, up], 16, tools)
    assert {(h["frame"], h["body"]) for h in holds} == {(grip, "crate")}
    check_holds(scene, path, tracks, holds, "crate")
    for j in joints + fingers:
        assert np.all(tracks.joints[j] >= scene.joint(j).lower - 1e-9)
        assert np.all(tracks.joints[j] <= scene.joint(j).upper + 1e-9)


def test_the_g1_lifts_a_box_with_both_hands(g1, tmp_path):
    path, scene = g1
    from studio.scene.ir import Scene
    from studio.scene.meshes import body_mesh
    d = scene.to_dict()
    d["bodies"].append({"name": "tote", "geometry": {"source": "box", "size": [0.2, 0.2, 0.2]}, "mass": 1.0})
    d["bodies"].append({"name": "stand", "kind": "static", "mass": 0,
                        "geometry": {"source": "box", "size": [0.2, 0.3, 0.75], "offset": {"position": [0, 0, 0.375]}}})
    d["rest"]["tote"] = [0.33, 0.0, 0.85, 1, 0, 0, 0]
    d["rest"]["stand"] = [0.33, 0.0, 0.0, 1, 0, 0, 0]
    scene = Scene.from_dict(d)
    hands = {h["frame"]: h["joints"] for h in scene.character("g1").hands}
    left, right = "g1-left_rubber_hand-grip", "g1-right_rubber_hand-grip"
    palm = {}                                   # from the grip frame in to the palm's surface
    for f, side in ((left, -1), (right, 1)):
        frame = scene.frame(f)
        v = body_mesh(scene.body(frame.body), path).vertices[:, 1]
        palm[f] = frame.local.position[1] - v.min() if side < 0 else v.max() - frame.local.position[1]
    level = np.array([1.0, 0, 0, 0])
    rest = Pose.rest(scene)

    def hold(pose, dz, gap=0.0):
        return reached(scene, pose, {left: (hands[left], [0.33, 0.1 + palm[left] + gap, 0.85 + dz], level),
                                     right: (hands[right], [0.33, -0.1 - palm[right] - gap, 0.85 + dz], level)})
    near = hold(rest, 0.0, 0.04)
    at = hold(near, 0.0, 0.0005)
    up = hold(at, 0.1)
    w = frame_pose(scene, up, left) @ np.linalg.inv(frame_pose(scene, at, left)) @ frame_pose(scene, at, "tote")
    up.roots["tote"] = to_7(w).tolist()
    effs = [{"frame": left}, {"frame": right}]
    tools = [("grasp", {"body": "tote", "effectors": effs}),
             ("carry", {"body": "tote", "on": left, "effectors": effs}),          # lifted
             ("place", {"body": "tote", "effectors": effs}),                      # set down again
             ("release", {"body": "tote", "effectors": effs})]
    tracks, holds = bake(scene, path, [near, at, up, at, near], 20, tools)
    assert {h["frame"] for h in holds} == {left, right}
    film = check_holds(scene, path, tracks, holds, "tote")
    lifted = int(np.searchsorted(film.frames, 1039))
    assert film.pair_gap("tote", "stand", 0.2)[lifted] > 0.09                # lifted clear of the stand
    from studio.checks import penetration
    assert penetration.verify(film).verdict == "pass"                       # hands on the sides, not in them
