"""The dog-and-newspaper film's story: its plan and key states; its motion is the tools'.

The dog stands behind the newspaper, lowers its head until the tip of its
muzzle rests on the paper (`grasp`), walks in diagonal pairs to the mat with
the paper riding on its `mouth` frame (`carry` with a `walk`, a stop at the
carry state mid-way), lowers its head to set the paper on the mat (`place`)
and lets go, standing up (`release`). Key poses are given as numbers (trunk,
neck, head, tail) and IK goals (each paw flat on the floor under its hip, the
muzzle on the paper); the paper in each state is where the mouth holds it, so
it is set down on the mat exactly as it was picked up, 12 mm higher.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose
from studio.scene.transforms import from_7, invert, to_7
from studio.store.project import Project
from studio.timeline.commands import CommandStack, SetState
from studio.timeline.film import segment_id
from studio.timeline.ik import Goal, frame_pose, solve_ik
from studio.timeline.plan import save_plan
from studio.timeline.storyboard import State
from studio.timeline.walk import place_feet

from . import dog_paper as d
from . import story_cli
from .common import bake_plan

STAND, GRASP, CARRY, AT_MAT, PUT_DOWN, RELEASE = 1001, 1030, 1090, 1140, 1160, 1180
STATES = [  # id, frame, description
    ("stand", STAND, "the dog stands behind the folded newspaper"),
    ("grasp", GRASP, "head lowered, the newspaper in its mouth"),
    ("carry", CARRY, "carrying the newspaper, half-way to the mat"),
    ("at_mat", AT_MAT, "at the mat, still holding the newspaper"),
    ("put_down", PUT_DOWN, "head lowered, the newspaper set on the mat, still in its mouth"),
    ("release", RELEASE, "the newspaper lies on the mat; the dog stands upright"),
]
GRASP_PITCH = 1.1             # the head's pitch in the world at the grasp (nose down)
STANDING_Z = 0.40             # trunk centre above the floor when standing
STANCE_SPREAD = 0.02          # paws sit this far outside their hips along X (a steadier stance)
PAPER_REST = [d.PAPER_X, 0.0, d.PAPER[2] / 2, 1.0, 0.0, 0.0, 0.0]

LEGS = [{"joints": [f"hip_{leg}", f"knee_{leg}", f"ankle_{leg}"], "sole": f"paw_{leg}",
         "phase": 0.0 if leg in ("fl", "hr") else 0.5} for leg in d.LEGS]          # diagonal pairs
PLANTED = {"root": "torso", "legs": LEGS}
HEAD = [{"frame": "mouth", "joints": ["neck", "head"]}]
WALK = {"root": "torso", "legs": LEGS, "step_length": 0.25, "step_height": 0.05, "shift": 0.1, "overlap": 1.0}
MOTION = {
    "stand..grasp": ("grasp", {"body": "newspaper", "effectors": HEAD, "legs": PLANTED}),
    "grasp..carry": ("carry", {"body": "newspaper", "on": "mouth", "walk": WALK}),
    "carry..at_mat": ("carry", {"body": "newspaper", "on": "mouth", "walk": WALK}),
    "at_mat..put_down": ("place", {"body": "newspaper", "on": "mouth", "legs": PLANTED}),
    "put_down..release": ("release", {"body": "newspaper", "effectors": HEAD, "legs": PLANTED}),
}


def mat_region() -> tuple[list[float], list[float]]:
    """The box the newspaper's centre is inside when it lies on the mat."""
    return ([d.MAT_X - d.MAT[0] / 2, -d.MAT[1] / 2, d.MAT[2]], [d.MAT_X + d.MAT[0] / 2, d.MAT[1] / 2, 0.06])


def plan() -> dict:
    lo, hi = mat_region()
    return {
        "prompt": "A dog picks up the folded morning newspaper in its mouth, carries it across the room "
                  "and sets it down on the doormat.",
        "scene_brief": "Wooden floor, a coir mat, a folded newspaper, a dog built from CAD links.",
        "motion_brief": "Head down to the paper, lift, walk in diagonal pairs, head down to the mat, let go, stand.",
        "shots": [{"id": "side", "camera": "cam_side", "start": STAND, "end": RELEASE}],
        "states": [{"id": sid, "frame": f, "shot": "side", "description": text, "objects": ["dog", "newspaper"]}
                   for sid, f, text in STATES],
        "objects": [{"name": "dog", "description": "a short-haired dog"},
                    {"name": "newspaper", "description": "a folded newspaper"},
                    {"name": "mat", "description": "a coir doormat"}],
        "events": [
            {"id": "picks_up", "kind": "grasp", "subjects": ["mouth", "newspaper"],
             "window": [GRASP - 2, GRASP + 2], "params": {}, "after": []},
            {"id": "lets_go", "kind": "release", "subjects": ["mouth", "newspaper"],
             "window": [PUT_DOWN, RELEASE], "params": {}, "after": ["picks_up"]},
            {"id": "paper_on_mat", "kind": "enter_region", "subjects": ["newspaper"],
             "window": [PUT_DOWN, RELEASE], "params": {"min": lo, "max": hi}, "after": ["picks_up"]},
            {"id": "paper_rests_on_mat", "kind": "contact", "subjects": ["newspaper", "mat"],
             "window": [PUT_DOWN, RELEASE], "params": {}, "after": ["picks_up"]}],
        "motion": [{"segment": segment_id(a[0], b[0]), "tool": MOTION[segment_id(a[0], b[0])][0],
                    "params": MOTION[segment_id(a[0], b[0])][1], "notes": ""} for a, b in zip(STATES, STATES[1:])],
    }


