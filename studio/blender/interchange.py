"""Interchange a studio's pipeline reads: the built, animated scene as OpenUSD and as glTF 2.0.

Both come from the same Blender scene the .blend holds (bodies, joint empties,
armatures and skins, cameras, one key per frame), through Blender's own
exporters: USD at the film's frame rate with its frame numbers as time codes
(startTimeCode = the first frame); a binary glTF (+Y up, as glTF says) whose
animation starts at time 0 for the first frame. The glTF's scene then gets the
studio's extras (`{"studio": {...}}`: fps, frame_start, the plan's events, the
holds the motion tools recorded, named frames, joints, allowed overlaps, and
`node_frames: "y-up"`, since the exporter turns every node's own frame to +Y up
while named frames and joints are given in the studio's body frames) and
each body's node its kind and flags, so `studio verify` reads the same film
back with the same verdicts; the extras are written into the file's JSON chunk
after Blender wrote it (Blender's custom properties cannot hold lists of
objects).
"""
from __future__ import annotations

import json
import os
import struct

import bpy

from outputs import SpecError, part_path, publish
from renders import disk_full_as_such as disk_full_as_such_for

MAGIC, JSON_CHUNK = 0x46546C67, 0x4E4F534A


def export_usd(path: str) -> str:
    """The scene, its animation over the frame range, cameras, armatures and skins as USD."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".usd", ".usdc", ".usda"):
        raise SpecError(f"spec usd: {path!r}: expected a .usd, .usdc or .usda file")
    tmp = part_path(path)
    with disk_full_as_such_for(path):
        result = bpy.ops.wm.usd_export(filepath=tmp, export_animation=True, export_armatures=True,
                                       export_shapekeys=False, export_cameras=True, export_lights=True,
                                       export_materials=True, export_custom_properties=True,
                                       evaluation_mode="RENDER", merge_parent_xform=False,
                                       convert_orientation=False, export_uvmaps=False)
    if "FINISHED" not in result:
        raise RuntimeError(f"Blender's USD exporter did not finish ({result})")
    return publish(tmp, path)


def export_gltf(path: str, extras: dict, bodies: dict[str, dict]) -> str:
    """The scene as an animated .glb, with the studio's extras on the scene and the bodies' nodes."""
    if os.path.splitext(path)[1].lower() != ".glb":
        raise SpecError(f"spec gltf: {path!r}: expected a .glb file")
    tmp = part_path(path)
    scene = bpy.context.scene
    with disk_full_as_such_for(path):
        result = bpy.ops.export_scene.gltf(filepath=tmp, export_format="GLB", export_animations=True,
                                           export_force_sampling=True, export_optimize_animation_size=False,
                                           export_anim_slide_to_zero=True, export_frame_range=True,
                                           export_frame_step=1, export_extras=False, export_yup=True,
                                           export_cameras=True, export_animation_mode="SCENE",
                                           export_merge_animation="ACTION")
    if "FINISHED" not in result:
        raise RuntimeError(f"Blender's glTF exporter did not finish ({result})")
    with open(tmp, "rb") as f:
        data = f.read()
    with open(tmp, "wb") as f:
        f.write(with_extras(data, dict(extras, fps=scene.render.fps, frame_start=scene.frame_start,
                                       node_frames="y-up"), bodies))
    return publish(tmp, path)


def with_extras(glb: bytes, studio: dict, bodies: dict[str, dict]) -> bytes:
    """The .glb with {"studio": studio} on its scene and bodies[node name] on each body's node."""
    magic, version, length = struct.unpack_from("<III", glb, 0)
    clen, ctype = struct.unpack_from("<II", glb, 12)
    if magic != MAGIC or ctype != JSON_CHUNK:
        raise RuntimeError("Blender's glTF exporter wrote no binary glTF")
    doc = json.loads(glb[20:20 + clen].decode("utf-8").rstrip(" \x00"))
    rest = glb[20 + clen:length]
    for s in doc.get("scenes", []):
        s.setdefault("extras", {})["studio"] = studio
    for n in doc.get("nodes", []):
        if n.get("name") in bodies and "mesh" in n:
            n.setdefault("extras", {})["studio"] = bodies[n["name"]]
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    total = 12 + 8 + len(text) + len(rest)
    return struct.pack("<III", MAGIC, version, total) + struct.pack("<II", len(text), JSON_CHUNK) + text + rest
