"""Skinned characters in Blender: an armature whose bones follow the character's bone bodies, and
the skin mesh deformed by it.

The skin body's own object stays in the joint tree where the IR puts it (so a reopened .blend
still matches the scene) with an empty mesh; the skin's mesh is on `skin:<body>`, at the origin.

The studio's bone bodies are built like every body (objects in the joint hierarchy, posed by
poses and keyed by tracks). For each skin the worker adds an armature object at the world origin
whose edit bones rest at the inverse of the skin's inverse bind matrices, makes the skin body's
object a child of nothing at the origin with a vertex group per bone (the skin's four weights a
vertex) and an Armature modifier (no preserve volume: linear blend skinning, as the verifiers
compute it), and gives each pose bone a Copy Transforms constraint from its bone body, so a
posed still or a keyed frame deforms the skin as the studio does. For a film, the bones' world
matrices at every frame (computed by the studio from the baked tracks) are keyed into the
armature's action and the constraints removed, so the .blend, and the USD and glTF made from it,
hold the armature with its action.
"""
from __future__ import annotations

import numpy as np

import bpy
from mathutils import Matrix

from outputs import SpecError

LINEAR = 1


def _load(path: str) -> dict:
    try:
        with np.load(path) as z:
            return {"bones": bytes(z["bones"]).decode("utf-8").split("\n"), "ibm": z["ibm"].astype(float),
                    "joints": z["joints"].astype(np.int64), "weights": z["weights"].astype(float)}
    except Exception as e:        # a truncated or foreign file
        raise SpecError(f"spec skins: {path} is not a skin ({e})") from None


def build_skins(skins: list[dict], objects: dict, path_of) -> None:
    """For each {"body", "skin", "parents"}: its armature, vertex groups and modifier (see above)."""
    for s in skins:
        data = _load(path_of(s["skin"]))
        body = s["body"]
        if body not in objects:
            raise SpecError(f"spec skins: no body {body!r}")
        arm = bpy.data.armatures.new(f"{body}-rig")
        rig = bpy.data.objects.new(f"armature:{body}", arm)
        bpy.context.scene.collection.objects.link(rig)
        for o in bpy.context.view_layer.objects:
            o.select_set(False)
        bpy.context.view_layer.objects.active = rig
        rig.select_set(True)
        bpy.ops.object.mode_set(mode="EDIT")
        rest = np.linalg.inv(data["ibm"])
        heads = rest[:, :3, 3]
        made = []
        for k, name in enumerate(data["bones"]):
            eb = arm.edit_bones.new(name)
            kids = [c for c, p in enumerate(s["parents"]) if p == k]
            length = max(0.03, min((float(np.linalg.norm(heads[c] - heads[k])) for c in kids), default=0.08))
            eb.head = (0.0, 0.0, 0.0)
            eb.tail = (0.0, length, 0.0)
            eb.matrix = Matrix(rest[k].tolist())
            made.append(eb)
        for k, p in enumerate(s["parents"]):
            if p >= 0:
                made[k].parent = made[p]
        bpy.ops.object.mode_set(mode="OBJECT")
        for name in data["bones"]:
            c = rig.pose.bones[name].constraints.new("COPY_TRANSFORMS")
            c.target = objects[name]
            c.owner_space = c.target_space = "WORLD"
        held = objects[body]              # the skin body stays in the joint tree, with nothing to draw;
        skin = bpy.data.objects.new(f"skin:{body}", held.data)       # its mesh deforms on its own object
        held.data = bpy.data.meshes.new(f"{body}-frame")
        bpy.context.scene.collection.objects.link(skin)
        skin.matrix_world = Matrix.Identity(4)
        groups = [skin.vertex_groups.new(name=name) for name in data["bones"]]
        j, w = data["joints"], data["weights"]
        for k, g in enumerate(groups):
            for slot in range(4):
                idx = np.nonzero((j[:, slot] == k) & (w[:, slot] > 0))[0]
                for weight in np.unique(w[idx, slot]):
                    g.add(idx[w[idx, slot] == weight].tolist(), float(weight), "ADD")
        mod = skin.modifiers.new("skin", "ARMATURE")
        mod.object = rig
        mod.use_deform_preserve_volume = False
        mod.use_vertex_groups = True
        skin["keypose_skin"] = body
        objects[rig.name] = rig
        objects[skin.name] = skin
    bpy.context.view_layer.update()


