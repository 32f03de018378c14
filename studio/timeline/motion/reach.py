"""Hands and what they hold: `ik_reach`, `grasp`, `carry`, `place` and `release`.

Each moves effectors (named frames) over the segment with their chains' joints
solved by IK inside their limits, every frame seeded from the in-between of
the two states, so the solve ends where the second state is. The rest of the
body is in-betweened, or walks: every tool but `release` takes an optional
`walk` object (the walk tool's parameters) and then the legs walk while the
hands reach or hold; `legs` alone keeps the feet planted where the first
state has them. An effector may narrow its chain's limits for the move
(`limits`, e.g. to keep an upper arm off the torso), never widen them.

- ik_reach / grasp: each effector goes from where it is to its `target` (a
  named frame or body, followed if it moves, or a point; by default where the
  second state has it), through `via` (an offset from the target, the
  approach) if given. A grasp holds the body from the last frame on.
- carry: the carried `body` rides on `on` (a named frame or body, with the
  offset it has in the first state), or, without `on`, moves from its first
  to its second state's place; the effectors keep their grip on it.
- place: carry without a rider; the hold ends with the segment.
- release: the effectors leave the body, to `target` or the second state.

An effector that misses its target by more than `tolerance` (default 1 cm)
is refused naming the effector and the frame. Holds are returned as
`Authored.attachments` ({"frame", "body", "start", "end", "tolerance"}, a
release's "clear": the frame the effector is off the body by, and "ride" for
the body riding `on` a frame); `attachment_events`
turns them into the plan's grasp and release events, which the events and
Supported verifiers read.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from studio.scene.kinematics import forward, pose_world
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7, invert, to_7

from studio.timeline.motion.carry import carry_windows
from studio.timeline.motion.ik import Goal, solve_ik
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.motion.walk_feet import place_feet
from studio.timeline.motion import Authored, MotionError, MotionTool, Segment, register
from studio.timeline.motion.common import (chain_joints, frame_local, moving_joints, need_joints, need_root, point,
                                           smooth)
from studio.timeline.motion.walk import LEG_SCHEMA, SCHEMA as WALK_SCHEMA, legs_of, sole_placements, walk_poses

TOLERANCE = 0.01
VIA = 0.6                # share of the move spent reaching the approach point

POINT = {"oneOf": [{"type": "string"}, {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number"}}]}
EFFECTOR = {
    "type": "object", "additionalProperties": False, "required": ["frame", "joints"],
    "properties": {
        "frame": {"type": "string", "description": "the effector's named frame"},
        "joints": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "its chain"},
        "target": POINT,
        "via": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number"},
                "description": "approach from this offset off the target (world)"},
        "limits": {"type": "object", "additionalProperties": {
            "type": "array", "minItems": 2, "maxItems": 2, "items": {"type": ["number", "null"]}},
            "description": "narrower [lower, upper] for chain joints during the move (null keeps one)"},
    }}
PLANTED = {"type": "object", "additionalProperties": False, "required": ["root", "legs"],
           "properties": {"root": {"type": "string"}, "legs": {"type": "array", "minItems": 1, "items": LEG_SCHEMA}}}


def _schema(body: bool, on: bool = False, walk: bool = False, body_required: bool = True) -> dict:
    props = {"effectors": {"type": "array", "minItems": 0 if on else 1, "items": EFFECTOR},
             "tolerance": {"type": "number", "exclusiveMinimum": 0}, "legs": PLANTED,
             "begin": {"type": "number", "minimum": 0, "maximum": 0.95,
                       "description": "share of the segment before the reach starts (the arms in-between till then)"}}
    req = [] if on else ["effectors"]
    if body:
        props["body"] = {"type": "string", "description": "the held body (a root)"}
        if body_required:
            req.append("body")
    if on:
        props["on"] = {"type": "string", "description": "named frame or body the held body rides on"}
    if walk:
        props["walk"] = WALK_SCHEMA
    return {"type": "object", "additionalProperties": False, "required": req, "properties": props}


def _world(scene, pose: Pose, name: str, tool: str) -> np.ndarray:
    body, local = frame_local(scene, name, tool)
    return pose_world(scene, pose)[body] @ local


def narrowed(scene, effs: list[dict], tool: str):
    """The scene with the effectors' chain limits narrowed as asked (refusing a wider one)."""
    asked = [(e["frame"], j, lim) for e in effs for j, lim in e.get("limits", {}).items()]
    if not asked:
        return scene
    room = copy.deepcopy(scene)
    for frame, name, (lo, hi) in asked:
        need_joints(scene, [name], tool, f"effector {frame!r} limits")
        j = room.joint(name)
        lo = j.lower if lo is None else float(lo)
        hi = j.upper if hi is None else float(hi)
        if lo < j.lower - 1e-12 or hi > j.upper + 1e-12 or lo > hi:
            raise MotionError(f"{tool}: effector {frame!r} limits for {name!r} ({lo}, {hi}) must lie inside the "
                              f"joint's own ({j.lower}, {j.upper})")
        j.lower, j.upper = lo, hi
    return room


