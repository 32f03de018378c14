"""The dog-and-newspaper film's story: plan, five key states, and the motion between them.

The dog stands behind the newspaper, lowers its head until the tip of its
muzzle rests on the paper (grasp), lifts it and walks in diagonal pairs to the
mat (a stop at the carry state mid-way), lowers its head again to set the
paper on the mat, lets go and stands up. The paper rides on the `mouth` frame
from the grasp to the put-down (studio.timeline.carry), with the offset it had
at the grasp, so it is set down on the mat exactly as it was picked up, 12 mm
higher. The motion of each segment is made from its two approved states: the
trunk, neck and head are eased between them, the paws are planted or walked
(studio.examples.dog_gait) and the legs follow by IK; every segment is baked
through the gate.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import forward, pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7
from studio.store.project import Project
from studio.timeline.carry import attach_offset, carried_track
from studio.timeline.commands import BakeSegment, CommandStack, SetState
from studio.timeline.film import segment_id
from studio.timeline.ik import Goal, frame_pose, solve_ik
from studio.timeline.plan import save_plan
from studio.timeline.storyboard import State, get_state

from . import dog_gait as gait
from . import dog_paper as d
from . import story_cli

STAND, GRASP, CARRY, AT_MAT, PUT_DOWN, RELEASE = 1001, 1030, 1090, 1140, 1160, 1180
STATES = [  # id, frame, description
    ("stand", STAND, "the dog stands behind the folded newspaper"),
    ("grasp", GRASP, "head lowered, the newspaper in its mouth"),
    ("carry", CARRY, "carrying the newspaper, half-way to the mat"),
    ("at_mat", AT_MAT, "at the mat, still holding the newspaper"),
    ("release", RELEASE, "the newspaper lies on the mat; the dog stands upright"),
]
GRASP_PITCH = 1.1             # the head's pitch in the world at the grasp (nose down)
RISE = 12                     # frames to lift the head and stand before walking
TOOL = "dog walk: eased trunk, paws planted or stepping in diagonal pairs, leg IK, carry on the mouth"
PAPER_REST = [d.PAPER_X, 0.0, d.PAPER[2] / 2, 1.0, 0.0, 0.0, 0.0]


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
        "motion": [{"segment": segment_id(a[0], b[0]), "notes": TOOL} for a, b in zip(STATES, STATES[1:])],
    }


def author_plan(project: Project) -> dict:
    """Store the film's plan (checked against the scene)."""
    p = plan()
    save_plan(project, p, load_scene(project), actor="example")
    return p


# ---- key poses ------------------------------------------------------------

def grasp_body(scene: Scene) -> gait.Body:
    """Crouched over the paper with the neck and head solved so the muzzle's underside touches its top."""
    body = gait.Body(d.DOG_X + 0.04, 0.33, 0.35, 1.2, -0.5, 0.0, gait.stance(d.DOG_X))
    pose = gait.pose_of(body, {"newspaper": PAPER_REST})
    target = np.array([d.PAPER_X - 0.03, 0.0, d.PAPER[2]])
    rot = np.array([math.cos(GRASP_PITCH / 2), 0.0, math.sin(GRASP_PITCH / 2), 0.0])
    solved, _ = solve_ik(scene, pose, ["neck", "head"], [Goal("mouth", target, rot, rotation_weight=0.05)], 200)
    body = body.copy(neck=round(solved.joints["neck"], 6), head=round(solved.joints["head"], 6))
    head = body_mesh(scene.body("head"))
    lowest = (head.vertices @ pose_world(scene, gait.pose_of(body))["head"][:3, :3].T)[:, 2].min()
    top = pose_world(scene, gait.pose_of(body))["head"][2, 3] + lowest
    return body.copy(z=round(body.z + d.PAPER[2] + 0.0005 - top, 6))   # rest the muzzle on the paper


