"""Animated glTF 2.0 binaries (.glb) as films to verify or score.

Each node with a triangle mesh is a body named after the node (a mesh used by
several nodes gives each node its own body); all its triangle primitives
(indexed or not, lists, strips and fans) form one surface. Animation channels
(translation, rotation, scale; LINEAR, STEP or CUBICSPLINE) move nodes, and a
node moves with its parents; static nodes may use a matrix (a body moved by
STEP or CUBICSPLINE keys, its own or a parent's, is flagged step_keys or
spline_keys: between frames it does not move as the sweep draws). A body's world
transform at each frame is split into a rotation and a stretch (any scale or
skew): a stretch that never changes is baked into its mesh; one that changes
over time becomes the body's `Growth`, a uniform factor per frame (distances
scale exactly with it) times a shape of volume 1, each distinct shape (non-
uniform scale: squash and stretch) prepared as a mesh of its own; the
verifiers measure the body as it is at each frame and take its thickness for
tau at each frame. A skinned mesh is a body whose surface is deformed at every frame by
linear blend skinning from its joints' nodes, which become bodies without a surface (bones);
see checks/skinned.py. Morph targets are refused, naming the node.
Frames run from frame_start to frame_start + round(last key time · fps), fps
24 and frame_start 1 unless the scene's extras say {"studio": {"fps",
"frame_start"}}. glTF is +Y up; the data is turned to the studio's +Z up
unless the extras say {"studio": {"up": "Z"}}. A node named `ground` or with
extras {"studio": {"role": "ground"}} is the ground; nodes with no animation
on themselves or their parents are static; {"studio": {"self_propelled":
true}} exempts a body from floating.

Nothing in the file is trusted: the JSON is checked against glTF's types
(`gltf_schema`) before use, every count and allocation is capped before it is
made (the caps below), the node graph is walked once per node and must be a
tree, and NaN or infinite numbers are refused. Every fault raises GlbError
naming the file and the JSON path.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from studio.scene.ir import BODY_KINDS, FLAGS, Body, Geometry, Scene
from studio.scene.pose import Tracks
from studio.scene.transforms import matrix_to_quat, quat_normalize, quat_to_matrix

from studio.checks.footage import Growth
from studio.checks.gltf_keys import sample
from studio.checks.gltf_schema import MAX_DEPTH, SchemaError, check, depth, studio_extras
from studio.checks.shape import Surface

MAGIC, JSON_CHUNK, BIN_CHUNK = 0x46546C67, 0x4E4F534A, 0x004E4942
COMPONENTS = {5120: ("b", 1), 5121: ("B", 1), 5122: ("h", 2), 5123: ("H", 2), 5125: ("I", 4), 5126: ("f", 4)}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
Y_UP_TO_Z_UP = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])

MAX_FILE_BYTES = 1 << 30          # a .glb of at most 1 GiB
MAX_JSON_BYTES = 64 << 20         # its JSON chunk at most 64 MiB
MAX_ACCESSOR_VALUES = 1 << 24     # components in one accessor (count × width)
MAX_VALUES = 1 << 25              # components in all accessors read (256 MiB as float64)
MAX_FRAMES = 1_000_000            # frames in a film (11.6 hours at 24 fps)
MAX_MOVING_NODE_FRAMES = 1_000_000  # moving nodes × frames held in memory at once (256 MiB of matrices)
MAX_NODE_DEPTH = 256              # levels of the node tree
MAX_BODIES = 2_000
MAX_TRIANGLES = 4_000_000         # triangles over all bodies
MAX_FORMS = 500                   # proportions one body's animated scale may take (each is a prepared shape)
MAX_COORD = 1e6                   # metres: positions, translations and scales beyond are refused
GEOMETRY_EXTENSIONS = ("KHR_draco_mesh_compression", "EXT_meshopt_compression", "KHR_mesh_quantization")
READ_EXTENSIONS = ("KHR_mesh_quantization",)


class GlbError(ValueError):
    """A .glb that cannot be read as a film; the message names the file and the fault."""


def load_glb(path: str | Path) -> tuple[Scene, dict[str, Surface], Tracks]:
    """The film in a .glb: a scene of bodies, their meshes (body frame), and baked tracks."""
    scene, meshes, tracks, _ = load_glb_film(path)
    return scene, meshes, tracks


def load_glb_film(path: str | Path):
    """The film, and the Growth of each body whose scale changes over time."""
    return read_glb(path).film()


def load_glb_verification(path: str | Path):
    """The film as `load_glb_film` gives it, and the plan (events, shots) and holds a studio-written
    film carries in its extras (None and [] for any other file)."""
    g = read_glb(path)
    scene, meshes, tracks, growth = g.film()
    return scene, meshes, tracks, growth, g.plan, g.holds


def read_glb(path: str | Path, kind: type["Glb"] | None = None) -> "Glb":
    """The file's container read and checked (size, bytes) as `kind` (a Glb, or a reader built on it)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise GlbError(f"{path}: {size} bytes; the largest .glb read is {MAX_FILE_BYTES} bytes")
        data = path.read_bytes()
    except OSError as e:
        raise GlbError(f"{path}: cannot read ({e.strerror})") from None
    with np.errstate(all="ignore"):
        return (kind or Glb)(path, data)


