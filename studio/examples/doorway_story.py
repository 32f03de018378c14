"""The doorway film carried through: plan, key states and motion between them.

The robot walks up to the panel, squats and sets its fingertips against the
panel's near edge at the two handles, lifts it, sidesteps around the stand,
walks past it, lines up with the door, tilts the panel (a 50 degree roll, so
its 1.2 m width fits the 0.9 m opening), walks through, lowers it onto its far
edge beside the drop spot and lets go. Each state is posed by IK (legs to flat
feet under the centre of mass, hands to targets set off the panel's handle
frames); motion between approved states comes from the motion tools each
plan segment names (grasp while walking up, carry with the panel riding on
the pelvis while the legs walk and the hands follow it by IK, carry in place
for the lift and the tilt, place, release), baked through the gate. The grasp holds the fingertips 4 mm off the edge face: the hands
are solid and must not cut into the panel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.scene.transforms import from_7, quat_from_axis_angle
from studio.store.project import Project
from studio.timeline.commands import CommandStack, SetState
from studio.timeline.ik import Goal, solve_ik
from studio.timeline.plan import save_plan
from studio.timeline.storyboard import State
from studio.timeline.walk import centre_of_mass, place_feet

from .common import bake_plan

LEGS = {k: ([f"hip_pitch_{k}", f"hip_roll_{k}", f"knee_{k}", f"ankle_{k}"], f"sole_{k}") for k in "lr"}
ARMS = {k: [f"shoulder_pitch_{k}", f"shoulder_roll_{k}", f"elbow_{k}"] for k in "lr"}   # wrist roll stays put
HANDLES = {"l": "handle_left", "r": "handle_right"}
EDGE_X = -0.30           # the panel's near edge, in its own frame
TIP = 0.04               # gripper frame to fingertips
GAP = 0.004              # fingertips to the edge face
HAND = 0.06              # gripper frame to the wrist
STANCE = 0.09            # half the distance between the feet
SOLE_AHEAD = 0.05        # sole frame ahead of the ankle, which stands under the hip
CARRY_Z, TILT_Z = 0.86, 1.05
WALK_Z = 0.67            # pelvis height while walking: knees soft, so a stride never over-stretches a leg
ROLL = math.radians(50)

F = {"start": 1001, "reach": 1065, "lift": 1089, "sidestep": 1153, "advance": 1217, "align": 1281,
     "tilt": 1305, "through": 1425, "set_down": 1457, "release": 1481}
ASIDE = 0.62             # how far the robot steps sideways to pass the stand (0.4 half-width + feet)
CARRYING_STATES = {"lift", "sidestep", "advance", "align", "tilt", "through"}   # panel off its support, held
INWARD = 0.25            # shoulder roll towards the body that the in-betweens may use (the states need 0.16)
TUCKED = 0.18            # less, while the panel is lowered close in front of the torso
APPROACH = [-0.07, 0.0, 0.03]   # the hands come to the edge from behind and above the grip

# ---- the motion tools each segment names ------------------------------------
PLANTED = {"root": "pelvis", "legs": [{"joints": joints, "sole": sole, "phase": 0.5 * i}
                                      for i, (joints, sole) in enumerate(LEGS.values())]}


def _hands(via: bool = False, inward: float = INWARD) -> list[dict]:
    """Both grippers, their arm chains, the shoulders kept from rolling into the torso."""
    out = []
    for side, sign in (("l", 1), ("r", -1)):
        room = {f"shoulder_roll_{side}": [-inward, None] if sign > 0 else [None, inward]}
        e = {"frame": f"gripper_{side}", "joints": ARMS[side], "limits": room}
        if via:
            e["via"] = APPROACH
        out.append(e)
    return out


def _walk(step: float, **more) -> dict:
    """Feet flat, hips kept between the feet (this robot has no ankle roll to lean over one foot)."""
    return dict(PLANTED, step_length=step, step_height=0.05, sway=0.0, overlap=1.0, shift=0.2, **more)


OFF_BALANCE = 0.10       # a sidestep keeps the hips between the feet: the centre of mass leaves the stance foot


SIDESTEP, STRIDE = 0.14, 0.3        # without hip yaw or ankle roll, a wide lateral stance tilts the feet
HELD = {"body": "panel", "effectors": _hands()}
MOTION = {
    "start..reach": ("grasp", {"body": "panel", "effectors": _hands(via=True),
                               "walk": dict(_walk(STRIDE), settle=0.3), "begin": 0.7}),
    "reach..lift": ("carry", dict(HELD, legs=PLANTED)),
    "lift..sidestep": ("carry", dict(HELD, on="pelvis", walk=_walk(SIDESTEP, com_tolerance=OFF_BALANCE, balance="between"))),
    "sidestep..advance": ("carry", dict(HELD, on="pelvis", walk=_walk(STRIDE))),
    "advance..align": ("carry", dict(HELD, on="pelvis", walk=_walk(SIDESTEP, com_tolerance=OFF_BALANCE, balance="between"))),
    "align..tilt": ("carry", dict(HELD, legs=PLANTED)),
    "tilt..through": ("carry", dict(HELD, on="pelvis", walk=_walk(0.25))),
    "through..set_down": ("place", {"body": "panel", "effectors": _hands(inward=TUCKED), "legs": PLANTED,
                                    "tolerance": 0.04}),        # lowering it, mid-way the arms fall short
    "set_down..release": ("release", {"body": "panel", "effectors": _hands(), "legs": PLANTED}),
}
SEGMENTS = [tuple(k.split("..")) for k in MOTION]


def plan() -> dict:
    """The doorway film's plan (shots, states, objects, events, motion)."""
    states = [
        ("start", "main", "the robot stands back from the stand; the panel lies flat on it"),
        ("reach", "main", "the robot squats and sets its fingertips against the panel's near edge at both handles"),
        ("lift", "main", "the panel is lifted clear of the stand, flat, held by its near edge"),
        ("sidestep", "main", "the robot has stepped sideways around the stand, panel level"),
        ("advance", "main", "past the stand, the robot walks towards the wall"),
        ("align", "main", "the robot lines up with the doorway"),
        ("tilt", "main", "the panel is tilted fifty degrees so that it fits the opening"),
        ("through", "door", "through the doorway, the panel still tilted"),
        ("set_down", "door", "the panel stands on its far edge by the drop spot, still held"),
        ("release", "door", "the robot lets go and straightens up"),
    ]
    tol = {"tolerance": 0.05}
    return {
        "prompt": "A robot carries a wide panel through a narrow doorway and sets it down on the other side.",
        "scene_brief": "A wall with a 0.9 m doorway; a 1.2 m plywood panel lies on a low stand on the near side.",
        "motion_brief": "Walk to the panel, grasp its near edge, lift, go around the stand, tilt the panel "
                        "to fit the door, walk through, set it down, let go.",
        "shots": [{"id": "main", "camera": "cam_main", "start": F["start"], "end": F["tilt"]},
                  {"id": "door", "camera": "cam_door", "start": F["tilt"] + 1, "end": F["release"]}],
        "states": [{"id": sid, "frame": F[sid], "shot": shot, "description": text,
                    "objects": ["robot", "panel"]} for sid, shot, text in states],
        "objects": [{"name": "robot", "description": "a humanoid robot"},
                    {"name": "panel", "description": "a 1.2 x 0.6 m plywood panel"},
                    {"name": "wall", "description": "a wall with a narrow doorway"},
                    {"name": "stand", "description": "a low stand the panel starts on"}],
        "events": [
            {"id": "reach_panel", "kind": "reach", "subjects": ["gripper_l", "handle_left"],
             "window": [F["start"], F["reach"]], "params": {"tolerance": 0.08}, "after": []},
            {"id": "grasp_l", "kind": "grasp", "subjects": ["gripper_l", "panel"],
             "window": [F["reach"], F["lift"]], "params": tol, "after": ["reach_panel"]},
            {"id": "grasp_r", "kind": "grasp", "subjects": ["gripper_r", "panel"],
             "window": [F["reach"], F["lift"]], "params": tol, "after": ["reach_panel"]},
            {"id": "through_door", "kind": "pass_through", "subjects": ["panel"],
             "window": [F["tilt"], F["through"]], "params": {"point": [0.0, 0.0, 1.05], "normal": [1.0, 0.0, 0.0]},
             "after": ["grasp_l", "grasp_r"]},
            {"id": "release_l", "kind": "release", "subjects": ["gripper_l", "panel"],
             "window": [F["set_down"], F["release"]], "params": tol, "after": ["through_door"]},
            {"id": "release_r", "kind": "release", "subjects": ["gripper_r", "panel"],
             "window": [F["set_down"], F["release"]], "params": tol, "after": ["through_door"]},
            {"id": "on_far_side", "kind": "enter_region", "subjects": ["panel"],
             "window": [F["set_down"], F["release"]], "params": {"min": [1.2, -0.8, 0.0], "max": [1.9, 0.8, 0.8]},
             "after": ["through_door"]},
            {"id": "story", "kind": "order", "subjects": ["grasp_l", "through_door", "release_l"],
             "window": [F["start"], F["release"]], "params": {}, "after": []},
        ],
        "motion": [{"segment": seg, "tool": tool, "params": params, "notes": ""} for seg, (tool, params) in MOTION.items()],
    }


