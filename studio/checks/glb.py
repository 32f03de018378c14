"""Animated glTF 2.0 binaries (.glb) as films to verify or score.

Each mesh node is a rigid body named after the node; node animation channels
(translation, rotation, scale; LINEAR or STEP) move it. Frames run from
frame_start to frame_start + round(last keyed time · fps), fps 24 and
frame_start 1 unless the scene's extras say {"studio": {"fps", "frame_start"}}.
glTF is +Y up; the data is turned to the studio's +Z up unless the extras say
{"studio": {"up": "Z"}}. A node named `ground` or with extras
{"studio": {"role": "ground"}} is the ground; nodes with no animation on
themselves or their parents are static; {"studio": {"self_propelled": true}}
exempts a body from floating. Anything malformed raises GlbError naming the
file and what was wrong (bad magic, truncated chunk, accessor out of range,
missing buffer, ...).
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import trimesh

from studio.scene.ir import Body, Geometry, Scene
from studio.scene.pose import Tracks
from studio.scene.transforms import compose, matrix_to_quat, quat_normalize, slerp

MAGIC, JSON_CHUNK, BIN_CHUNK = 0x46546C67, 0x4E4F534A, 0x004E4942
COMPONENTS = {5120: ("b", 1), 5121: ("B", 1), 5122: ("h", 2), 5123: ("H", 2), 5125: ("I", 4), 5126: ("f", 4)}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
Y_UP_TO_Z_UP = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])


class GlbError(ValueError):
    """A .glb that cannot be read as a film; the message names the file and the fault."""


def load_glb(path: str | Path) -> tuple[Scene, dict[str, trimesh.Trimesh], Tracks]:
    """The film in a .glb: a scene of rigid bodies, their meshes (body frame), and baked tracks."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise GlbError(f"{path}: cannot read ({e.strerror})") from None
    return Glb(path, data).film()


