"""Animated glTF binaries written byte by byte in the tests: meshes, nodes, channels, and the packing."""
from __future__ import annotations

import json
import struct

import numpy as np
import trimesh

MAGIC, JSON_CHUNK, BIN_CHUNK = 0x46546C67, 0x4E4F534A, 0x004E4942


def pack(doc: dict, blob: bytes | None, json_bytes: bytes | None = None) -> bytes:
    """A .glb of this JSON document (or these raw JSON bytes) and BIN chunk."""
    js = json_bytes if json_bytes is not None else json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    body = struct.pack("<II", len(js), JSON_CHUNK) + js
    if blob is not None:
        blob = bytes(blob) + b"\0" * (-len(blob) % 4)
        body += struct.pack("<II", len(blob), BIN_CHUNK) + blob
    return struct.pack("<III", MAGIC, 2, 12 + len(body)) + body


class GlbWriter:
    """A minimal glTF 2.0 binary: meshes, nodes (TRS or matrix, children), animation channels."""

    def __init__(self, extras: dict | None = None):
        self.doc = {"asset": {"version": "2.0"}, "scenes": [{"nodes": []}], "scene": 0, "nodes": [],
                    "meshes": [], "accessors": [], "bufferViews": [], "buffers": [], "animations": []}
        if extras is not None:
            self.doc["scenes"][0]["extras"] = {"studio": extras}
        self.blob = bytearray()

    def accessor(self, array, ctype=5126, typ=None):
        array = np.asarray(array)
        typ = typ or {1: "SCALAR", 3: "VEC3", 4: "VEC4"}[1 if array.ndim == 1 else array.shape[1]]
        data = np.ascontiguousarray(array, dtype={5126: "<f4", 5125: "<u4", 5123: "<u2"}[ctype]).tobytes()
        while len(self.blob) % 4:
            self.blob.append(0)
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(data)})
        self.blob += data
        acc = {"bufferView": len(self.doc["bufferViews"]) - 1, "componentType": ctype, "count": len(array),
               "type": typ}
        if typ == "VEC3" and ctype == 5126:
            acc["min"], acc["max"] = array.min(0).tolist(), array.max(0).tolist()
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def mesh(self, meshes: list[trimesh.Trimesh], indexed=True) -> int:
        """One glTF mesh with a primitive per trimesh (non-indexed: three vertices per triangle)."""
        prims = []
        for m in meshes:
            if indexed:
                prims.append({"attributes": {"POSITION": self.accessor(m.vertices)},
                              "indices": self.accessor(m.faces.reshape(-1), 5125)})
            else:
                prims.append({"attributes": {"POSITION": self.accessor(m.vertices[m.faces].reshape(-1, 3))}})
        self.doc["meshes"].append({"primitives": prims})
        return len(self.doc["meshes"]) - 1

    def node(self, name, mesh=None, parent=None, extras=None, **trs) -> int:
        node = {"name": name, **{k: list(v) for k, v in trs.items()}}
        if mesh is not None:
            node["mesh"] = mesh
        if extras:
            node["extras"] = {"studio": extras}
        self.doc["nodes"].append(node)
        i = len(self.doc["nodes"]) - 1
        if parent is None:
            self.doc["scenes"][0]["nodes"].append(i)
        else:
            self.doc["nodes"][parent].setdefault("children", []).append(i)
        return i

    def box(self, name, size, translation=(0, 0, 0), extras=None, indexed=True, **trs) -> int:
        return self.node(name, self.mesh([trimesh.creation.box(extents=size)], indexed), extras=extras,
                         translation=translation, **trs)

    def animate(self, node, path, times, values, interpolation="LINEAR"):
        if not self.doc["animations"]:
            self.doc["animations"].append({"channels": [], "samplers": []})
        a = self.doc["animations"][0]
        t = self.accessor(np.asarray(times, float))
        v = self.accessor(np.asarray(values, float))
        a["samplers"].append({"input": t, "output": v, "interpolation": interpolation})
        a["channels"].append({"sampler": len(a["samplers"]) - 1, "target": {"node": node, "path": path}})

    def parts(self) -> tuple[dict, bytes]:
        doc = json.loads(json.dumps(self.doc))
        doc["buffers"] = [{"byteLength": len(self.blob)}]
        if not doc["animations"]:
            del doc["animations"]
        return doc, bytes(self.blob)

    def bytes(self) -> bytes:
        return pack(*self.parts())

    def write(self, path) -> object:
        path.write_bytes(self.bytes())
        return path