def author_plan(project: Project) -> dict:
    """Store the film's plan (checked against the scene)."""
    p = plan()
    save_plan(project, p, load_scene(project), actor="example")
    return p


# ---- key poses ------------------------------------------------------------

def stance(x: float) -> dict[str, np.ndarray]:
    """Paw soles (x, y, z, yaw) flat on the floor under the hips of a level trunk centred at x."""
    return {f"paw_{leg}": np.array([x + d.leg_sign(leg)[0] * (d.HIP_X + STANCE_SPREAD), d.leg_sign(leg)[1] * d.HIP_Y,
                                    0.0, 0.0]) for leg in d.LEGS}


def dog_pose(scene: Scene, x: float, z: float = STANDING_Z, pitch: float = 0.0, neck: float = 0.0,
             head: float = 0.0, tail: float = 0.0, paws_at: float | None = None,
             paper: list[float] | None = None) -> Pose:
    """The dog's trunk, neck, head and tail as given, its paws flat on the floor by IK."""
    pose = Pose.rest(scene).completed(scene)
    pose.roots["torso"] = [x, 0.0, z, math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0]
    pose.roots["newspaper"] = list(paper or PAPER_REST)
    pose.joints.update({"neck": neck, "head": head, "tail": tail})
    for leg in d.LEGS:                  # knees start bent the way they go (front back, hind forward)
        pose.joints[f"knee_{leg}"] = -0.6 if leg[0] == "f" else 0.6
    legs = {leg["sole"]: (leg["joints"], leg["sole"]) for leg in LEGS}
    pose, err = place_feet(scene, pose, legs, stance(x if paws_at is None else paws_at), 200)
    if err > 2e-4:
        raise ValueError(f"dog pose at x {x}: a paw cannot stand where asked ({err * 1000:.2f} mm off)")
    return pose


def grasp_pose(scene: Scene) -> Pose:
    """Crouched over the paper with the neck and head solved so the muzzle's underside touches its top."""
    x, z, pitch = d.DOG_X + 0.04, 0.33, 0.35
    pose = dog_pose(scene, x, z, pitch, 1.2, -0.5, paws_at=d.DOG_X)
    target = np.array([d.PAPER_X - 0.03, 0.0, d.PAPER[2]])
    rot = np.array([math.cos(GRASP_PITCH / 2), 0.0, math.sin(GRASP_PITCH / 2), 0.0])
    solved, _ = solve_ik(scene, pose, ["neck", "head"], [Goal("mouth", target, rot, rotation_weight=0.05)], 200)
    neck, head = round(solved.joints["neck"], 6), round(solved.joints["head"], 6)
    pose = dog_pose(scene, x, z, pitch, neck, head, paws_at=d.DOG_X)
    mesh = body_mesh(scene.body("head"))
    world = pose_world(scene, pose)["head"]
    top = world[2, 3] + (mesh.vertices @ world[:3, :3].T)[:, 2].min()
    return dog_pose(scene, x, round(z + d.PAPER[2] + 0.0005 - top, 6), pitch, neck, head, paws_at=d.DOG_X)


def key_poses(scene: Scene) -> dict[str, Pose]:
    """Every state's pose; the paper rides on the mouth from the grasp to the put-down."""
    grasp = grasp_pose(scene)
    t = grasp.roots["torso"]
    pitch = 2 * math.atan2(t[5], t[3])
    travel = d.MAT_X - d.PAPER_X                       # the paper goes from the floor to the mat's centre
    end_x, mid_x = d.DOG_X + travel, d.DOG_X + travel / 2
    held = invert(frame_pose(scene, grasp, "mouth")) @ from_7(np.asarray(PAPER_REST))

    def holding(pose: Pose) -> Pose:
        pose.roots["newspaper"] = to_7(frame_pose(scene, pose, "mouth") @ held).tolist()
        return pose
    put_down = holding(dog_pose(scene, t[0] + travel, t[2] + d.MAT[2], pitch, grasp.joints["neck"],
                                grasp.joints["head"], paws_at=end_x))
    return {
        "stand": dog_pose(scene, d.DOG_X),
        "grasp": grasp,
        "carry": holding(dog_pose(scene, mid_x, neck=0.35, head=0.35)),
        "at_mat": holding(dog_pose(scene, end_x, neck=0.35, head=0.35)),
        "put_down": put_down,
        "release": dog_pose(scene, end_x, tail=0.2, paper=put_down.roots["newspaper"]),
    }


def author_states(project: Project, stack: CommandStack | None = None) -> list[State]:
    """Pose and store the key states (through the command stack, so each is undoable)."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    poses = key_poses(scene)
    out = []
    for sid, frame, text in STATES:
        state = State(sid, frame, poses[sid], "side", text)
        stack.run(SetState(project, state, actor="example"))
        out.append(state)
    return out


def author_motion(project: Project, stack: CommandStack | None = None,
                  segments: list[str] | None = None) -> list[str]:
    """Bake every segment with the tool the plan names (each through the gate)."""
    return bake_plan(project, stack, segments)


def main(argv: list[str] | None = None) -> int:
    """`python -m studio.examples.dog_paper_story storyboard|motion PATH`."""
    return story_cli.main("dog_paper", d, sys.modules[__name__], argv)


if __name__ == "__main__":
    raise SystemExit(main())