def key_bodies(scene: Scene) -> dict[str, gait.Body]:
    """The dog at every key (the five states and the put-down between at_mat and release)."""
    grasp = grasp_body(scene)
    up = gait.Body(d.DOG_X, gait.STANDING_Z, 0.0, 0.0, 0.0, 0.0, gait.stance(d.DOG_X))
    travel = d.MAT_X - d.PAPER_X                       # the paper goes from the floor to the mat's centre
    end_x, mid_x = d.DOG_X + travel, d.DOG_X + travel / 2
    holding = dict(neck=0.35, head=0.35)               # the head a little down, paper under the muzzle
    return {
        "stand": up,
        "grasp": grasp,
        "carry": up.copy(x=mid_x, paws=gait.stance(mid_x), **holding),
        "at_mat": up.copy(x=end_x, paws=gait.stance(end_x), **holding),
        "put_down": grasp.copy(x=grasp.x + travel, z=grasp.z + d.MAT[2], paws=gait.stance(end_x)),
        "release": up.copy(x=end_x, paws=gait.stance(end_x), tail=0.2),
    }


def body_of(scene: Scene, pose: Pose) -> gait.Body:
    """Read a stored state's pose back as a dog Body (paws from forward kinematics)."""
    pose = pose.completed(scene)
    t = pose.roots["torso"]
    pitch = 2 * math.atan2(t[5], t[3])
    paws = {}
    for leg in d.LEGS:
        p = frame_pose(scene, pose, f"paw_{leg}")[:3, 3]
        paws[leg] = (float(p[0]), 0.0 if abs(p[2]) < 1e-7 else float(p[2]))
    j = pose.joints
    return gait.Body(t[0], t[2], pitch, float(j["neck"]), float(j["head"]), float(j["tail"]), paws)


# ---- motion ---------------------------------------------------------------

def settle(a: gait.Body, b: gait.Body, frames: np.ndarray) -> list[gait.Body]:
    """Paws planted where b has them; trunk, neck, head and tail eased from a to b."""
    t = (frames - frames[0]) / max(frames[-1] - frames[0], 1)
    return [gait.blend(a, b, float(s)).copy(paws=dict(b.paws)) for s in t]


def stride(a: gait.Body, b: gait.Body, frames: np.ndarray) -> list[gait.Body]:
    """Stand up from a over RISE frames (if a is not standing), then walk to b; the tail wags."""
    rise = RISE if not np.allclose([a.z, a.pitch, a.x], [b.z, b.pitch, _stance_x(a)], atol=1e-6) else 0
    start = b.copy(x=_stance_x(a), paws=dict(a.paws))
    out = settle(a, start, frames[:rise + 1])[:-1] if rise else []
    walk_frames = frames[len(out):]
    paws, trunk = gait.walk_paws(start.x, b.x, walk_frames)
    t = (walk_frames - walk_frames[0]) / max(walk_frames[-1] - walk_frames[0], 1)
    for i, f in enumerate(walk_frames):
        wag = 0.35 * math.sin(2 * math.pi * (f - walk_frames[0]) / 16) * math.sin(math.pi * t[i]) ** 2
        out.append(start.copy(x=float(trunk[i]), tail=start.tail + wag,
                              paws={leg: tuple(map(float, paws[leg][i])) for leg in d.LEGS}))
    return out


def _stance_x(body: gait.Body) -> float:
    """The trunk x a body's planted paws stand around."""
    return float(np.mean([body.paws[leg][0] for leg in d.LEGS]))


def segment_bodies(scene: Scene, a: State, b: State, put_down: gait.Body) -> list[gait.Body]:
    ba, bb = body_of(scene, a.pose), body_of(scene, b.pose)
    frames = np.arange(a.frame, b.frame + 1)
    if a.id == "at_mat":                 # lower the head to the mat, let go, stand up
        first = settle(ba, put_down, frames[frames <= PUT_DOWN])
        return first[:-1] + settle(put_down, bb, frames[frames >= PUT_DOWN])
    if all(np.allclose(ba.paws[leg], bb.paws[leg], atol=1e-6) for leg in d.LEGS):
        return settle(ba, bb, frames)
    return stride(ba, bb, frames)