def _finite(a: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(a)))


class Glb:
    def __init__(self, path: Path, data: bytes):
        self.path = path
        self.doc, self.bin = self._chunks(data)
        try:
            check(self.doc)
        except SchemaError as e:
            raise self.fail(str(e)) from None
        self._accessors: dict[int, np.ndarray] = {}
        self._values = 0
        self.plan, self.holds = None, []

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
        if len(chunks[0][1]) > MAX_JSON_BYTES:
            raise self.fail(f"JSON chunk of {len(chunks[0][1])} bytes; at most {MAX_JSON_BYTES} are read")

        def constant(name):
            raise ValueError(f"{name} is not a JSON number (NaN and infinities are refused)")
        try:
            doc = json.loads(chunks[0][1].decode("utf-8").rstrip(" \x00"), parse_constant=constant)
        except RecursionError:
            raise self.fail(f"JSON chunk nested deeper than {MAX_DEPTH} levels") from None
        except (UnicodeDecodeError, ValueError) as e:
            raise self.fail(f"JSON chunk is not valid JSON ({e})") from None
        if not isinstance(doc, dict):
            raise self.fail("JSON chunk: expected an object at the top")
        if depth(doc) > MAX_DEPTH:
            raise self.fail(f"JSON chunk nested deeper than {MAX_DEPTH} levels")
        blob = next((c for t, c in chunks[1:] if t == BIN_CHUNK), None)
        return doc, blob

    # ---- accessors -------------------------------------------------------
    def _list(self, key: str) -> list:
        return self.doc.get(key, [])

    def buffer(self, i: int, where: str) -> bytes:
        buffers = self._list("buffers")
        if not 0 <= i < len(buffers):
            raise self.fail(f"{where}: missing buffer {i} (the file declares {len(buffers)})")
        b = buffers[i]
        if "uri" in b:
            raise self.fail(f"buffers[{i}].uri: external or data-URI buffers are not read; expected the GLB BIN chunk")
        if self.bin is None:
            raise self.fail(f"buffers[{i}]: missing buffer {i}: the file has no BIN chunk")
        if int(b["byteLength"]) > len(self.bin):
            raise self.fail(f"buffers[{i}].byteLength: {b['byteLength']} exceeds the BIN chunk ({len(self.bin)} bytes)")
        return self.bin

    def accessor(self, i: int, where: str, allowed: tuple[str, ...] | None = None) -> np.ndarray:
        """Accessor i as a float array (count, width); `where` is the JSON path that refers to it."""
        accs = self._list("accessors")
        i = int(i)
        if not 0 <= i < len(accs):
            raise self.fail(f"{where}: missing accessor {i} (the file declares {len(accs)})")
        a = accs[i]
        w = f"accessors[{i}]"
        if allowed is not None and a["type"] not in allowed:
            raise self.fail(f"{w}.type: {a['type']}, expected {' or '.join(allowed)} for {where}")
        if i in self._accessors:
            return self._accessors[i]
        if "sparse" in a:
            raise self.fail(f"{w}.sparse: sparse accessors are not supported (used by {where})")
        fmt, size = COMPONENTS[int(a["componentType"])]
        width, count = WIDTH[a["type"]], int(a["count"])
        if count * width > MAX_ACCESSOR_VALUES:
            raise self.fail(f"{w}.count: {count} × {width} values; at most {MAX_ACCESSOR_VALUES} are read")
        self._values += count * width
        if self._values > MAX_VALUES:
            raise self.fail(f"{w}: the accessors read so far hold more than {MAX_VALUES} values; larger films "
                            "are not read")
        if "bufferView" not in a:
            out = np.zeros((count, width))
            self._accessors[i] = out
            return out
        views = self._list("bufferViews")
        v = int(a["bufferView"])
        if not 0 <= v < len(views):
            raise self.fail(f"{w}.bufferView: no bufferView {v} (the file declares {len(views)})")
        view = views[v]
        buf = self.buffer(int(view["buffer"]), f"bufferViews[{v}].buffer")
        vstart, vlen = int(view.get("byteOffset", 0)), int(view["byteLength"])
        if vstart + vlen > len(buf):
            raise self.fail(f"bufferViews[{v}]: bytes {vstart}..{vstart + vlen} out of range of the buffer "
                            f"({len(buf)} bytes)")
        elem = size * width
        stride = int(view.get("byteStride", 0)) or elem
        if stride < elem:
            raise self.fail(f"bufferViews[{v}].byteStride: {stride} is less than one element of {w} ({elem} bytes)")
        off = int(a.get("byteOffset", 0))
        if off % size or (vstart + off) % size:
            raise self.fail(f"{w}.byteOffset: {off} is not aligned to its {size}-byte components")
        need = off + stride * (count - 1) + elem
        if need > vlen:
            raise self.fail(f"{w}: accessor out of range: needs {need} bytes of bufferViews[{v}], which has {vlen}")
        out = np.ndarray((count, width), dtype=np.dtype("<" + fmt), buffer=buf, offset=vstart + off,
                         strides=(stride, size)).astype(float)
        if a.get("normalized") and fmt != "f":
            out = np.maximum(out / float(2 ** (8 * size - (1 if fmt.islower() else 0)) - 1), -1.0)
        if not _finite(out):
            bad = int(np.nonzero(~np.isfinite(out).all(axis=1))[0][0])
            raise self.fail(f"{w}: element {bad} is {out[bad].tolist()} (NaN or infinite), used by {where}")
        self._accessors[i] = out
        return out

    # ---- the film --------------------------------------------------------
    def film(self):
        doc = self.doc
        for i, e in enumerate(self._list("extensionsRequired")):
            if e not in READ_EXTENSIONS and (e in GEOMETRY_EXTENSIONS or not e.startswith(("KHR_materials_",
                                                                                          "KHR_texture_"))):
                raise self.fail(f"extensionsRequired[{i}]: {e} is not supported")
        nodes = self._list("nodes")
        scenes = self._list("scenes")
        si = int(doc.get("scene", 0)) if scenes else None
        if si is not None and si >= len(scenes):
            raise self.fail(f"scene: no scene {si} (the file declares {len(scenes)})")
        gscene = scenes[si] if si is not None else {}
        studio = studio_extras(gscene, f"scenes[{si}]") or studio_extras(doc, "")
        fps = float(studio.get("fps", 24))
        frame_start = int(studio.get("frame_start", 1))
        z_up = str(studio.get("up", "Y")).upper() == "Z"
        order, parent = self._tree(nodes, gscene.get("nodes") if gscene else None, si)
        channels, t_end = self._channels()
        frames_f = t_end * fps
        if not np.isfinite(frames_f) or frames_f + 1 > MAX_FRAMES:
            raise self.fail(f"the last key at {t_end:g} s makes {frames_f + 1:.3g} frames at {fps:g} fps; "
                            f"at most {MAX_FRAMES} frames are read")
        n_frames = int(round(frames_f)) + 1
        moving, keyed = set(), {}
        for i in order:
            if i in channels or parent.get(i) in moving:
                moving.add(i)
            # how its keys (and its parents') are interpolated: STEP and CUBICSPLINE are not drawn by
            # straight lines and slerp between frames, so the between-frames sweep leaves them out
            keyed[i] = keyed.get(parent.get(i), set()) | {c[2] for c in channels.get(i, {}).values()}
        if len(moving) * n_frames > MAX_MOVING_NODE_FRAMES:
            raise self.fail(f"{len(moving)} moving nodes × {n_frames} frames; at most {MAX_MOVING_NODE_FRAMES} "
                            "node-frames are read")
        times = np.arange(n_frames) / fps
        base = (np.eye(4) if z_up else Y_UP_TO_Z_UP)[None]
        world: dict[int, np.ndarray] = {}
        for i in order:                              # parents come before their children
            above = world[parent[i]] if i in parent else base
            world[i] = above @ self._local(i, channels.get(i, {}), times)
        bodies, meshes, tracks_roots, growth, used, triangles = [], {}, {}, {}, set(), 0
        surfaceless = set(studio.get("surfaceless", []) or []) if isinstance(studio.get("surfaceless", []), list) \
            else set()
        skinned = [i for i in order if "mesh" in nodes[i] and "skin" in nodes[i]]
        bone_nodes = set()
        for i in skinned:                      # a skin's joints are bones: bodies without a surface
            s_i = int(nodes[i]["skin"])
            if not 0 <= s_i < len(self._list("skins")):
                raise self.fail(f"nodes[{i}].skin: no skin {s_i} (the file declares {len(self._list('skins'))})")
            bone_nodes |= {int(j) for j in self._list("skins")[s_i].get("joints", []) if 0 <= int(j) < len(nodes)}
        node_body: dict[int, str] = {}
        for i in order:
            n = nodes[i]
            if i in bone_nodes and "mesh" not in n:
                name = str(n.get("name") or f"node{i}")
                while name in used:
                    name += "_"
                used.add(name)
                node_body[i] = name
                bodies.append(Body(name=name, kind="bone", geometry=Geometry(source="none"),
                                   flags=[] if i in moving else ["static"]))
                meshes[name] = Surface(*_unit_box())
                tracks_roots[name] = np.broadcast_to(self._body(i, name, *_unit_box(), world[i])[1],
                                                     (n_frames, 7)).copy()
                continue
            if i in skinned:                  # after every bone is a body
                continue
            if "mesh" not in n and str(n.get("name")) in surfaceless:
                name = str(n["name"])             # a link without a surface: it carries what hangs on it
                used.add(name)
                bodies.append(Body(name=name, kind="link", geometry=Geometry(source="none")))
                meshes[name] = Surface(*_unit_box())
                tracks_roots[name] = np.broadcast_to(self._body(i, name, *_unit_box(), world[i])[1],
                                                     (n_frames, 7)).copy()
                continue
            if "mesh" not in n:
                continue
            name = str(n.get("name") or f"node{i}")
            verts, faces = self._mesh(int(n["mesh"]), i, name)
            if len(faces) == 0:
                continue
            triangles += len(faces)
            if triangles > MAX_TRIANGLES or len(bodies) >= MAX_BODIES:
                raise self.fail(f"nodes[{i}]: more than {MAX_BODIES} bodies or {MAX_TRIANGLES} triangles; "
                                "larger films are not read")
            while name in used:
                name += "_"
            used.add(name)
            extras = studio_extras(n, f"nodes[{i}]")
            mesh, track, grows = self._body(i, name, verts, faces, world[i])
            track = np.broadcast_to(track, (n_frames, 7)).copy()
            ground = name == "ground" or extras.get("role") == "ground"
            flags = []
            if i not in moving:
                flags.append("static")
            if extras.get("self_propelled"):
                flags.append("self_propelled")
            if "STEP" in keyed[i]:
                flags.append("step_keys")
            if "CUBICSPLINE" in keyed[i]:
                flags.append("spline_keys")
            kind = str(extras.get("kind", "ground" if ground else "rigid"))
            if kind not in BODY_KINDS:
                raise self.fail(f"nodes[{i}].extras.studio.kind: {kind!r}, expected one of {BODY_KINDS}")
            given = extras.get("flags", [])
            if not isinstance(given, list) or any(f not in FLAGS for f in given):
                raise self.fail(f"nodes[{i}].extras.studio.flags: expected some of {FLAGS}")
            flags += [f for f in given if f not in flags]
            group = extras.get("group", "")
            bodies.append(Body(name=name, kind=kind, group=group if isinstance(group, str) else "",
                               geometry=Geometry(source="mesh", path=f"{self.path.name}#{name}"), flags=flags))
            meshes[name] = mesh
            tracks_roots[name] = track
            if grows is not None:
                growth[name] = grows
        for i in skinned:
            n = nodes[i]
            named = studio_extras(n, f"nodes[{i}]").get("body")
            name = str(named if isinstance(named, str) and named else n.get("name") or f"node{i}")
            while name in used:
                name += "_"
            used.add(name)
            own = [int(j) for j in self._list("skins")[int(n["skin"])].get("joints", [])]
            missing = [j for j in own if j not in node_body]
            if missing:
                raise self.fail(f"nodes[{i}] ({name}): a skinned mesh whose joint nodes[{missing[0]}] has a mesh "
                                "of its own (or is not in the scene); a skin's joints must be bones, nodes "
                                "without a mesh")
            skin, joints = film_skin(self, i, node_body)
            turn = base[0]
            skin.vertices = skin.vertices @ turn[:3, :3].T
            skin.ibm = skin.ibm @ np.linalg.inv(turn)
            triangles += len(skin.faces)
            mesh = Surface(skin.vertices, skin.faces)
            mesh.metadata["skin"] = skin
            meshes[name] = mesh
            alive = any(j in moving for j in joints)
            bodies.append(Body(name=name, kind="rigid", geometry=Geometry(source="mesh",
                                                                          path=f"{self.path.name}#{name}"),
                               flags=[] if alive else ["static"]))
            tracks_roots[name] = np.tile([0.0, 0, 0, 1, 0, 0, 0], (n_frames, 1))
        if not bodies:
            raise self.fail("no mesh node with triangles in the scene")
        if studio.get("node_frames") == "y-up" and not z_up:
            # Blender's exporter turns every node's frame to +Y up (T' = C T C^-1, vertices C v): the
            # bodies' own frames, which named frames and joints are given in, are W C with meshes C^-1 v
            turn = Y_UP_TO_Z_UP[:3, :3]
            undo = np.eye(4)
            undo[:3, :3] = turn
            for b in bodies:
                skin = meshes[b.name].metadata.get("skin")
                if skin is not None:            # world-space bind vertices: only its bones' frames turn
                    skin.ibm = undo[None] @ skin.ibm
                    continue
                m = from_7_track(tracks_roots[b.name])
                m[:, :3, :3] = m[:, :3, :3] @ turn.T
                tracks_roots[b.name] = np.concatenate([m[:, :3, 3], matrix_to_quat(m[:, :3, :3])], axis=1)
                meshes[b.name] = Surface(np.asarray(meshes[b.name].vertices) @ turn.T, meshes[b.name].faces)
        scene, tracks = Scene(name=self.path.stem, bodies=bodies), Tracks(frame_start, tracks_roots)
        if any(k in studio for k in ("joints", "frames", "allowed_overlaps", "events", "attachments")):
            from studio.checks.glb_film import studio_scene
            where = {b.name: from_7_track(tracks_roots[b.name]) for b in bodies}
            skins = {b.name for b in bodies if "skin" in meshes[b.name].metadata}
            scene, tracks, self.plan, self.holds = studio_scene(scene, studio, where, frame_start, self.fail, skins)
        return scene, meshes, tracks, growth

    def _tree(self, nodes: list, roots: list | None, si) -> tuple[list[int], dict[int, int]]:
        """Scene nodes, parents before children, each visited once; refuses cycles and shared children."""
        parent: dict[int, int] = {}
        for i, n in enumerate(nodes):
            for k, c in enumerate(n.get("children", [])):
                c = int(c)
                if c >= len(nodes):
                    raise self.fail(f"nodes[{i}].children[{k}]: no node {c} (the file declares {len(nodes)})")
                if c == i:
                    raise self.fail(f"nodes[{i}].children[{k}]: a node cannot be its own child (cycle)")
                if c in parent:
                    raise self.fail(f"nodes[{i}].children[{k}]: node {c} is already a child of nodes[{parent[c]}]; "
                                    "glTF nodes form a tree (no shared children)")
                parent[c] = i
        if roots is None:
            roots = [i for i in range(len(nodes)) if i not in parent]
            where = "nodes"
        else:
            where = f"scenes[{si}].nodes"
        order, seen = [], set()
        for k, r in enumerate(roots):
            r = int(r)
            if r >= len(nodes):
                raise self.fail(f"{where}[{k}]: no node {r} (the file declares {len(nodes)})")
            if r in parent:
                raise self.fail(f"{where}[{k}]: node {r} is a child of nodes[{parent[r]}], not a root")
            if r in seen:
                raise self.fail(f"{where}[{k}]: node {r} is listed twice")
            stack = [(r, 1)]
            while stack:
                i, level = stack.pop()
                if level > MAX_NODE_DEPTH:
                    raise self.fail(f"nodes[{i}]: the node tree is deeper than {MAX_NODE_DEPTH} levels")
                seen.add(i)
                order.append(i)
                stack.extend((int(c), level + 1) for c in reversed(nodes[i].get("children", [])))
        for i in range(len(nodes)):             # a cycle among nodes no root reaches
            if i not in seen and i in parent:
                j, steps = parent[i], 0
                while j in parent and j != i and steps <= len(nodes):
                    j, steps = parent[j], steps + 1
                if j == i:
                    raise self.fail(f"nodes[{i}]: the node tree has a cycle through nodes[{parent[i]}]")
        return order, parent

    def _channels(self) -> tuple[dict[int, dict[str, tuple]], float]:
        out: dict[int, dict[str, tuple]] = {}
        t_end = 0.0
        nodes = self._list("nodes")
        for ai, anim in enumerate(self._list("animations")):
            samplers = anim["samplers"]
            for ci, ch in enumerate(anim["channels"]):
                where = f"animations[{ai}].channels[{ci}]"
                target = ch["target"]
                if "node" not in target:
                    continue                            # a channel for an extension's target
                node, prop = int(target["node"]), target["path"]
                if node >= len(nodes):
                    raise self.fail(f"{where}.target.node: no node {node} (the file declares {len(nodes)})")
                s = int(ch["sampler"])
                sw = f"animations[{ai}].samplers[{s}]"
                if prop == "weights":
                    mesh = nodes[node].get("mesh")
                    name = nodes[node].get("name") or f"node{node}"
                    raise self.fail(f"{where}: animates the morph target weights of nodes[{node}] ({name}, mesh "
                                    f"{mesh}); morph targets are not supported (a body keeps one mesh)")
                if prop in out.get(node, {}):
                    raise self.fail(f"{where}: a second channel for nodes[{node}].{prop}")
                interp = samplers[s].get("interpolation", "LINEAR")
                t = self.accessor(samplers[s]["input"], f"{sw}.input", ("SCALAR",)).reshape(-1)
                width = {"translation": 3, "rotation": 4, "scale": 3}[prop]
                v = self.accessor(samplers[s]["output"], f"{sw}.output")
                if v.shape[1] != width:
                    raise self.fail(f"{sw}.output: {prop} needs {width} values per key, the accessor has "
                                    f"{v.shape[1]}")
                per_key = 3 if interp == "CUBICSPLINE" else 1
                if len(v) != per_key * len(t):
                    raise self.fail(f"{sw}: {len(t)} key times but {len(v)} values"
                                    + (" (CUBICSPLINE needs 3 per key)" if per_key == 3 else ""))
                if t[0] < 0:
                    raise self.fail(f"{sw}.input: key time {t[0]:g} s is negative")
                if np.any(np.diff(t) < 0):
                    k = int(np.nonzero(np.diff(t) < 0)[0][0]) + 1
                    raise self.fail(f"{sw}.input: key times must not decrease (key {k}: {t[k]:g} s after "
                                    f"{t[k - 1]:g} s)")
                if prop != "rotation" and np.max(np.abs(v)) > MAX_COORD:
                    raise self.fail(f"{sw}.output: {prop} value {np.max(np.abs(v)):g} is beyond {MAX_COORD:g}")
                if prop == "rotation":
                    keys = v.reshape(len(t), per_key, 4)[:, per_key // 2]
                    if np.any(np.linalg.norm(keys, axis=1) < 1e-6):
                        raise self.fail(f"{sw}.output: a rotation key of length 0 (expected a unit quaternion)")
                out.setdefault(node, {})[prop] = (t, v, interp)
                t_end = max(t_end, float(t[-1]))
        return out, t_end

    def _local(self, i: int, chans: dict, times: np.ndarray) -> np.ndarray:
        """Node i's local matrix: (1,4,4) when it is not animated, else one per frame."""
        n = self._list("nodes")[i]
        if "matrix" in n:
            if chans:
                raise self.fail(f"nodes[{i}].matrix: an animated node must use translation/rotation/scale, "
                                "not a matrix")
            m = np.asarray(n["matrix"], float).reshape(4, 4).T
            if np.abs(m[:3, 3]).max() > MAX_COORD or np.abs(m[:3, :3]).max() > MAX_COORD:
                raise self.fail(f"nodes[{i}].matrix: values beyond {MAX_COORD:g}")
            if not np.allclose(m[3], [0, 0, 0, 1]):
                raise self.fail(f"nodes[{i}].matrix: the last row must be 0 0 0 1 (an affine transform)")
            return m[None]
        F = len(times) if chans else 1
        t = np.asarray(n.get("translation", [0, 0, 0]), float)[None]
        r = np.asarray(n.get("rotation", [0, 0, 0, 1]), float)[None]
        s = np.asarray(n.get("scale", [1, 1, 1]), float)[None]
        if max(np.abs(t).max(), np.abs(s).max()) > MAX_COORD:
            raise self.fail(f"nodes[{i}]: translation or scale beyond {MAX_COORD:g}")
        if np.linalg.norm(r) < 1e-6:
            raise self.fail(f"nodes[{i}].rotation: length 0, expected a unit quaternion")
        if "translation" in chans:
            t = sample(*chans["translation"], times)
        if "rotation" in chans:
            r = sample(*chans["rotation"], times, rotation=True)
            if np.any(np.linalg.norm(r, axis=1) < 1e-9):
                raise self.fail(f"nodes[{i}].rotation: the animation passes through a rotation of length 0")
        if "scale" in chans:
            s = sample(*chans["scale"], times)
        q = quat_normalize(np.concatenate([r[:, 3:4], r[:, :3]], axis=1))      # glTF xyzw -> wxyz
        m = np.zeros((F, 4, 4))
        m[:, :3, :3] = quat_to_matrix(q) * s[:, None, :]
        m[:, :3, 3] = t
        m[:, 3, 3] = 1.0
        return m

    def _body(self, i: int, name: str, verts: np.ndarray, faces: np.ndarray, w: np.ndarray):
        """Mesh, root track [x y z w qx qy qz], and its Growth if its size changes (else None).

        Each frame's matrix is split into a rotation and a symmetric stretch (polar decomposition),
        which holds any scale and any skew from scaled parents exactly. A stretch that never changes is
        baked into the mesh; one that changes is a uniform factor per frame times a shape of volume 1,
        each distinct shape prepared as a mesh of its own."""
        lin = w[:, :3, :3]
        if np.abs(np.einsum("fji,fjk->fik", lin, lin) - np.eye(3)).max() <= 1e-12 and np.all(np.linalg.det(lin) > 0):
            # a rotation at every frame (no scale): nothing to split
            track = np.concatenate([w[:, :3, 3], matrix_to_quat(lin)], axis=1)
            return self._stretched(i, name, verts, faces, np.eye(3)), track, None
        u, sv, vt = np.linalg.svd(lin)
        flip = np.linalg.det(u @ vt) < 0
        u[flip, :, 2] *= -1
        sv[flip, 2] *= -1
        rot = u @ vt                                                   # proper rotation per frame
        stretch = np.einsum("fji,fj,fjk->fik", vt, sv, vt)              # symmetric: lin = rot @ stretch
        size = max(1.0, float(np.abs(stretch).max()))
        if np.min(np.abs(sv)) <= 1e-9 * size:
            f = int(np.argmin(np.min(np.abs(sv), axis=1)))
            raise self.fail(f"nodes[{i}] ({name}): scale 0 at frame {f} flattens the body; a body must keep a volume")
        track = np.concatenate([w[:, :3, 3], matrix_to_quat(rot)], axis=1)
        if np.abs(stretch - stretch[0]).max() <= 1e-9 * size:
            return self._stretched(i, name, verts, faces, stretch[0]), track, None
        k = np.cbrt(np.abs(np.linalg.det(stretch)))
        form = stretch / k[:, None, None]                               # the shape, at volume 1
        key = np.round(form.reshape(len(form), 9) / max(1.0, float(np.abs(form).max())) * 1e9).astype(np.int64)
        _, first, which = np.unique(key, axis=0, return_index=True, return_inverse=True)
        if len(first) > MAX_FORMS:
            raise self.fail(f"nodes[{i}] ({name}): its scale takes {len(first)} different proportions; at most "
                            f"{MAX_FORMS} are verified (each is prepared as its own shape)")
        order = np.argsort(first)                                       # forms in order of appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        meshes = [self._stretched(i, name, verts, faces, form[first[j]]) for j in order]
        return meshes[0], track, Growth(k, meshes, rank[which.reshape(-1)])

    def _stretched(self, i: int, name: str, verts: np.ndarray, faces: np.ndarray, stretch: np.ndarray):
        mesh = Surface(verts @ stretch.T, faces)
        if np.linalg.det(stretch) < 0:
            mesh.invert()
        if mesh.area <= 0:
            raise self.fail(f"nodes[{i}] ({name}): its triangles have no area")
        return mesh

    def _mesh(self, mi: int, node: int, name: str) -> tuple[np.ndarray, np.ndarray]:
        meshes = self._list("meshes")
        if not 0 <= mi < len(meshes):
            raise self.fail(f"nodes[{node}].mesh: no mesh {mi} (the file declares {len(meshes)})")
        verts, faces, base = [], [], 0
        for pi, prim in enumerate(meshes[mi]["primitives"]):
            pw = f"meshes[{mi}].primitives[{pi}]"
            mode = int(prim.get("mode", 4))
            if mode < 4:
                continue                                   # points and lines have no surface
            weights = self._list("nodes")[node].get("weights", meshes[mi].get("weights", []))
            if prim.get("targets") and any(abs(float(x)) > 0 for x in weights):
                raise self.fail(f"nodes[{node}] ({name}): {pw}.targets: morph targets with non-zero weights are "
                                "not supported (a body keeps one mesh)")
            if "POSITION" not in prim["attributes"]:
                raise self.fail(f"{pw}.attributes: no POSITION attribute")
            v = self.accessor(prim["attributes"]["POSITION"], f"{pw}.attributes.POSITION", ("VEC3",))
            if len(v) and np.abs(v).max() > MAX_COORD:
                raise self.fail(f"{pw}.attributes.POSITION: coordinate {np.abs(v).max():g} is beyond {MAX_COORD:g}")
            if "indices" in prim:
                idx = self.accessor(prim["indices"], f"{pw}.indices", ("SCALAR",)).reshape(-1)
                if np.any(idx != np.floor(idx)):
                    raise self.fail(f"{pw}.indices: indices must be whole numbers (an integer componentType)")
                idx = idx.astype(np.int64)
            else:
                idx = np.arange(len(v), dtype=np.int64)
            if len(idx) and (idx.min() < 0 or idx.max() >= len(v)):
                bad = int(idx.max()) if idx.max() >= len(v) else int(idx.min())
                raise self.fail(f"{pw}.indices: index {bad} out of range ({len(v)} vertices)")
            f = _triangles(idx, mode)
            if f is None:
                raise self.fail(f"{pw}: {len(idx)} indices is not a multiple of 3")
            verts.append(v)
            faces.append(f + base)
            base += len(v)
        if not verts:
            return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
        faces = np.concatenate(faces)
        if len(faces) > MAX_TRIANGLES:
            raise self.fail(f"meshes[{mi}]: {len(faces)} triangles; at most {MAX_TRIANGLES} are read")
        return np.concatenate(verts), faces


_BOX_FACES = np.array([[1, 3, 0], [4, 1, 0], [0, 3, 2], [2, 4, 0], [1, 7, 3], [5, 1, 4], [5, 7, 1], [3, 7, 2],
                       [6, 4, 2], [2, 7, 6], [6, 5, 4], [7, 5, 6]], np.int64)


def _unit_box() -> tuple[np.ndarray, np.ndarray]:
    """A 1 mm box (outward faces): the stand-in surface of a node that has none of its own."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * 0.5e-3
    return corners, _BOX_FACES.copy()


def from_7_track(track: np.ndarray) -> np.ndarray:
    """(F,4,4) matrices of (F,7) [x y z w qx qy qz] rows."""
    from studio.scene.transforms import from_7
    return from_7(np.asarray(track, float))


def _triangles(idx: np.ndarray, mode: int) -> np.ndarray | None:
    """Triangle list (T,3) of TRIANGLES (4), TRIANGLE_STRIP (5) or TRIANGLE_FAN (6) indices."""
    if mode == 4:
        return idx.reshape(-1, 3) if len(idx) % 3 == 0 else None
    if len(idx) < 3:
        return np.zeros((0, 3), np.int64)
    k = np.arange(len(idx) - 2)
    if mode == 5:
        odd = k % 2 == 1
        a, b = np.where(odd, idx[k + 1], idx[k]), np.where(odd, idx[k], idx[k + 1])
        return np.stack([a, b, idx[k + 2]], axis=1)
    return np.stack([np.full(len(k), idx[0]), idx[k + 1], idx[k + 2]], axis=1)


def film_skin(g: "Glb", node: int, bones: dict[int, str]):
    """A skinned mesh node of a film as a Skin over the bodies named `bones` (node index -> body name),
    in the +Z up frame of the film's world matrices: (skin, node indices of its joints)."""
    from studio.scene.skin import Skin
    nodes, skins = g._list("nodes"), g._list("skins")
    s = int(nodes[node]["skin"])
    if not 0 <= s < len(skins):
        raise g.fail(f"nodes[{node}].skin: no skin {s} (the file declares {len(skins)})")
    joints = [int(j) for j in skins[s].get("joints", [])]
    if not joints or any(not 0 <= j < len(nodes) for j in joints) or len(set(joints)) != len(joints):
        raise g.fail(f"skins[{s}].joints: expected distinct node indices of the file")
    if "inverseBindMatrices" in skins[s]:
        m = g.accessor(skins[s]["inverseBindMatrices"], f"skins[{s}].inverseBindMatrices", ("MAT4",))
        if len(m) != len(joints):
            raise g.fail(f"skins[{s}].inverseBindMatrices: {len(m)} matrices for {len(joints)} joints")
        ibm = m.reshape(-1, 4, 4).transpose(0, 2, 1)
    else:
        ibm = np.tile(np.eye(4), (len(joints), 1, 1))
    verts, faces, (j_idx, w) = skinned_mesh(g, int(nodes[node]["mesh"]), node, len(joints))
    return (Skin([bones[j] for j in joints], verts, faces, j_idx, w, ibm), joints)


def skinned_mesh(self: "Glb", mi: int, node: int, n_joints: int):
    """The triangles, and the four joints and weights of every vertex, of a skinned mesh (weights renormalised
    only within 1e-3 of summing to 1; otherwise refused naming the accessor)."""
    meshes = self._list("meshes")
    if not 0 <= mi < len(meshes):
        raise self.fail(f"nodes[{node}].mesh: no mesh {mi} (the file declares {len(meshes)})")
    verts, faces, js, ws, base = [], [], [], [], 0
    for pi, prim in enumerate(meshes[mi]["primitives"]):
        pw = f"meshes[{mi}].primitives[{pi}]"
        if int(prim.get("mode", 4)) < 4:
            continue
        a = prim["attributes"]
        for key in ("POSITION", "JOINTS_0", "WEIGHTS_0"):
            if key not in a:
                raise self.fail(f"{pw}.attributes: no {key} (a skinned primitive needs it)")
        if "JOINTS_1" in a or "WEIGHTS_1" in a:
            raise self.fail(f"{pw}.attributes: JOINTS_1/WEIGHTS_1: at most four influences a vertex are read")
        v = self.accessor(a["POSITION"], f"{pw}.attributes.POSITION", ("VEC3",))
        j = self.accessor(a["JOINTS_0"], f"{pw}.attributes.JOINTS_0", ("VEC4",))
        w = self.accessor(a["WEIGHTS_0"], f"{pw}.attributes.WEIGHTS_0", ("VEC4",))
        if len(j) != len(v) or len(w) != len(v):
            raise self.fail(f"{pw}.attributes: JOINTS_0 and WEIGHTS_0 need one entry per vertex ({len(v)})")
        if np.any(j != np.floor(j)) or j.min(initial=0) < 0 or j.max(initial=0) >= n_joints:
            raise self.fail(f"{pw}.attributes.JOINTS_0: joint indices must be whole and below {n_joints}")
        if w.min(initial=0) < 0:
            raise self.fail(f"{pw}.attributes.WEIGHTS_0: a negative weight")
        total = w.sum(axis=1)
        bad = np.nonzero(np.abs(total - 1.0) > 1e-3)[0]
        if len(bad):
            raise self.fail(f"{pw}.attributes.WEIGHTS_0: vertex {int(bad[0])}'s weights sum to "
                            f"{total[bad[0]]:.4f}, not 1")
        idx = (self.accessor(prim["indices"], f"{pw}.indices", ("SCALAR",)).reshape(-1).astype(np.int64)
               if "indices" in prim else np.arange(len(v)))
        if len(idx) and (idx.min() < 0 or idx.max() >= len(v)):
            raise self.fail(f"{pw}.indices: an index out of range ({len(v)} vertices)")
        f = _triangles(idx, int(prim.get("mode", 4)))
        if f is None:
            raise self.fail(f"{pw}: {len(idx)} indices is not a multiple of 3")
        verts.append(v)
        faces.append(f + base)
        js.append(j.astype(np.int64))
        ws.append(w / total[:, None])
        base += len(v)
    if not verts:
        raise self.fail(f"meshes[{mi}]: no triangles")
    return np.concatenate(verts), np.concatenate(faces), (np.concatenate(js), np.concatenate(ws))