def effectors_of(seg: Segment, params: dict, tool: str, required: bool = True) -> list[dict]:
    """The effectors with their chains' moving joints (a fixed joint in a chain has no value)."""
    effs = params.get("effectors", [])
    if not effs and required and "on" not in params:
        raise MotionError(f"{tool}: give effectors, or the frame the body rides 'on'")
    out = []
    for i, e in enumerate(effs):
        frame_local(seg.scene, e["frame"], tool)
        moving = chain_joints(seg.scene, e["joints"], tool, f"effectors[{i}]")
        if not moving:
            raise MotionError(f"{tool}: effectors[{i}].joints: every joint of {e['frame']!r}'s chain is fixed; "
                              f"name joints that move")
        out.append(dict(e, joints=moving))
    return out


def _from_plan(seg: Segment, params: dict) -> dict:
    """A carry named without its body: the plan's grasp that holds over the segment says what rides on what."""
    for w in carry_windows(seg.plan, seg.scene):
        if w.grasp <= seg.b.frame and w.release >= seg.a.frame:
            return dict(params, body=w.body, on=w.frame)
    raise MotionError(f"carry {seg.id}: name the held 'body' (and the frame it rides 'on'), or give the plan "
                      f"a grasp event holding over the segment")


@dataclass
class Limbs:
    """Poses over a segment with the arms posed by a tool and the legs walking or planted."""
    poses: list[Pose]
    roots: list[str]
    joints: list[str]
    notes: list[str]


def with_legs(seg: Segment, params: dict, upper, tool: str, carried: tuple[str, ...] = ()) -> Limbs:
    """One pose per frame: the in-between of the states, `upper(i, pose) -> pose` for what the tool
    moves, then the legs: walking (`walk`, the walk tool's parameters), planted where the first state
    has them (`legs`), or left in-between."""
    scene = seg.scene
    if "walk" in params:
        w = walk_poses(seg, params["walk"], upper=upper, carried=carried)
        return Limbs(w.poses, list(w.roots), list(w.joints), list(w.notes))
    between = interpolate_poses(scene, [(seg.a.frame, seg.a.pose.completed(scene)),
                                        (seg.b.frame, seg.b.pose.completed(scene))])
    planted = params.get("legs")
    legs, feet, roots, joints = [], {}, [], []
    if planted:
        legs = legs_of(scene, planted, tool)
        feet = sole_placements(scene, seg.a.pose.completed(scene), legs)
        roots.append(planted["root"])
        joints += [j for leg in legs for j in leg.joints]
    poses = []
    for i in range(seg.frames):
        pose = upper(i, between.pose_at(seg.a.frame + i))
        if legs:
            pose, err = place_feet(scene, pose, {leg.name: (leg.joints, leg.sole) for leg in legs}, feet, 30)
            if err > 0.005:
                raise MotionError(f"{tool} {seg.id}: the planted foot cannot stay put at frame "
                                  f"{seg.a.frame + i} ({err * 1000:.1f} mm); keep the root nearer the feet")
        poses.append(pose)
    return Limbs(poses, roots, joints, [])