def paper_track(scene: Scene, tracks: Tracks, offset: np.ndarray, rest: list[float]) -> np.ndarray:
    """The newspaper's (F,7) track: at rest before the grasp, on the mouth until the put-down, then left there."""
    world = forward(scene, tracks.roots, tracks.joints, tracks.n_frames)
    mouth = world["head"] @ _frame_local(scene, "mouth")
    frames = tracks.frames
    out = np.tile(np.asarray(rest, float), (len(frames), 1))
    held = (frames >= GRASP) & (frames <= PUT_DOWN)
    out[held] = carried_track(mouth[held], offset)
    after = frames > PUT_DOWN
    if after.any():
        placed = carried_track(mouth[frames == PUT_DOWN], offset) if (frames == PUT_DOWN).any() else None
        out[after] = placed[0] if placed is not None else rest
    return out


def _frame_local(scene: Scene, name: str) -> np.ndarray:
    return from_7(np.asarray(scene.frame(name).local.as_list()))


def _tracks(scene: Scene, bodies: list[gait.Body], frame_start: int, offset: np.ndarray,
            paper_rest: list[float]) -> Tracks:
    poses = [gait.pose_of(b, {"newspaper": paper_rest}) for b in bodies]
    tracks = Tracks.from_poses(frame_start, poses)
    tracks.roots["newspaper"] = paper_track(scene, tracks, offset, paper_rest)
    return tracks


def grasp_offset(scene: Scene, grasp_pose: Pose) -> np.ndarray:
    """The newspaper's pose in the mouth frame at the grasp."""
    pose = grasp_pose.completed(scene)
    paper = pose_world(scene, pose)["newspaper"]
    return attach_offset(frame_pose(scene, pose, "mouth"), paper)


def author_states(project: Project, stack: CommandStack | None = None) -> list[State]:
    """Pose and store the five key states, the newspaper where the carry puts it (through the
    command stack, so each is undoable)."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    keys = key_bodies(scene)
    offset = grasp_offset(scene, gait.pose_of(keys["grasp"], {"newspaper": PAPER_REST}))
    out = []
    for sid, frame, text in STATES:
        single = _tracks(scene, [keys[sid]], frame, offset, PAPER_REST)
        if sid == "release":                       # placed at the put-down, then left on the mat
            placed = _tracks(scene, [keys["put_down"]], PUT_DOWN, offset, PAPER_REST)
            single.roots["newspaper"] = placed.roots["newspaper"]
        state = State(sid, frame, single.pose_at(frame), "side", text)
        stack.run(SetState(project, state, actor="example"))
        out.append(state)
    return out


def author_motion(project: Project, stack: CommandStack | None = None,
                  segments: list[str] | None = None) -> list[str]:
    """Bake every segment from its approved states (each through the gate); returns the segments baked."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    states = [get_state(project, sid) for sid, _, _ in STATES]
    missing = [sid for (sid, _, _), s in zip(STATES, states) if s is None]
    if missing:
        raise ValueError(f"{project.path}: no state {missing[0]!r}; run author_states first")
    grasp = states[1].pose.completed(scene)
    offset = grasp_offset(scene, grasp)
    put_down = body_of(scene, grasp)
    at_mat = body_of(scene, states[3].pose)
    travel = at_mat.x - body_of(scene, states[0].pose).x
    put_down = put_down.copy(x=put_down.x + travel, z=put_down.z + d.MAT[2], paws=dict(at_mat.paws))
    paper_rest = list(states[0].pose.completed(scene).roots["newspaper"])
    baked = []
    for a, b in zip(states, states[1:]):
        seg = segment_id(a.id, b.id)
        if segments is not None and seg not in segments:
            continue
        tracks = _tracks(scene, segment_bodies(scene, a, b, put_down), a.frame, offset, paper_rest)
        stack.run(BakeSegment(project, seg, tracks, TOOL, actor="example"))
        baked.append(seg)
    return baked


def main(argv: list[str] | None = None) -> int:
    """`python -m studio.examples.dog_paper_story storyboard|motion PATH`."""
    return story_cli.main("dog_paper", d, sys.modules[__name__], argv)


if __name__ == "__main__":
    raise SystemExit(main())
