"""A skinned human made from nothing outside the studio: Rigify's human metarig (in the bpy
wheel) cut to its body bones, a closed body mesh grown around them from metaball capsules,
weights from Blender's automatic (bone heat) weighting, at most four influences a vertex,
exported as a glTF 2.0 binary with its skin.

The rig keeps the spine (hips, spine, chest, neck, head: `spine` .. `spine.006`), and per side
`shoulder`, `upper_arm`, `forearm`, `hand`, `thigh`, `shin`, `foot` and `toe`; the face,
fingers, breast, pelvis and heel bones go. The character faces -Y (Blender's front), its feet on
z = 0, scaled to `height`. Each bone's flesh is a capsule (or, for the chest and hips, an
ellipsoid) of the radius in FLESH, so the body reads as a person rather than as capsules once
the metaball field blends them.
"""
from __future__ import annotations

import math

import bpy
from mathutils import Vector

KEEP = ["spine", "spine.001", "spine.002", "spine.003", "spine.004", "spine.005", "spine.006"] + [
    f"{b}.{s}" for s in "LR" for b in ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")]
FLESH = {   # bone -> (radius, kind, (x, y, z) half sizes of an ellipsoid in metres at 1.98 m tall)
    "spine": (0.13, "ELLIPSOID", (0.16, 0.15, 0.11)), "spine.001": (0.12, "ELLIPSOID", (0.145, 0.14, 0.095)),
    "spine.002": (0.13, "ELLIPSOID", (0.155, 0.15, 0.105)), "spine.003": (0.14, "ELLIPSOID", (0.18, 0.15, 0.115)),
    "spine.004": (0.055, "CAPSULE", None), "spine.005": (0.055, "CAPSULE", None),
    "spine.006": (0.11, "ELLIPSOID", (0.10, 0.115, 0.13)),
    "shoulder": (0.055, "CAPSULE", None), "upper_arm": (0.052, "CAPSULE", None), "forearm": (0.042, "CAPSULE", None),
    "hand": (0.038, "ELLIPSOID", (0.05, 0.022, 0.06)), "thigh": (0.08, "CAPSULE", None),
    "shin": (0.058, "CAPSULE", None), "foot": (0.045, "ELLIPSOID", (0.05, 0.085, 0.04)),
    "toe": (0.035, "ELLIPSOID", (0.045, 0.04, 0.025)),
}
RESOLUTION = 0.018        # metaball polygon size at 1.98 m
SWELL = 1.45              # a metaball's surface lies inside its radius (threshold 0.6, stiffness 2)


def _select_only(ob) -> None:
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    ob.select_set(True)
    bpy.context.view_layer.objects.active = ob


def metarig(height: float):
    """Rigify's human metarig, cut to KEEP and scaled to `height` (feet on the floor)."""
    bpy.ops.preferences.addon_enable(module="rigify")
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.object
    rig.name = rig.data.name = "human"
    bpy.ops.object.mode_set(mode="EDIT")
    eb = rig.data.edit_bones
    for b in list(eb):
        if b.name not in KEEP:
            eb.remove(b)
    bpy.ops.object.mode_set(mode="OBJECT")
    top = max(b.tail_local.z for b in rig.data.bones)
    k = height / top
    rig.scale = (k, k, k)
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    for b in rig.data.bones:
        b.use_deform = True
    return rig, k


def body(rig, k: float):
    """A closed body mesh grown around the bones from metaballs."""
    mb = bpy.data.metaballs.new("human_body")
    mb.resolution = mb.render_resolution = RESOLUTION * k
    mb.threshold = 0.6
    for b in rig.data.bones:
        key = b.name.split(".")[0] if not b.name.startswith("spine") else b.name
        radius, kind, half = FLESH[key]
        head, tail = Vector(b.head_local), Vector(b.tail_local)
        e = mb.elements.new(type=kind)
        e.co = (head + tail) / 2
        e.radius = radius * k * SWELL
        e.stiffness = 2.0
        along = (tail - head).normalized()
        if kind == "CAPSULE":
            e.size_x = (tail - head).length / 2
            e.rotation = Vector((1.0, 0.0, 0.0)).rotation_difference(along)
        else:
            e.size_x, e.size_y, e.size_z = (v / radius for v in half)    # in units of the radius
            up = b.matrix_local.to_quaternion()
            e.rotation = up
    ob = bpy.data.objects.new("human_body", mb)
    bpy.context.scene.collection.objects.link(ob)
    _select_only(ob)
    bpy.ops.object.convert(target="MESH")
    mesh = bpy.context.object
    mesh.name = mesh.data.name = "human_skin"
    return mesh


def weights(rig, mesh) -> None:
    """Bone heat weights, at most four influences a vertex, normalised."""
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    mesh.select_set(True)
    rig.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.parent_set(type="ARMATURE_AUTO")
    _select_only(mesh)
    bpy.ops.object.vertex_group_limit_total(group_select_mode="ALL", limit=4)
    bpy.ops.object.vertex_group_normalize_all(group_select_mode="ALL", lock_active=False)
    empty = [g.name for g in mesh.vertex_groups if not any(g.index in [x.group for x in v.groups]
                                                            for v in mesh.data.vertices[:1])]
    del empty
    unweighted = sum(1 for v in mesh.data.vertices if not v.groups)
    if unweighted:
        raise RuntimeError(f"automatic weights left {unweighted} vertices without a bone")


def make_human(height: float = 1.75):
    """The rig and its skinned mesh in the current (empty) file."""
    rig, k = metarig(height)
    mesh = body(rig, k)
    weights(rig, mesh)
    return rig, mesh


def export_glb(path: str) -> None:
    bpy.ops.export_scene.gltf(filepath=path, export_format="GLB", export_skins=True, export_animations=False,
                              export_yup=True, export_def_bones=True, export_materials="NONE",
                              export_normals=True, export_apply=False)


def height_of(rig) -> float:
    return max(b.tail_local.z for b in rig.data.bones) * rig.scale.z


__all__ = ["make_human", "export_glb", "KEEP", "math"]