def walking_joints(seg: Segment, params: dict, tool: str) -> set[str]:
    if "walk" not in params:
        return set()
    return {j for leg in legs_of(seg.scene, params["walk"], tool) for j in leg.joints}


def tracks_of(seg: Segment, poses: list[Pose], roots: list[str], joints: list[str]) -> Tracks:
    roots, joints = list(dict.fromkeys(roots)), list(dict.fromkeys(joints))
    return Tracks(seg.a.frame, {r: np.array([p.roots[r] for p in poses], float) for r in roots},
                  {j: np.array([p.joints[j] for p in poses], float) for j in joints})


def misses(scene, poses: list[Pose], aims: dict[str, dict[int, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per effector, (F,) distance from where it was aimed at each frame (nan where it was not),
    measured by forward kinematics of the poses as returned."""
    world = forward(scene, {r: np.array([p.roots[r] for p in poses], float) for r in poses[0].roots},
                    {j: np.array([p.joints[j] for p in poses], float) for j in poses[0].joints}, len(poses))
    out = {}
    for name, at in aims.items():
        body, local = frame_local(scene, name, "IK")
        pos = (world[body] @ local)[:, :3, 3]
        d = np.full(len(poses), np.nan)
        for i, target in at.items():
            d[i] = float(np.linalg.norm(pos[i] - target))
        out[name] = d
    return out


def worst_miss(seg: Segment, missed: dict[str, np.ndarray]) -> tuple[float, str]:
    worst, where = 0.0, ""
    for name, d in missed.items():
        if np.isfinite(d).any() and np.nanmax(d) > worst:
            worst, where = float(np.nanmax(d)), f"{name} at frame {seg.a.frame + int(np.nanargmax(d))}"
    return worst, where


def author_hands(seg: Segment, params: dict, tool: str) -> Authored:
    scene = seg.scene
    if tool == "carry" and "body" not in params:
        params = _from_plan(seg, params)
    effs = effectors_of(seg, params, tool)
    held = params.get("body")
    if held is not None:
        need_root(scene, held, tool, "body")
    pa, pb = seg.a.pose.completed(scene), seg.b.pose.completed(scene)
    between = interpolate_poses(scene, [(seg.a.frame, pa), (seg.b.frame, pb)])
    n = seg.frames
    u = np.linspace(0.0, 1.0, n)
    rides = tool in ("carry", "place")
    on = params.get("on")
    if on is not None:
        on_a = _world(scene, pa, on, tool)
        offset = invert(on_a) @ from_7(np.asarray(pa.roots[held], float))
    grip = {}
    if rides:
        body_a = from_7(np.asarray(pa.roots[held], float))
        grip = {e["frame"]: invert(body_a) @ _world(scene, pa, e["frame"], tool) for e in effs}
    start: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}   # effector -> (where its reach begins, target then)
    tol = float(params.get("tolerance", TOLERANCE))
    aims: dict[str, dict[int, np.ndarray]] = {e["frame"]: {} for e in effs}
    chains = [j for e in effs for j in e["joints"]]
    room = narrowed(scene, effs, tool)
    walking = walking_joints(seg, params, tool)
    eased = [j for j in moving_joints(scene) if j not in walking]
    begin = float(params.get("begin", 0.0))

    def hands(i: int, pose: Pose) -> Pose:
        for j in eased:          # the rest of the body in-between the states, the chains' IK seed
            pose.joints[j] = between.joints[j][i].tolist() if between.joints[j].ndim == 2 else float(between.joints[j][i])
        if held is not None:
            if on is not None:
                pose.roots[held] = to_7(_world(scene, pose, on, tool) @ offset).tolist()
            elif rides:
                pose.roots[held] = between.roots[held][i].tolist()
        if not rides and u[i] < begin:
            return pose          # the arms in-between the states until the reach begins
        for e in effs:
            if rides:
                target = (from_7(np.asarray(pose.roots[held], float)) @ grip[e["frame"]])[:3, 3]
            else:
                target = _reach_point(scene, pb, pose, e, start, (u[i] - begin) / max(1.0 - begin, 1e-9), tool)
            aims[e["frame"]][i] = target
            pose, _ = solve_ik(room, pose, e["joints"], [Goal(e["frame"], target)], 50)
        return pose

    roots, joints = ([held] if held is not None else []), list(chains)
    limbs = with_legs(seg, params, hands, tool, carried=(held,) if rides else ())
    notes = list(limbs.notes)
    roots += limbs.roots
    joints += limbs.joints + (eased if "walk" in params else [])
    worst, where = worst_miss(seg, misses(scene, limbs.poses, aims))
    if worst > tol:
        raise MotionError(f"{tool} {seg.id}: effector {where} misses its target by "
                          f"{worst * 1000:.1f} mm (more than {tol * 1000:.1f} mm): out of reach or "
                          f"past a joint limit")
    tracks = tracks_of(seg, limbs.poses, roots, joints)
    if effs:
        notes.append(f"{tool} {seg.id}: effectors within {worst * 1000:.2f} mm of their targets at every frame"
                     + (f" (worst: {where})" if where else ""))
    if on is not None:
        ends = np.linalg.norm(np.asarray(limbs.poses[-1].roots[held][:3]) - np.asarray(pb.roots[held][:3]))
        notes.append(f"{tool} {seg.id}: {held} rides on {on}" + (
            f"; the second state has it {ends * 1000:.1f} mm from there, which the bake fades in over the "
            f"segment (a hold that drifts past its tolerance fails EventsSatisfied)" if ends > 1e-4 else ""))
    span = {"grasp": (seg.b.frame, seg.b.frame), "carry": (seg.a.frame, seg.b.frame),
            "place": (seg.a.frame, seg.b.frame), "release": (seg.a.frame, seg.a.frame)}.get(tool)
    attachments = [{"frame": e["frame"], "body": held, "start": span[0], "end": span[1], "tolerance": tol}
                   for e in effs] if span and held is not None else []
    if tool == "release":                     # and clear of it by the segment's end
        for a in attachments:
            a["clear"] = seg.b.frame
    if on is not None:
        attachments.append({"frame": on, "body": held, "start": seg.a.frame, "end": seg.b.frame, "tolerance": tol,
                            "ride": True})
    return Authored(tracks, attachments, notes)


def _reach_point(scene, pb: Pose, pose: Pose, e: dict, start: dict, v: float, tool: str) -> np.ndarray:
    """Where a reaching effector is aimed at progress v (0..1 of its reach): from where it was when
    the reach began, through the approach point (`via`), to its target. A target that is a named
    frame or body is followed: the path is taken as it was when the reach began and carried along
    as the target moves, so a hand that starts on a moving knob stays on it."""
    name = e["frame"]
    named = isinstance(e.get("target"), str)
    if named:
        body, local = frame_local(scene, e["target"], tool)
        moving = pose_world(scene, pose)[body] @ local
    if name not in start:
        here = _world(scene, pose, name, tool)[:3, 3]
        start[name] = (here, moving if named else None)
    s0, t0 = start[name]
    if named:
        end = t0[:3, 3]
    elif "target" in e:
        end = point(e["target"], scene, pose, tool, f"effectors {name!r} target")
    else:
        end = _world(scene, pb, name, tool)[:3, 3]
    if "via" in e:
        way = end + np.asarray(e["via"], float)
        target = (s0 + smooth(v / VIA) * (way - s0) if v < VIA
                  else way + smooth((v - VIA) / (1 - VIA)) * (end - way))
    else:
        target = s0 + smooth(v) * (end - s0)
    if named and not np.array_equal(moving, t0):     # the target moved since the reach began
        target = (moving @ invert(t0) @ np.r_[target, 1.0])[:3]
    return target


def attachment_events(attachments: list[dict], tolerance: float = 0.03) -> list[dict]:
    """Plan events (a grasp where each hold begins, a release from its end until the effector is
    clear) for the events and Supported verifiers."""
    spans: dict[tuple[str, str], list[list[int]]] = {}
    for a in sorted(attachments, key=lambda a: (a["frame"], a["body"], a["start"])):
        key = (a["frame"], a["body"])
        runs = spans.setdefault(key, [])
        if runs and a["start"] <= runs[-1][1] + 1:
            runs[-1][1] = max(runs[-1][1], a["end"])
            runs[-1][2] = max(runs[-1][2], a.get("clear", a["end"] + 1))
        else:
            runs.append([a["start"], a["end"], a.get("clear", a["end"] + 1)])
    events = []
    for (frame, body), runs in spans.items():
        for k, (first, last, clear) in enumerate(runs):
            gid = f"hold_{frame}_{body}_{k}"
            events.append({"id": gid, "kind": "grasp", "subjects": [frame, body], "window": [first, first],
                           "params": {"tolerance": tolerance}, "after": []})
            events.append({"id": f"let_go_{frame}_{body}_{k}", "kind": "release", "subjects": [frame, body],
                           "window": [last, clear], "params": {"tolerance": tolerance}, "after": [gid]})
    return events


def check_hands(scene, params: dict) -> None:
    """The names in a hand tool's parameters against the scene; a MotionError "field: why" for the first
    that is not there (a held body that does not exist, an effector frame or joint the scene lacks)."""
    body = params.get("body")
    if body is not None and body not in scene.roots:
        why = "hangs on a joint (hold its root body)" if body in scene.body_names else "is no body of the scene"
        raise MotionError(f"body: {body!r} {why}")
    names = {f.name for f in scene.frames} | set(scene.body_names)
    if "on" in params and params["on"] not in names:
        raise MotionError(f"on: {params['on']!r} is no named frame or body of the scene")
    joints = {j.name for j in scene.joints}
    for i, e in enumerate(params.get("effectors", [])):
        if e["frame"] not in names:
            raise MotionError(f"effectors[{i}].frame: {e['frame']!r} is no named frame or body of the scene")
        for j in list(e["joints"]) + list(e.get("limits", {})):
            if j not in joints:
                raise MotionError(f"effectors[{i}].joints: {j!r} is no joint of the scene")
        if isinstance(e.get("target"), str) and e["target"] not in names:
            raise MotionError(f"effectors[{i}].target: {e['target']!r} is no named frame or body of the scene")


def _tool(name: str):
    def author(seg: Segment, params: dict) -> Authored:
        return author_hands(seg, params, name)
    return author


register(MotionTool("ik_reach", "Effectors (named frames) to targets (frames or points) over the segment, "
                    "their chains solved by IK within limits; the legs may walk meanwhile.",
                    _schema(False, walk=True), _tool("ik_reach"), check=check_hands))
register(MotionTool("grasp", "Effectors to a body's grip frames by IK (the legs may walk meanwhile); the body "
                    "is held from the last frame.", _schema(True, walk=True), _tool("grasp"), check=check_hands))
register(MotionTool("carry", "A held body rides on a frame (or moves between its states) while the effectors "
                    "keep their grip by IK; the legs may walk meanwhile. Without parameters, each body the plan's "
                    "grasp events hold rides on its grasping frame.", _schema(True, True, True, False), _tool("carry"),
                    check=check_hands))
register(MotionTool("place", "A held body is moved to its place in the second state (or rides on a frame), the "
                    "effectors keeping their grip; the hold ends there.", _schema(True, True, True), _tool("place"),
                    check=check_hands))
register(MotionTool("release", "Effectors leave a held body for their targets (or the second state) by IK.",
                    _schema(True), _tool("release"), check=check_hands))
