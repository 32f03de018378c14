"""Operate: effectors drive a part that hangs on a joint (a door on its hinge, a drawer on its
slide, a lever, a crank, a valve) by the handles they hold.

The `part` is a link whose own joint is revolute or prismatic; each effector
holds a `handle` (a named frame on the part or on a body the part carries, e.g.
a knob fixed to a door). Over the segment the part's joint goes from its value
in the first state to its value in the second (eased by `ease`, smoothstep
by default); at every frame the handles are where that joint value puts them,
and each effector's chain is solved by IK inside its limits (narrowed by
`limits` if asked) to keep the effector where it held its handle in the first
state (the grip, taken in the handle's frame; `orient` also keeps its turn),
so the loop from the arm through the part is closed at every frame. The rest
of the body is in-betweened, walks (`walk`) or keeps its feet planted
(`legs`), as with the hand tools.

Refused, naming the field: a part whose joint is fixed, a ball or missing, a
handle the part's joint does not move, an effector whose chain runs through
the part, and an effector farther than `tolerance` (default 1 cm) from its
handle in either state. The worst miss over the whole segment is measured
after the solve, by forward kinematics of the tracks returned, and one beyond
`tolerance` is refused naming the effector and the frame. Each effector's
hold on its handle is recorded for the whole segment (`Authored.attachments`
with the handle as its grip), so EventsSatisfied checks the baked film keeps
it at every frame and between frames.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import invert, matrix_to_quat

from studio.timeline.motion import Authored, MotionError, MotionTool, Segment, register
from studio.timeline.motion.common import frame_local, moving_joints
from studio.timeline.motion.easing import ease, interpolate_poses
from studio.timeline.motion.ik import Goal, solve_ik
from studio.timeline.motion.reach import (EFFECTOR, PLANTED, TOLERANCE, effectors_of, misses, narrowed, tracks_of,
                                          walking_joints, with_legs, worst_miss)
from studio.timeline.motion.walk import SCHEMA as WALK_SCHEMA

HOLDER = {**EFFECTOR, "properties": {
    **{k: v for k, v in EFFECTOR["properties"].items() if k not in ("target", "via")},
    "handle": {"type": "string", "description": "the named frame this effector holds (default: the tool's handle)"}}}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["part", "effectors"],
    "properties": {
        "part": {"type": "string", "description": "the link whose own joint (revolute or prismatic) is driven"},
        "handle": {"type": "string", "description": "the named frame on the part the effectors hold"},
        "effectors": {"type": "array", "minItems": 1, "items": HOLDER},
        "ease": {"type": "string", "enum": ["linear", "ease_in", "ease_out", "ease_in_out"],
                 "description": "how the part's joint runs between the states (default ease_in_out)"},
        "orient": {"type": "boolean", "description": "keep each effector turned on its handle as in the first state"},
        "tolerance": {"type": "number", "exclusiveMinimum": 0,
                      "description": "metres an effector may be off its grip at any frame (default 0.01)"},
        "legs": PLANTED, "walk": WALK_SCHEMA}}


def part_joint(scene: Scene, part: str):
    """The joint the part hangs on, if it can be driven; a MotionError "part: why" otherwise."""
    if part not in scene.body_names:
        raise MotionError(f"part: {part!r} is no body of the scene")
    j = scene.joint_of_child(part)
    if j is None:
        raise MotionError(f"part: {part!r} hangs on no joint (it is a root body); name the link of the door, "
                          f"drawer or lever")
    if j.type not in ("revolute", "prismatic"):
        kind = "a fixed joint, which cannot move" if j.type == "fixed" else f"a {j.type} joint"
        hint = ""
        up = scene.joint_of_child(j.parent) if j.type == "fixed" else None
        if up is not None and up.type in ("revolute", "prismatic"):
            hint = f"; the part that moves is {j.parent!r} (joint {up.name!r})"
        raise MotionError(f"part: {part!r} hangs on {j.name!r}, {kind}; operate drives a revolute or prismatic "
                          f"joint{hint}")
    return j


def _moved_by(scene: Scene, body: str, part: str) -> bool:
    """True if `body` is the part or hangs below it (so the part's joint moves it)."""
    while body is not None:
        if body == part:
            return True
        j = scene.joint_of_child(body)
        body = j.parent if j is not None else None
    return False


def _body_of(scene: Scene, name: str, field: str) -> str:
    try:
        return frame_local(scene, name, "operate")[0]
    except MotionError:
        raise MotionError(f"{field}: {name!r} is no named frame or body of the scene") from None


def check(scene: Scene, params: dict) -> None:
    """The names in operate's parameters against the scene; a MotionError "field: why" for the first wrong."""
    joint = part_joint(scene, params["part"])
    for i, e in enumerate(params["effectors"]):
        handle = e.get("handle", params.get("handle"))
        if handle is None:
            raise MotionError(f"effectors[{i}].handle: name the frame on {params['part']!r} the effector holds "
                              f"(or give the tool a handle)")
        field = f"effectors[{i}].handle" if "handle" in e else "handle"
        hb = _body_of(scene, handle, field)
        if not _moved_by(scene, hb, params["part"]):
            raise MotionError(f"{field}: {handle!r} is on {hb!r}, which the joint {joint.name!r} of "
                              f"{params['part']!r} does not move")
        eb = _body_of(scene, e["frame"], f"effectors[{i}].frame")
        if _moved_by(scene, eb, params["part"]):
            raise MotionError(f"effectors[{i}].frame: {e['frame']!r} is on the part itself")
        for j in e["joints"]:
            if j not in {x.name for x in scene.joints}:
                raise MotionError(f"effectors[{i}].joints: {j!r} is no joint of the scene")
        if joint.name in e["joints"]:
            raise MotionError(f"effectors[{i}].joints: {joint.name!r} is the part's own joint; the tool drives "
                              f"it and the chain follows")


def operate(seg: Segment, params: dict) -> Authored:
    scene = seg.scene
    try:
        check(scene, params)
    except MotionError as e:
        raise MotionError(f"operate {seg.id}: params.{e}") from None
    joint = part_joint(scene, params["part"])
    effs = effectors_of(seg, params, "operate")
    handles = {e["frame"]: e.get("handle", params.get("handle")) for e in effs}
    tol = float(params.get("tolerance", TOLERANCE))
    orient = bool(params.get("orient", False))
    pa, pb = seg.a.pose.completed(scene), seg.b.pose.completed(scene)
    qa, qb = float(pa.joints[joint.name]), float(pb.joints[joint.name])
    for state, pose in ((seg.a, pa), (seg.b, pb)):
        for e in effs:
            hand, handle = _world(scene, pose, e["frame"]), _world(scene, pose, handles[e["frame"]])
            off = np.linalg.norm(hand[:3, 3] - handle[:3, 3])
            if off > tol:
                raise MotionError(f"operate {seg.id}: in state {state.id!r} effector {e['frame']!r} is "
                                  f"{off * 1000:.1f} mm from its handle {handles[e['frame']]!r} (more than "
                                  f"{tol * 1000:.1f} mm); pose the hand on the handle there first")
    grip = {e["frame"]: invert(_world(scene, pa, handles[e["frame"]])) @ _world(scene, pa, e["frame"]) for e in effs}
    between = interpolate_poses(scene, [(seg.a.frame, pa), (seg.b.frame, pb)])
    n = seg.frames
    q = qa + ease(np.linspace(0.0, 1.0, n), params.get("ease", "ease_in_out")) * (qb - qa)
    room = narrowed(scene, effs, "operate")
    chain = list(dict.fromkeys(j for e in effs for j in e["joints"]))
    walking = walking_joints(seg, params, "operate")
    eased = [j for j in moving_joints(scene) if j not in walking and j != joint.name]
    aims: dict[str, dict[int, np.ndarray]] = {e["frame"]: {} for e in effs}
    carried: dict[str, float] = {}               # the last frame's IK correction, carried as the next seed
    fade = 1.0 - ease(np.linspace(0.0, 1.0, n), "ease_in_out")   # ... fading out, so the last seed is the second state

    def hands(i: int, pose: Pose) -> Pose:
        for j in eased:
            v = between.joints[j][i]
            pose.joints[j] = v.tolist() if v.ndim else float(v)
        for j, d in carried.items():             # seed: the in-between plus the correction the last frame needed
            lo, hi = room.joint(j).lower, room.joint(j).upper
            pose.joints[j] = float(np.clip(pose.joints[j] + fade[i] * d, lo, hi))
        pose.joints[joint.name] = float(q[i])
        goals = []
        for e in effs:
            want = _world(scene, pose, handles[e["frame"]]) @ grip[e["frame"]]
            aims[e["frame"]][i] = want[:3, 3]
            goals.append(Goal(e["frame"], want[:3, 3], matrix_to_quat(want[:3, :3]) if orient else None))
        solved, _ = solve_ik(room, pose, chain, goals, 60)
        for j in chain:
            if not isinstance(solved.joints[j], list):
                carried[j] = float(solved.joints[j]) - float(between.joints[j][i])
        return solved

    limbs = with_legs(seg, params, hands, "operate")
    worst, where = worst_miss(seg, misses(scene, limbs.poses, aims))
    if worst > tol:
        raise MotionError(f"operate {seg.id}: effector {where} is {worst * 1000:.1f} mm off its handle (more than "
                          f"{tol * 1000:.1f} mm): the handle's path leaves the arm's reach or its joint limits")
    joints = [joint.name] + chain + limbs.joints + (eased if "walk" in params else [])
    tracks = tracks_of(seg, limbs.poses, limbs.roots, joints)
    unit = "rad" if joint.type == "revolute" else "m"
    notes = list(limbs.notes) + [
        f"operate {seg.id}: {joint.name} {qa:.3f} -> {qb:.3f} {unit}; effectors within {worst * 1000:.2f} mm of "
        f"their handles at every frame" + (f" (worst: {where})" if where else "")]
    attachments = [{"frame": e["frame"], "body": frame_local(scene, handles[e["frame"]], "operate")[0],
                    "grip": handles[e["frame"]], "start": seg.a.frame, "end": seg.b.frame, "tolerance": tol}
                   for e in effs]
    return Authored(tracks, attachments, notes)


def _world(scene: Scene, pose: Pose, name: str) -> np.ndarray:
    body, local = frame_local(scene, name, "operate")
    return pose_world(scene, pose)[body] @ local


register(MotionTool(
    "operate", "Effectors holding handles drive a part on its revolute or prismatic joint (a door, a drawer, a "
    "lever, a crank) from its value in the first state to the second's, the chains following the handles by IK "
    "within limits; the legs may walk or stay planted meanwhile.", SCHEMA, operate, check=check))