def key_skin_actions(skins: list[dict], objects: dict, path_of, first: int) -> None:
    """Key each armature's bones from the studio's bone world matrices per frame ({"pose": npz}) and
    drop the constraints, so the action alone moves the skin."""
    for s in skins:
        if not s.get("pose"):
            continue
        rig = objects[f"armature:{s['body']}"]
        with np.load(path_of(s["pose"])) as z:
            world = z["world"].astype(float)                       # (F,J,4,4)
        data = _load(path_of(s["skin"]))
        rest = np.linalg.inv(data["ibm"])                          # armature space = world (rig at origin)
        n = world.shape[0]
        frames = np.arange(first, first + n, dtype=float)
        if rig.animation_data is None:
            rig.animation_data_create()
        action = bpy.data.actions.new(f"{s['body']}-pose")
        rig.animation_data.action = action
        for k, name in enumerate(data["bones"]):
            p = s["parents"][k]
            if p < 0:
                basis = np.linalg.inv(rest[k])[None] @ world[:, k]
            else:
                local_rest = np.linalg.inv(rest[p]) @ rest[k]
                basis = np.linalg.inv(local_rest)[None] @ np.linalg.inv(world[:, p]) @ world[:, k]
            pb = rig.pose.bones[name]
            pb.rotation_mode = "QUATERNION"
            loc = basis[:, :3, 3]
            quat = _quats(basis[:, :3, :3])
            for path, values in (("location", loc), ("rotation_quaternion", quat)):
                for i in range(values.shape[1]):
                    fc = action.fcurve_ensure_for_datablock(rig, f'pose.bones["{name}"].{path}', index=i,
                                                           group_name=name)
                    fc.keyframe_points.clear()
                    fc.keyframe_points.add(n)
                    fc.keyframe_points.foreach_set("co", np.column_stack([frames, values[:, i]]).ravel())
                    fc.keyframe_points.foreach_set("interpolation", [LINEAR] * n)
                    fc.update()
            for c in list(pb.constraints):
                pb.constraints.remove(c)
    bpy.context.view_layer.update()


def _quats(r: np.ndarray) -> np.ndarray:
    """(F,4) w x y z of rotation matrices (F,3,3), neighbours sign-matched."""
    from mathutils import Matrix as M
    q = np.array([list(M(m.tolist()).to_quaternion()) for m in r], float)
    for i in range(1, len(q)):
        if np.dot(q[i], q[i - 1]) < 0:
            q[i] = -q[i]
    return q


def probe(skins: list[dict], objects: dict, frames: list[int]) -> dict[str, np.ndarray]:
    """The evaluated (deformed) world vertices of each skin at `frames`: {"<body>": (F,N,3)}, and
    {"<body>.seconds": (F,)} how long Blender took to set and evaluate each frame."""
    import time
    scene = bpy.context.scene
    out = {}
    for s in skins:
        ob = objects[f"skin:{s['body']}"]
        got, took = [], []
        for f in frames:
            t0 = time.perf_counter()
            scene.frame_set(int(f))
            deps = bpy.context.evaluated_depsgraph_get()
            ev = ob.evaluated_get(deps)
            me = ev.to_mesh()
            v = np.empty(len(me.vertices) * 3)
            me.vertices.foreach_get("co", v)
            m = np.array(ev.matrix_world)
            v = v.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]
            ev.to_mesh_clear()
            took.append(time.perf_counter() - t0)
            got.append(v)
        out[s["body"]] = np.stack(got)
        out[f"{s['body']}.seconds"] = np.array(took)
    return out
