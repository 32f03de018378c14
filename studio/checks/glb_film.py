"""What a studio-written glTF film says besides its meshes and motion, read back for the verifiers.

`studio export --gltf` writes, on the scene, `extras.studio` with the plan's
events and shots, the holds the motion tools recorded (`attachments`), named
frames, joints and allowed overlaps, and on each body's node its kind, flags
and group (see studio/blender/interchange.py). Read back, the joints make the
film's bodies a tree again: each joint's value at every frame is recovered
from its two nodes' transforms (a revolute joint's angle about its axis,
unwrapped over the frames; a prismatic joint's travel; a ball joint's
rotation vector), and forward kinematics of those values must put every body
where its node is (within MATCH m; a skin, which its bones move, aside), or the file is refused naming the joint,
so extras that disagree with the motion are never believed. Every field is
checked like the rest of the file: a fault raises GlbError naming the JSON path.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import IRError, Scene
from studio.scene.kinematics import forward, tree_order
from studio.scene.pose import Tracks
from studio.scene.transforms import from_7, invert, quat_to_rotvec, matrix_to_quat

MATCH = 1e-4          # metres (and radians) forward kinematics may differ from the nodes


def _list(v, where: str, fail) -> list:
    if v is None:
        return []
    if not isinstance(v, list):
        raise fail(f"{where}: expected a list")
    return v


def studio_scene(scene: Scene, studio: dict, world: dict[str, np.ndarray], frame_start: int, fail,
                 skins: set[str] = frozenset()) -> tuple[Scene, Tracks, dict | None, list[dict]]:
    """The scene with the extras' frames, joints and overlaps; its tracks (roots, joint values); the
    plan (events and shots) and the holds, or None and [] when the file carries none."""
    w = "scenes[0].extras.studio"
    d = scene.to_dict()
    for key in ("frames", "joints", "allowed_overlaps"):
        d[key] = _list(studio.get(key), f"{w}.{key}", fail)
    for b in d["bodies"]:                 # the meshes are the file's own: only names and structure are checked
        b["geometry"] = {"source": "none"}
    try:
        full = Scene.from_dict(d, where=w)
    except (IRError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise fail(str(e)) from None
    full.bodies = list(scene.bodies)
    n = next(iter(world.values())).shape[0]
    roots = {r: _seven(world[r]) for r in full.roots}
    joints = {}
    by_child = {j.child: j for j in full.joints}
    for body in tree_order(full):
        j = by_child.get(body)
        if j is None or j.type == "fixed":
            continue
        rel = invert(world[j.parent]) @ world[j.child]
        m = invert(from_7(np.asarray(j.origin.as_list())))[None] @ rel
        axis = np.asarray(j.axis, float)
        if j.type == "revolute":
            joints[j.name] = np.unwrap(quat_to_rotvec(matrix_to_quat(m[:, :3, :3])) @ axis)
        elif j.type == "prismatic":
            joints[j.name] = m[:, :3, 3] @ axis
        else:
            joints[j.name] = quat_to_rotvec(matrix_to_quat(m[:, :3, :3]))
    tracks = Tracks(frame_start, roots, joints)
    got = forward(full, roots, joints, n)
    for i, jt in enumerate(full.joints):
        if jt.child in skins:               # a skin's node frame is not its body's: its bones move it
            continue
        off = float(np.max(np.abs(got[jt.child] - world[jt.child])[:, :3, :]))
        if off > MATCH:
            raise fail(f"{w}.joints[{i}]: joint {jt.name!r} does not reproduce the motion of node {jt.child!r} "
                       f"(off by {off:.2g}); the extras disagree with the animation")
    plan = None
    if "events" in studio or "shots" in studio:
        from studio.timeline.plan import PlanError, subject_names, validate_plan
        plan = {"events": _list(studio.get("events"), f"{w}.events", fail),
                "shots": _list(studio.get("shots"), f"{w}.shots", fail)}
        try:
            validate_plan(plan)
        except PlanError as e:
            raise fail(f"{w}: {e}") from None
        names = subject_names(full)
        for i, e in enumerate(plan["events"]):
            for k, s in enumerate(e.get("subjects", [])):
                if e["kind"] != "order" and s not in names:
                    raise fail(f"{w}.events[{i}].subjects[{k}]: {s!r} is not a body, group or frame of the film")
    holds = []
    for i, a in enumerate(_list(studio.get("attachments"), f"{w}.attachments", fail)):
        at = f"{w}.attachments[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("frame"), str) or not isinstance(a.get("body"), str):
            raise fail(f"{at}: expected an object with frame, body, start and end")
        if a["body"] not in full.body_names or a["frame"] not in {f.name for f in full.frames} | set(full.body_names):
            raise fail(f"{at}: {a['frame']!r} holding {a['body']!r}: no such frame or body in the film")
        if not all(isinstance(a.get(k), int) and not isinstance(a.get(k), bool) for k in ("start", "end")):
            raise fail(f"{at}: start and end must be whole frame numbers")
        holds.append(dict(a))
    return full, tracks, plan, holds


def _seven(m: np.ndarray) -> np.ndarray:
    return np.concatenate([m[:, :3, 3], matrix_to_quat(m[:, :3, :3])], axis=1)