def author_plan(project: Project) -> dict:
    p = plan()
    save_plan(project, p, load_scene(project), actor="example")
    return p


# ---- posing ---------------------------------------------------------------
def _yaw_quat(yaw: float = 0.0) -> list[float]:
    return quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array(yaw)).tolist()


def panel_at(grip: np.ndarray, rotation: np.ndarray, scene: Scene) -> list[float]:
    """Panel root transform that puts the midpoint of its two handles at `grip` with `rotation`."""
    local = (np.array(scene.frame("handle_left").local.position) + np.array(scene.frame("handle_right").local.position)) / 2
    m = from_7(np.array([0, 0, 0, *rotation]))
    return [*(np.asarray(grip, float) - m[:3, :3] @ local), *rotation]


def hand_targets(scene: Scene, panel: list[float]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per side, (gripper target, wrist target): fingertips GAP off the near edge, fingers along +X of the panel."""
    m = from_7(np.asarray(panel, float))
    out = {}
    for side, handle in HANDLES.items():
        y = scene.frame(handle).local.position[1]
        grip = m @ np.array([EDGE_X - GAP - TIP, y, 0.0, 1.0])
        wrist = m @ np.array([EDGE_X - GAP - TIP - HAND, y, 0.0, 1.0])
        out[side] = (grip[:3], wrist[:3])
    return out


def pose_arms(scene: Scene, pose: Pose, targets: dict, iterations: int = 60) -> tuple[Pose, float]:
    """Hands to their targets: first gripper and wrist together (the fingers' direction), then the gripper exactly."""
    worst = 0.0
    for side, (grip, wrist) in targets.items():
        goals = [Goal(f"gripper_{side}", grip), Goal(f"hand_{side}", wrist, weight=0.5)]
        pose, _ = solve_ik(scene, pose, ARMS[side], goals, iterations)
        pose, err = solve_ik(scene, pose, ARMS[side], [Goal(f"gripper_{side}", grip)], iterations // 2)
        worst = max(worst, err)
    return pose, worst


def robot_bodies(scene: Scene, carrying: bool) -> list[str]:
    return [b.name for b in scene.bodies if b.group == "robot"] + (["panel"] if carrying else [])


def balance(scene: Scene, pose: Pose, pelvis: list[float], arms=None, carrying: bool = False,
            feet: dict[str, np.ndarray] | None = None, recentre: bool = False,
            ahead: float | None = None) -> tuple[Pose, dict[str, np.ndarray], float]:
    """Pose the arms (arms(pose) -> (pose, error)), then put the feet flat and side by side
    under the centre of mass, or `ahead` of the pelvis (a squat), or where `feet` says (a move
    made in place; with `recentre` the pelvis then moves to bring the centre of mass over them)."""
    pose = pose.copy()
    pose.roots["pelvis"] = list(pelvis)
    bodies = robot_bodies(scene, carrying)
    err = 0.0
    if ahead is not None:
        feet = {"l": np.array([pelvis[0] + ahead, pelvis[1] + STANCE, 0.0, 0.0]),
                "r": np.array([pelvis[0] + ahead, pelvis[1] - STANCE, 0.0, 0.0])}
    for _ in range(3 if recentre else 1):
        if arms is not None:
            pose, err = arms(pose)
        com = centre_of_mass(scene, pose, bodies)
        if feet is None:
            feet = {"l": np.array([com[0], com[1] + STANCE, 0.0, 0.0]),
                    "r": np.array([com[0], com[1] - STANCE, 0.0, 0.0])}
        if not recentre:
            break
        mid = (feet["l"][:2] + feet["r"][:2]) / 2
        pose.roots["pelvis"][:2] = (np.asarray(pose.roots["pelvis"][:2]) + (mid - com[:2])).tolist()
    pose, e2 = place_feet(scene, pose, LEGS, feet, 80)
    return pose, feet, max(err, e2)


def _carried_arms(scene: Scene, panel: list[float], move_panel: bool = True):
    """Arms whose hands hold `panel` where it is (or, move_panel False, where it would be)."""
    def arms(pose: Pose) -> tuple[Pose, float]:
        if move_panel:
            pose.roots["panel"] = list(panel)
        return pose_arms(scene, pose, hand_targets(scene, panel))
    return arms


def _seed_arms(pose: Pose) -> Pose:
    pose = pose.copy()
    for s in "lr":
        pose.joints[f"shoulder_pitch_{s}"] = -1.0
        pose.joints[f"elbow_{s}"] = -0.6
    return pose


@dataclass
class StatePose:
    pose: Pose
    feet: dict[str, np.ndarray]
    error: float


def state_poses(scene: Scene) -> dict[str, StatePose]:
    """Every key state's pose, built from the scene's rest pose."""
    rest = Pose.rest(scene)
    flat = [1.0, 0.0, 0.0, 0.0]
    upright = _yaw_quat()
    on_stand = list(rest.roots["panel"])
    out: dict[str, StatePose] = {}

    def put(name, pelvis, panel, holding=False, seed=None, same_feet_as=None, recentre=False, ahead=None,
            arms=None):
        seed = (seed or rest).copy()
        seed.roots["panel"] = list(panel)
        arms = _carried_arms(scene, panel) if holding else arms
        feet = out[same_feet_as].feet if same_feet_as else None
        carrying = name in CARRYING_STATES
        pose, placed, err = balance(scene, seed, pelvis, arms, carrying, feet, recentre, ahead)
        out[name] = StatePose(pose, placed, err)
        return pose

    put("start", [-3.0, 0.0, WALK_Z, *upright], on_stand)
    put("reach", [-2.2, 0.0, 0.5, *upright], on_stand, True, seed=_seed_arms(rest), ahead=0.13)
    grip = (from_7(np.asarray(on_stand)) @ np.array([EDGE_X + 0.03, 0.0, 0.0, 1.0]))[:3]   # handles' midpoint
    lifted = panel_at([grip[0], 0.0, CARRY_Z], flat, scene)
    pose = put("lift", [-2.2, 0.0, WALK_Z, *upright], lifted, True, out["reach"].pose, same_feet_as="reach")
    base, rel = np.asarray(pose.roots["pelvis"][:3]), np.asarray(lifted[:3]) - np.asarray(pose.roots["pelvis"][:3])
    for name, shift in (("sidestep", [0.0, -ASIDE, 0.0]), ("advance", [1.05, -ASIDE, 0.0]), ("align", [1.05, 0.0, 0.0])):
        pose = put(name, [*(base + shift), *upright], [*(base + shift + rel), *flat], True, pose)
    roll = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.array(ROLL)).tolist()
    tilted = panel_at([grip[0] + 1.05, 0.0, TILT_Z], roll, scene)
    pose = put("tilt", [*(base + [1.05, 0.0, 0.0]), *upright], tilted, True, pose, same_feet_as="align")
    ahead = np.array([2.3, 0.0, 0.0])
    pose = put("through", [*(np.asarray(pose.roots["pelvis"][:3]) + ahead), *upright],
               [*(np.asarray(tilted[:3]) + ahead), *tilted[3:]], True, pose)
    pitch = quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), np.array(math.pi / 2)).tolist()
    standing = [1.45, 0.0, -EDGE_X + 0.0005, *pitch]              # on its far edge by the drop spot
    pelvis = np.asarray(pose.roots["pelvis"][:3])
    pose = put("set_down", [pelvis[0], 0.0, 0.55, *upright], standing, True, pose, same_feet_as="through")
    back_off = [*(np.asarray(standing[:3]) + [-0.16, 0.0, 0.06]), *standing[3:]]   # hands clear of the edge
    put("release", [pelvis[0], 0.0, 0.66, *upright], standing, False, pose, same_feet_as="through",
        recentre=True, arms=_carried_arms(scene, back_off, move_panel=False))
    return out


