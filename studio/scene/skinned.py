"""A skinned character (a glTF skin) made into scene bodies, joints and frames.

Every bone becomes a body of kind `bone`, named `<character>-<bone>` (dots made underscores):
it moves the skin and carries frames, its mass is its share in the rig profile, and its
geometry is the convex hull of the skin it carries most (each vertex counted for the bone of
its largest weight), which is its footprint and centre of mass for the motion tools; the
checks never test a bone, they test the skin. The skin itself is one body, `<character>-skin`,
held on the root bone by a fixed joint, its geometry the skin asset (`studio.scene.skin`),
deformed at every frame by linear blend skinning.

Each bone turns about the axes its profile gives (`studio.scene.rig_profile`), each axis a
revolute joint with the profile's limits, chained through bodies without a surface
(`<bone>-x`, `<bone>-y`) so the last joint's child is the bone; a bone the profile leaves out
is fixed. A glTF character faces +Z (glTF's front: -Y once turned +Z up); it is imported
turned to face +X, as every studio character does, then by `yaw`, its lowest skin vertex on
the floor.

Legs are found as for a robot: the bones whose hull reaches the floor at rest, here the one
nearest the root in each chain (a foot, with its toe), and their joints from the trunk down;
hands are bones named `hand`, each with a grip frame at its hull's centroid and its arm's
joints (from where the two arms' chains part).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import trimesh

from studio.scene.rig_profile import base_name, bone_axes, bone_mass
from studio.scene.skin import Skin, deform

FOOT_BAND = 0.01
FACING = math.pi / 2        # a glTF character's front (-Y here) turned to +X


@dataclass
class SkinnedParts:
    bodies: list[dict] = field(default_factory=list)
    joints: list[dict] = field(default_factory=list)
    frames: list[dict] = field(default_factory=list)
    hulls: dict[str, trimesh.Trimesh] = field(default_factory=dict)     # bone body -> hull, to be written
    skin: Skin | None = None
    skin_body: str = ""
    root: str = ""
    rest: list[float] = field(default_factory=list)
    legs: list[dict] = field(default_factory=list)
    hands: list[dict] = field(default_factory=list)
    bones: dict[str, str] = field(default_factory=dict)                 # bone -> body


def body_name(prefix: str, bone: str) -> str:
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '_', bone)}"[:64]


def _quat(m: np.ndarray) -> list[float]:
    from studio.scene.transforms import matrix_to_quat
    q = matrix_to_quat(np.asarray(m, float))
    return [float(v) for v in (q if q[0] >= 0 else -q)]


def _origin(m: np.ndarray) -> dict:
    return {"position": [float(v) for v in m[:3, 3]], "rotation": _quat(m[:3, :3])}


def skinned_parts(data, name: str, profile: dict, position=(0.0, 0.0, 0.0), yaw: float = 0.0) -> SkinnedParts:
    """data: a SkinData-like object (bones, parents, rest, ibm, vertices, faces, joints, weights)."""
    tops = [k for k, p in enumerate(data.parents) if p < 0]
    if len(tops) != 1:
        raise ValueError(f"the skin has {len(tops)} top bones ({[data.bones[k] for k in tops][:4]}); a character "
                         "needs one root bone")
    out = SkinnedParts()
    out.bones = {b: body_name(name, b) for b in data.bones}
    if len(set(out.bones.values())) != len(out.bones):
        raise ValueError("two bones have the same name once made into studio names")
    skin = Skin(list(out.bones[b] for b in data.bones), np.asarray(data.vertices, float),
                np.asarray(data.faces, np.int64), np.asarray(data.joints, np.int64),
                np.asarray(data.weights, float), np.asarray(data.ibm, float))
    rest = np.asarray(data.rest, float)
    at_rest = deform(skin, rest)                                     # (N,3), unplaced
    turn = FACING + yaw
    place = np.eye(4)
    place[:3, :3] = [[math.cos(turn), -math.sin(turn), 0], [math.sin(turn), math.cos(turn), 0], [0, 0, 1]]
    root = tops[0]
    lifted = place @ rest[root]
    place[:3, 3] = [position[0] - lifted[0, 3], position[1] - lifted[1, 3],
                    position[2] - float((at_rest @ place[:3, :3].T)[:, 2].min())]
    world = place[None] @ rest                                       # each bone at rest, placed
    dominant = np.asarray(data.joints)[np.arange(len(skin.vertices)), np.argmax(data.weights, axis=1)]
    placed = at_rest @ place[:3, :3].T + place[:3, 3]
    out.root = out.bones[data.bones[root]]
    out.rest = [*map(float, world[root][:3, 3]), *_quat(world[root][:3, :3])]
    for k, bone in enumerate(data.bones):
        body = out.bones[bone]
        mine = placed[dominant == k]
        geometry = {"source": "none"}
        if len(mine) >= 4:
            local = (mine - world[k][:3, 3]) @ world[k][:3, :3]
            try:
                hull = trimesh.Trimesh(local, process=False).convex_hull
                out.hulls[body] = trimesh.Trimesh(np.asarray(hull.vertices), np.asarray(hull.faces), process=False)
                geometry = None                                      # the caller writes the hull
            except Exception:         # a flat handful of vertices: no hull, a bone without footprint
                pass
        out.bodies.append({"name": body, "kind": "bone", "group": name, "mass": bone_mass(profile, bone),
                           "geometry": geometry})
        out.frames.append({"name": body, "body": body})
        p = data.parents[k]
        if p < 0:
            continue
        local = np.linalg.inv(rest[p]) @ rest[k]
        axes = bone_axes(profile, bone) if p >= 0 else []
        parent = out.bones[data.bones[p]]
        if not axes:
            out.joints.append({"name": body, "type": "fixed", "parent": parent, "child": body,
                               "origin": _origin(local)})
            continue
        for i, (axis_name, axis, lo, hi) in enumerate(axes):
            last = i == len(axes) - 1
            child = body if last else f"{body}-{axis_name}"
            if not last:
                out.bodies.append({"name": child, "kind": "link", "group": name, "mass": 0.0,
                                   "geometry": {"source": "none"}})
            out.joints.append({"name": f"{body}-{axis_name}", "type": "revolute", "parent": parent, "child": child,
                               "origin": _origin(local if i == 0 else np.eye(4)), "axis": list(axis),
                               "lower": lo, "upper": hi})
            parent = child
    out.skin = skin
    out.skin_body = f"{name}-skin"
    out.bodies.append({"name": out.skin_body, "kind": "rigid", "group": name, "mass": 0.0, "geometry": None})
    out.joints.append({"name": out.skin_body, "type": "fixed", "parent": out.root, "child": out.skin_body,
                       "origin": _origin(np.linalg.inv(world[root]) @ place)})
    _legs_and_hands(out, data, world, turn)
    return out


def _chain(data, k: int) -> list[int]:
    out = []
    while data.parents[k] >= 0:
        out.append(k)
        k = data.parents[k]
    return list(reversed(out))


def _joints_of(out: SkinnedParts, data, bones: list[int]) -> list[str]:
    names = []
    for k in bones:
        body = out.bones[data.bones[k]]
        names += [j["name"] for j in out.joints if j["type"] == "revolute" and
                  (j["child"] == body or j["child"].startswith(f"{body}-")) and j["name"].startswith(f"{body}-")]
    return names


def _legs_and_hands(out: SkinnedParts, data, world: np.ndarray, turn: float) -> None:
    low = {}
    for k, bone in enumerate(data.bones):
        h = out.hulls.get(out.bones[bone])
        if h is not None:
            low[k] = float((h.vertices @ world[k][:3, :3].T + world[k][:3, 3])[:, 2].min())
    if not low:
        return
    floor = min(low.values())
    on = [k for k, z in low.items() if z <= floor + FOOT_BAND]
    feet = [k for k in on if not any(o != k and o in _chain(data, k) for o in on)]   # nearest the root
    legs = []
    for k in feet:
        joints = _joints_of(out, data, _chain(data, k))
        if len(joints) < 2:
            continue
        body = out.bones[data.bones[k]]
        v = out.hulls[body].vertices @ world[k][:3, :3].T + world[k][:3, 3]
        under = v[v[:, 2] <= v[:, 2].min() + 0.01]
        level = np.eye(4)                  # level, facing the character's way
        level[:3, :3] = [[math.cos(turn), -math.sin(turn), 0], [math.sin(turn), math.cos(turn), 0], [0, 0, 1]]
        level[:3, 3] = [*under[:, :2].mean(axis=0), v[:, 2].min()]
        local = np.linalg.inv(world[k]) @ level
        sole = f"{body}-sole"
        out.frames.append({"name": sole, "body": body, "local": _origin(local)})
        legs.append({"joints": joints, "sole": sole, "at": level[:3, 3], "foot": "flat"})
    if len(legs) >= 2:
        centre = np.mean([leg["at"][:2] for leg in legs], axis=0)
        ang = [math.atan2(*(leg["at"][:2] - centre)[::-1]) for leg in legs]
        for i, k in enumerate(np.argsort(ang)):
            legs[k]["phase"] = 0.5 * (i % 2)
        out.legs = [{key: leg[key] for key in ("joints", "sole", "phase", "foot")} for leg in legs]
    hands = [k for k, b in enumerate(data.bones) if base_name(b).lower().startswith("hand")]
    chains = {k: _chain(data, k) for k in hands}
    for k in hands:
        others = {b for o, c in chains.items() if o != k for b in c}
        mine = [b for b in chains[k] if b not in others]
        body = out.bones[data.bones[k]]
        hull = out.hulls.get(body)
        grip = f"{body}-grip"
        centre = hull.centroid.tolist() if hull is not None else [0.0, 0.0, 0.0]
        out.frames.append({"name": grip, "body": body, "local": {"position": centre, "rotation": [1.0, 0, 0, 0]}})
        out.hands.append({"frame": grip, "joints": _joints_of(out, data, mine)})