class Glb:
    def __init__(self, path: Path, data: bytes):
        self.path = path
        self.doc, self.bin = self._chunks(data)

    def fail(self, msg: str) -> GlbError:
        return GlbError(f"{self.path}: {msg}")

    def _chunks(self, data: bytes) -> tuple[dict, bytes | None]:
        if len(data) < 12:
            raise self.fail(f"truncated header: {len(data)} bytes, expected at least 12")
        magic, version, length = struct.unpack_from("<III", data, 0)
        if magic != MAGIC:
            raise self.fail(f"bad magic {data[:4]!r}, expected b'glTF' (not a binary glTF file)")
        if version != 2:
            raise self.fail(f"glTF version {version}, expected 2")
        if length > len(data):
            raise self.fail(f"truncated file: header says {length} bytes, file has {len(data)}")
        pos, chunks = 12, []
        while pos < length:
            if pos + 8 > length:
                raise self.fail(f"truncated chunk header at byte {pos}")
            clen, ctype = struct.unpack_from("<II", data, pos)
            if pos + 8 + clen > length:
                raise self.fail(f"truncated chunk at byte {pos}: needs {clen} bytes, {length - pos - 8} remain")
            chunks.append((ctype, data[pos + 8:pos + 8 + clen]))
            pos += 8 + clen
        if not chunks or chunks[0][0] != JSON_CHUNK:
            raise self.fail("the first chunk must be JSON")
        try:
            doc = json.loads(chunks[0][1].decode("utf-8").rstrip(" \x00"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise self.fail(f"JSON chunk is not valid JSON ({e})") from None
        if not isinstance(doc, dict):
            raise self.fail("JSON chunk: expected an object")
        blob = next((c for t, c in chunks[1:] if t == BIN_CHUNK), None)
        return doc, blob

    # ---- accessors -------------------------------------------------------
    def buffer(self, i: int) -> bytes:
        buffers = self.doc.get("buffers", [])
        if not 0 <= i < len(buffers):
            raise self.fail(f"missing buffer {i} (the file declares {len(buffers)})")
        b = buffers[i]
        if "uri" in b:
            raise self.fail(f"buffers[{i}]: external or data-URI buffers are not read; expected the GLB BIN chunk")
        if self.bin is None:
            raise self.fail(f"missing buffer {i}: the file has no BIN chunk")
        if int(b.get("byteLength", 0)) > len(self.bin):
            raise self.fail(f"buffers[{i}]: byteLength {b.get('byteLength')} exceeds the BIN chunk ({len(self.bin)})")
        return self.bin

    def accessor(self, i: int) -> np.ndarray:
        accs = self.doc.get("accessors", [])
        if not isinstance(i, int) or not 0 <= i < len(accs):
            raise self.fail(f"missing accessor {i}")
        a = accs[i]
        where = f"accessors[{i}]"
        if "sparse" in a:
            raise self.fail(f"{where}: sparse accessors are not supported")
        if a.get("componentType") not in COMPONENTS or a.get("type") not in WIDTH:
            raise self.fail(f"{where}: unknown componentType/type {a.get('componentType')}/{a.get('type')}")
        fmt, size = COMPONENTS[a["componentType"]]
        width, count = WIDTH[a["type"]], int(a.get("count", 0))
        if "bufferView" not in a:
            return np.zeros((count, width))
        views = self.doc.get("bufferViews", [])
        v = a["bufferView"]
        if not 0 <= v < len(views):
            raise self.fail(f"{where}.bufferView: no bufferView {v}")
        view = views[v]
        buf = self.buffer(int(view.get("buffer", 0)))
        vstart, vlen = int(view.get("byteOffset", 0)), int(view.get("byteLength", 0))
        if vstart + vlen > len(buf):
            raise self.fail(f"bufferViews[{v}]: bytes {vstart}..{vstart + vlen} out of range of the buffer ({len(buf)})")
        elem = size * width
        stride = int(view.get("byteStride", 0)) or elem
        off = int(a.get("byteOffset", 0))
        need = off + stride * (count - 1) + elem if count else 0
        if need > vlen:
            raise self.fail(f"{where}: accessor out of range: needs {need} bytes of bufferViews[{v}], "
                            f"which has {vlen}")
        raw = np.frombuffer(buf, dtype=np.dtype("<" + fmt), count=(need - off) // size if count else 0,
                            offset=vstart + off) if count else np.zeros(0)
        if stride == elem:
            out = raw[:count * width].reshape(count, width)
        else:
            step = stride // size
            out = np.stack([raw[k * step:k * step + width] for k in range(count)]) if count else raw.reshape(0, width)
        out = out.astype(float)
        if a.get("normalized") and fmt != "f":
            out = np.maximum(out / float(2 ** (8 * size - (1 if fmt.islower() else 0)) - 1), -1.0)
        return out

    # ---- the film --------------------------------------------------------
    def film(self) -> tuple[Scene, dict[str, trimesh.Trimesh], Tracks]:
        doc = self.doc
        nodes = doc.get("nodes", [])
        scenes = doc.get("scenes", [])
        si = int(doc.get("scene", 0)) if scenes else None
        gscene = scenes[si] if si is not None and 0 <= si < len(scenes) else {}
        studio = dict((gscene.get("extras") or {}).get("studio", {}) or (doc.get("extras") or {}).get("studio", {}) or {})
        fps = float(studio.get("fps", 24))
        frame_start = int(studio.get("frame_start", 1))
        if fps <= 0:
            raise self.fail(f"scenes[{si}].extras.studio.fps must be positive, got {fps}")
        z_up = str(studio.get("up", "Y")).upper() == "Z"
        roots = gscene.get("nodes") if gscene else None
        parent = {}
        for i, n in enumerate(nodes):
            for c in n.get("children", []):
                if not 0 <= c < len(nodes):
                    raise self.fail(f"nodes[{i}].children: no node {c}")
                parent[c] = i
        if roots is None:
            roots = [i for i in range(len(nodes)) if i not in parent]
        channels, t_end = self._channels()
        n_frames = int(round(t_end * fps)) + 1
        times = np.arange(n_frames) / fps
        animated = set(channels)
        local = {i: self._local(i, channels.get(i, {}), times) for i in range(len(nodes))}
        world: dict[int, np.ndarray] = {}

        def walk(i: int, above: np.ndarray, moving: bool, seen: set):
            if i in seen:
                raise self.fail(f"nodes[{i}]: the node tree has a cycle")
            seen = seen | {i}
            world[i] = above @ local[i]
            moving = moving or i in animated
            if moving:
                animated.add(i)
            for c in nodes[i].get("children", []):
                walk(c, world[i], moving, seen)
        base = np.broadcast_to(np.eye(4) if z_up else Y_UP_TO_Z_UP, (n_frames, 4, 4))
        for r in roots:
            if not 0 <= r < len(nodes):
                raise self.fail(f"scenes[{si}].nodes: no node {r}")
            walk(r, base, False, set())
        bodies, meshes, tracks_roots, used = [], {}, {}, set()
        for i in sorted(world):
            n = nodes[i]
            if "mesh" not in n:
                continue
            verts, faces = self._mesh(n["mesh"])
            if len(faces) == 0:
                continue
            name = str(n.get("name") or f"node{i}")
            while name in used:
                name += "_"
            used.add(name)
            extras = (n.get("extras") or {}).get("studio", {}) or {}
            w = world[i]
            lin = w[:, :3, :3]
            scale = np.linalg.norm(lin, axis=1)          # column norms
            if np.max(np.abs(scale - scale[0])) > 1e-6 * max(1.0, float(np.abs(scale).max())):
                raise self.fail(f"nodes[{i}] ({name}): scale changes over time; a rigid body keeps one scale")
            rot = lin / scale[:, None, :]
            det = np.linalg.det(rot[0])
            s0 = scale[0].copy()
            if det < 0:
                s0[0] = -s0[0]
                rot[:, :, 0] = -rot[:, :, 0]
            mesh = trimesh.Trimesh(verts * s0, faces, process=False)
            if det < 0:
                mesh.invert()
            ground = name == "ground" or extras.get("role") == "ground"
            flags = []
            if i not in animated:
                flags.append("static")
            if extras.get("self_propelled"):
                flags.append("self_propelled")
            bodies.append(Body(name=name, kind="ground" if ground else "rigid",
                               geometry=Geometry(source="mesh", path=f"{self.path.name}#{name}"), flags=flags))
            meshes[name] = mesh
            tracks_roots[name] = np.concatenate([w[:, :3, 3], matrix_to_quat(rot)], axis=1)
        if not bodies:
            raise self.fail("no mesh node with triangles")
        return Scene(name=self.path.stem, bodies=bodies), meshes, Tracks(frame_start, tracks_roots)

    def _channels(self) -> tuple[dict[int, dict[str, tuple]], float]:
        out: dict[int, dict[str, tuple]] = {}
        t_end = 0.0
        for ai, anim in enumerate(self.doc.get("animations", [])):
            samplers = anim.get("samplers", [])
            for ci, ch in enumerate(anim.get("channels", [])):
                where = f"animations[{ai}].channels[{ci}]"
                target = ch.get("target", {})
                node, prop = target.get("node"), target.get("path")
                if prop not in ("translation", "rotation", "scale"):
                    continue   # morph weights do not move rigid bodies
                if not isinstance(node, int) or not 0 <= node < len(self.doc.get("nodes", [])):
                    raise self.fail(f"{where}.target.node: no node {node}")
                s = ch.get("sampler")
                if not isinstance(s, int) or not 0 <= s < len(samplers):
                    raise self.fail(f"{where}.sampler: no sampler {s}")
                interp = samplers[s].get("interpolation", "LINEAR")
                if interp not in ("LINEAR", "STEP"):
                    raise self.fail(f"animations[{ai}].samplers[{s}].interpolation: {interp} is not supported, "
                                    "expected LINEAR or STEP")
                t = self.accessor(samplers[s].get("input")).reshape(-1)
                v = self.accessor(samplers[s].get("output"))
                if len(t) == 0 or len(v) != len(t):
                    raise self.fail(f"animations[{ai}].samplers[{s}]: {len(t)} key times but {len(v)} values")
                if np.any(np.diff(t) < 0):
                    raise self.fail(f"animations[{ai}].samplers[{s}].input: key times must not decrease")
                out.setdefault(node, {})[prop] = (t, v, interp)
                t_end = max(t_end, float(t[-1]))
        return out, t_end

    def _local(self, i: int, chans: dict, times: np.ndarray) -> np.ndarray:
        n = self.doc["nodes"][i]
        F = len(times)
        if "matrix" in n:
            m = np.asarray(n["matrix"], float).reshape(4, 4).T
            if not chans:
                return np.broadcast_to(m, (F, 4, 4))
            raise self.fail(f"nodes[{i}]: an animated node must use TRS, not a matrix")
        t = np.broadcast_to(np.asarray(n.get("translation", [0, 0, 0]), float), (F, 3))
        r = np.broadcast_to(np.asarray(n.get("rotation", [0, 0, 0, 1]), float), (F, 4))
        s = np.broadcast_to(np.asarray(n.get("scale", [1, 1, 1]), float), (F, 3))
        if "translation" in chans:
            t = _sample(*chans["translation"], times)
        if "rotation" in chans:
            r = _sample(*chans["rotation"], times, rotation=True)
        if "scale" in chans:
            s = _sample(*chans["scale"], times)
        q = quat_normalize(np.concatenate([r[:, 3:4], r[:, :3]], axis=1))      # glTF xyzw -> wxyz
        m = compose(t, q)
        m[:, :3, :3] = m[:, :3, :3] * s[:, None, :]
        return m

    def _mesh(self, mi: int) -> tuple[np.ndarray, np.ndarray]:
        meshes = self.doc.get("meshes", [])
        if not isinstance(mi, int) or not 0 <= mi < len(meshes):
            raise self.fail(f"missing mesh {mi}")
        verts, faces, base = [], [], 0
        for pi, prim in enumerate(meshes[mi].get("primitives", [])):
            if prim.get("mode", 4) != 4:
                continue
            if "POSITION" not in prim.get("attributes", {}):
                raise self.fail(f"meshes[{mi}].primitives[{pi}]: no POSITION attribute")
            v = self.accessor(prim["attributes"]["POSITION"])
            f = (self.accessor(prim["indices"]).reshape(-1) if "indices" in prim else np.arange(len(v))).astype(np.int64)
            if len(f) % 3:
                raise self.fail(f"meshes[{mi}].primitives[{pi}]: {len(f)} indices is not a multiple of 3")
            if len(f) and (f.min() < 0 or f.max() >= len(v)):
                raise self.fail(f"meshes[{mi}].primitives[{pi}].indices: index {int(f.max())} out of range "
                                f"({len(v)} vertices)")
            verts.append(v[:, :3])
            faces.append(f.reshape(-1, 3) + base)
            base += len(v)
        if not verts:
            return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
        return np.concatenate(verts), np.concatenate(faces)


def _sample(t: np.ndarray, v: np.ndarray, interp: str, times: np.ndarray, rotation: bool = False) -> np.ndarray:
    """Values of one channel at `times` (clamped at the ends)."""
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 1)
    k1 = np.minimum(k + 1, len(t) - 1)
    if interp == "STEP" or len(t) == 1:
        return v[k]
    span = np.where(t[k1] > t[k], t[k1] - t[k], 1.0)
    u = np.clip((times - t[k]) / span, 0.0, 1.0)
    u = np.where(k1 == k, 0.0, u)
    if rotation:
        q0 = np.concatenate([v[k, 3:4], v[k, :3]], axis=1)
        q1 = np.concatenate([v[k1, 3:4], v[k1, :3]], axis=1)
        q = slerp(q0, q1, u)
        return np.concatenate([q[:, 1:], q[:, :1]], axis=1)
    return v[k] + u[:, None] * (v[k1] - v[k])
