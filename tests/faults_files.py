"""Files for the fault tests: a .gltf with an external .bin and a texture,
made here byte by byte so each test can break one reference."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image


def write_gltf(folder: Path, name: str = "crate", buffer_uri: str | None = None,
               image_uri: str = "textures/crate.png", size: float = 0.4) -> Path:
    """A box as `<name>.gltf` naming `<name>.bin` (positions, uvs, indices) and a PNG texture."""
    folder.mkdir(parents=True, exist_ok=True)
    box = trimesh.creation.box((size, size, size))
    v = np.asarray(box.vertices, np.float32)
    uv = np.zeros((len(v), 2), np.float32)
    f = np.asarray(box.faces, np.uint32).ravel()
    blob = v.tobytes() + uv.tobytes() + f.tobytes()
    buffer_uri = buffer_uri or f"{name}.bin"
    (folder / buffer_uri).parent.mkdir(parents=True, exist_ok=True)
    if not buffer_uri.startswith(".."):
        (folder / buffer_uri).write_bytes(blob)
    tex = folder / image_uri
    tex.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), (200, 120, 40)).save(tex)
    views = [(0, v.nbytes), (v.nbytes, uv.nbytes), (v.nbytes + uv.nbytes, f.nbytes)]
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2,
                                    "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
        "textures": [{"source": 0}], "images": [{"uri": image_uri}],
        "buffers": [{"uri": buffer_uri, "byteLength": len(blob)}],
        "bufferViews": [{"buffer": 0, "byteOffset": o, "byteLength": n} for o, n in views],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": len(v), "type": "VEC3",
             "min": v.min(0).tolist(), "max": v.max(0).tolist()},
            {"bufferView": 1, "componentType": 5126, "count": len(v), "type": "VEC2"},
            {"bufferView": 2, "componentType": 5125, "count": len(f), "type": "SCALAR"}],
    }
    path = folder / f"{name}.gltf"
    path.write_text(json.dumps(doc, indent=1))
    return path