def author_states(project: Project, stack: CommandStack | None = None) -> dict[str, StatePose]:
    """Pose and store every key state (through the command stack, so each is undoable)."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    p = project.get_doc("plan") or plan()
    shots = {s["id"]: s["shot"] for s in p["states"]}
    texts = {s["id"]: s["description"] for s in p["states"]}
    poses = state_poses(scene)
    for sid, sp in poses.items():
        stack.run(SetState(project, State(sid, F[sid], sp.pose, shots[sid], texts[sid]), actor="example"))
    return poses


# ---- motion ---------------------------------------------------------------
def author_motion(project: Project, stack: CommandStack | None = None, segments: list[str] | None = None) -> list[str]:
    """Bake every segment with the tool the plan names (each through the gate); returns the segments baked."""
    return bake_plan(project, stack, segments)


def main(argv: list[str] | None = None) -> int:
    """`python -m studio.examples.doorway_story storyboard PATH` builds the project, plan and
    states for review (`studio board approve PATH STATE`); `... motion PATH` bakes the approved film."""
    import argparse
    from pathlib import Path

    from studio.examples.doorway import create
    from studio.timeline.gate import GateError

    parser = argparse.ArgumentParser(prog="doorway_story")
    parser.add_argument("step", choices=("storyboard", "motion"))
    parser.add_argument("path", type=Path)
    args = parser.parse_args(argv)
    if args.step == "storyboard":
        with create(args.path) as project:
            author_plan(project)
            for sid in author_states(project):
                print(f"state {sid:<10} frame {F[sid]}: review it with  studio board approve {args.path} {sid}")
        return 0
    with Project.open(args.path) as project:
        try:
            for seg in author_motion(project):
                print(f"baked {seg}")
        except GateError as e:
            print(f"doorway_story: {e}")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
