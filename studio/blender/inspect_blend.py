"""Read a saved .blend back: objects, the joint hierarchy, the frame range and
every body's world transform at chosen frames, as JSON.

Run on its own in a fresh Blender process (`python inspect_blend.py FILE
[FRAME ...]` prints the JSON) so a check sees only what the file holds.
"""
from __future__ import annotations

import json
import os
import sys

import bpy


class BlendError(ValueError):
    """A .blend that cannot be opened."""


def open_blend(path: str) -> None:
    if not os.path.isfile(path):
        raise BlendError(f"{path}: no such .blend file")
    with open(path, "rb") as f:
        head = f.read(12)
    if not (head.startswith(b"BLENDER") or head[:2] == b"\x1f\x8b" or head[:4] == b"\x28\xb5\x2f\xfd"):
        raise BlendError(f"{path}: not a .blend file (it does not start with the BLENDER header)")
    try:
        bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
    except RuntimeError as e:
        raise BlendError(f"{path}: Blender cannot open it ({str(e).strip()})") from None


def describe(frames: list[int]) -> dict:
    """What the open file holds, with world matrices of every mesh object at `frames`."""
    scene = bpy.context.scene
    out = {"scene": scene.name, "frame_start": scene.frame_start, "frame_end": scene.frame_end,
           "fps": scene.render.fps / scene.render.fps_base,
           "resolution": [scene.render.resolution_x, scene.render.resolution_y],
           "camera": scene.camera.name if scene.camera else None,
           "objects": {}, "joints": {}, "frames": {},
           "shots": [{"frame": m.frame, "camera": m.camera.name, "name": m.name}
                     for m in sorted(scene.timeline_markers, key=lambda m: m.frame) if m.camera]}
    for ob in scene.objects:
        out["objects"][ob.name] = {"type": ob.type, "parent": ob.parent.name if ob.parent else None}
        if "keypose_joint" in ob:
            out["joints"][ob["keypose_joint"]] = {
                "type": ob["type"], "axis": list(ob["axis"]), "lower": ob["lower"], "upper": ob["upper"],
                "parent": ob.parent.name if ob.parent else None,
                "children": [c.name for c in ob.children]}
        if ob.type == "CAMERA":
            out["objects"][ob.name].update(lens_mm=ob.data.lens, sensor_mm=ob.data.sensor_width)
    meshes = [ob for ob in scene.objects if ob.type == "MESH"]
    for f in frames:
        scene.frame_set(int(f))
        world = {ob.name: [list(r) for r in ob.matrix_world] for ob in meshes}
        values = {}
        for ob in meshes:
            if ob.parent is not None and "keypose_joint" in ob.parent:
                j = ob.parent
                if j["type"] == "revolute":
                    values[j["keypose_joint"]] = float(ob.rotation_axis_angle[0])
                elif j["type"] == "prismatic":
                    values[j["keypose_joint"]] = float(sum(a * b for a, b in zip(ob.location, j["axis"])))
                elif j["type"] == "ball":
                    values[j["keypose_joint"]] = list(ob.rotation_quaternion.to_axis_angle()[0]
                                                      * ob.rotation_quaternion.to_axis_angle()[1])
        out["frames"][str(f)] = {"world": world, "joints": values,
                                 "camera": scene.camera.name if scene.camera else None,
                                 "cameras": {ob.name: list(ob.matrix_world.translation)
                                             for ob in scene.objects if ob.type == "CAMERA"}}
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: inspect_blend.py FILE.blend [FRAME ...]", file=sys.stderr)
        return 2
    try:
        open_blend(argv[0])
    except BlendError as e:
        print(json.dumps({"error": str(e)}))
        return 1
    frames = [int(a) for a in argv[1:]]
    print("KEYPOSE-JSON " + json.dumps(describe(frames)))
    return 0


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    sys.exit(main(args))
