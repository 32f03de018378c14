"""Mesh files checked before they are read: the face limit, and the faults a reader would trip on.

A mesh file comes from anywhere. Before trimesh reads one, `precheck` counts
its faces without reading it in full (a binary STL's header, `facet` or `f`
records found by a byte search through a memory map, a glTF's accessor
counts) and refuses a file past the face limit (`mesh_face_limit` in the
settings, KEYPOSE_MESH_FACE_LIMIT, 1,000,000 by default). It then checks what
the readers take on trust and would fail on in their own words: an OBJ face
naming a vertex the file lacks, an ASCII STL facet without three vertices
or with a number that is not one, a binary STL shorter than its header says,
a glTF accessor, view or buffer reaching past the data behind it. Each
refusal is one MeshFileError line naming the file, the line or field, and
what was wrong.
"""
from __future__ import annotations

import json
import mmap
import os
import re
import struct
from pathlib import Path

DEFAULT_FACE_LIMIT = 1_000_000
_COMPONENT = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
_TYPE = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_INDEX = re.compile(rb"[+-]?\d+")


class MeshFileError(ValueError):
    """A mesh file that is missing, of an unknown kind, past a limit, or cannot be read."""


def face_limit() -> int:
    """The most faces one imported mesh may have (settings `mesh_face_limit`)."""
    try:
        from studio.store.settings import load_settings
        value = int(load_settings().get("mesh_face_limit") or DEFAULT_FACE_LIMIT)
    except (ValueError, TypeError, OSError):
        value = DEFAULT_FACE_LIMIT
    return max(1, value)


def _too_many(path: Path, faces: int, limit: int, how: str) -> MeshFileError:
    return MeshFileError(f"{path}: {faces:,} faces ({how}), past the face limit of {limit:,}; refused before "
                         f"reading it (raise mesh_face_limit in the settings to import it)")


def precheck(path: Path, kind: str, limit: int | None = None) -> None:
    """Refuse `path` (of `kind`: obj, stl, glb, gltf) past the face limit or with a fault a reader trips on."""
    limit = face_limit() if limit is None else limit
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            {"obj": _obj, "stl": _stl, "glb": _glb, "gltf": _gltf}[kind](path, data, size, limit)


CHUNK = 1 << 24


def _occurrences(data, needle: bytes) -> int:
    """How often `needle` occurs in a memory map, a chunk at a time (bytes.count, no line loop)."""
    n, size = 0, len(data)
    for at in range(0, size, CHUNK):
        n += data[at:at + CHUNK + len(needle) - 1].count(needle)
    return n


def _count(data, word: bytes) -> int:
    """Lines starting with `word` (after optional spaces)."""
    n = _occurrences(data, b"\n" + word) + (1 if data[:len(word)] == word else 0)
    return n + _occurrences(data, b"\n " + word) + _occurrences(data, b"\n\t" + word)


def _obj(path: Path, data, size: int, limit: int) -> None:
    faces = _count(data, b"f ") + _count(data, b"f\t")
    if faces > limit:
        raise _too_many(path, faces, limit, "f records")
    vertices = _count(data, b"v ") + _count(data, b"v\t")
    seen = 0
    for n, line in enumerate(iter(data.readline, b""), 1):
        s = line.lstrip()
        if s[:2] in (b"v ", b"v\t"):
            seen += 1
        elif s[:2] in (b"f ", b"f\t"):
            tokens = s.split()[1:]
            if len(tokens) < 3:
                raise MeshFileError(f"{path} line {n}: f: a face needs at least 3 vertices, this one has "
                                    f"{len(tokens)}")
            for t in tokens:
                m = _INDEX.match(t)
                if m is None:
                    raise MeshFileError(f"{path} line {n}: f: {_said(t)} is not a vertex number")
                i = int(m.group()[:20])
                if i == 0 or i > vertices or -i > seen:
                    raise MeshFileError(f"{path} line {n}: f: vertex {_said(m.group())} is not one of the "
                                        f"{vertices:,} vertices the file defines")


def _said(token: bytes) -> str:
    from studio.store.shown import shown
    return shown(token.decode("utf-8", "backslashreplace"), 40)


def _stl(path: Path, data, size: int, limit: int) -> None:
    declared = struct.unpack("<I", data[80:84])[0] if size >= 84 else -1
    ascii_ = data[:512].lstrip().lower().startswith(b"solid") and size != 84 + 50 * declared
    if not ascii_:
        if size < 84:
            raise MeshFileError(f"{path}: {size} bytes, shorter than a binary STL's 84-byte header")
        if declared > limit:
            raise _too_many(path, declared, limit, "the binary STL header's count")
        if size < 84 + 50 * declared:
            raise MeshFileError(f"{path}: the binary STL header says {declared:,} triangles "
                                f"({84 + 50 * declared:,} bytes) but the file has {size:,} bytes")
        return
    facets = _occurrences(data, b"facet") - _occurrences(data, b"endfacet")
    if facets > limit:
        raise _too_many(path, facets, limit, "facet records")
    in_facet, corners, start = False, 0, 0
    for n, line in enumerate(iter(data.readline, b""), 1):
        words = line.split()
        if not words:
            continue
        w = words[0].lower()
        if w == b"facet":
            in_facet, corners, start = True, 0, n
        elif w == b"vertex":
            if not in_facet:
                raise MeshFileError(f"{path} line {n}: vertex outside a facet")
            if len(words) != 4:
                raise MeshFileError(f"{path} line {n}: vertex: expected 3 numbers, got {len(words) - 1}")
            for x in words[1:]:
                try:
                    float(x)
                except ValueError:
                    raise MeshFileError(f"{path} line {n}: vertex: {_said(x)} is not a number") from None
            corners += 1
        elif w == b"endfacet":
            if corners != 3:
                raise MeshFileError(f"{path} line {start}: the facet has {corners} vertices; expected 3")
            in_facet = False
    if in_facet:
        raise MeshFileError(f"{path} line {start}: the facet is not closed (no endfacet)")


def _glb(path: Path, data, size: int, limit: int) -> None:
    if size < 20 or data[:4] != b"glTF":
        return                                    # the reader says what it is not
    length = struct.unpack("<I", data[8:12])[0]
    if length > size:
        raise MeshFileError(f"{path}: not a readable GLB file (its header says {length:,} bytes; the file has "
                            f"{size:,})")
    json_len, json_kind = struct.unpack("<II", data[12:20])
    if json_kind != 0x4E4F534A or 20 + json_len > size:
        raise MeshFileError(f"{path}: not a readable GLB file (its first chunk is not a JSON chunk within the file)")
    doc = _doc(path, bytes(data[20:20 + json_len]), "GLB")
    at = 20 + json_len + (-json_len % 4)
    binary = 0
    if at + 8 <= size:
        binary, kind = struct.unpack("<II", data[at:at + 8])
        binary = min(binary, size - at - 8) if kind == 0x004E4942 else 0
    _accessors(path, doc, limit, lambda i, b: binary if i == 0 and "uri" not in b else None)


def _gltf(path: Path, data, size: int, limit: int) -> None:
    doc = _doc(path, bytes(data[:]), "GLTF")

    def present(i: int, buffer: dict) -> int | None:
        uri = buffer.get("uri")
        if not isinstance(uri, str) or uri.startswith("data:"):
            return None                           # inline data: the reader decodes and checks it
        import urllib.parse
        target = path.parent / urllib.parse.unquote(urllib.parse.urlsplit(uri).path)
        try:
            return target.stat().st_size
        except OSError:
            return None
    _accessors(path, doc, limit, present)


def _doc(path: Path, raw: bytes, kind: str) -> dict:
    from studio.store.json_reading import JsonRefused, Limits, loads
    try:
        doc = loads(raw, "", Limits(max_bytes=64 << 20, max_depth=32, max_items=2_000_000))
    except JsonRefused as e:
        raise MeshFileError(f"{path}: not a readable {kind} file ({str(e).removeprefix(': ')})") from None
    if not isinstance(doc, dict):
        raise MeshFileError(f"{path}: not a readable {kind} file (expected a JSON object)")
    return doc


def _list(path: Path, doc: dict, key: str) -> list:
    items = doc.get(key) or []
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise MeshFileError(f"{path}: {key}: expected a list of objects")
    return items


def _int(path: Path, where: str, value, default=None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MeshFileError(f"{path}: {where}: expected a whole number of at least 0, got {value!r}"[:300])
    return value


def _accessors(path: Path, doc: dict, limit: int, present) -> None:
    """Every accessor a mesh primitive uses lies inside its view, every view inside its buffer,
    every buffer inside the data behind it; the faces they make stay under the limit."""
    accessors, views, buffers = (_list(path, doc, k) for k in ("accessors", "bufferViews", "buffers"))
    for i, b in enumerate(buffers):
        length = _int(path, f"buffers[{i}].byteLength", b.get("byteLength"))
        have = present(i, b)
        if have is not None and length > have:
            raise MeshFileError(f"{path}: buffers[{i}].byteLength is {length:,} bytes but its data holds {have:,}")
    for i, v in enumerate(views):
        buf = _int(path, f"bufferViews[{i}].buffer", v.get("buffer"))
        if buf >= len(buffers):
            raise MeshFileError(f"{path}: bufferViews[{i}].buffer is {buf}; the file has {len(buffers)} buffers")
        end = _int(path, f"bufferViews[{i}].byteOffset", v.get("byteOffset"), 0) + \
            _int(path, f"bufferViews[{i}].byteLength", v.get("byteLength"))
        if end > buffers[buf]["byteLength"]:
            raise MeshFileError(f"{path}: bufferViews[{i}] ends at byte {end:,}, past the end of buffers[{buf}] "
                                f"({buffers[buf]['byteLength']:,} bytes)")
    faces = 0
    for m, mesh in enumerate(_list(path, doc, "meshes")):
        prims = mesh.get("primitives") or []
        if not isinstance(prims, list):
            raise MeshFileError(f"{path}: meshes[{m}].primitives: expected a list")
        for p, prim in enumerate(prims):
            if not isinstance(prim, dict):
                raise MeshFileError(f"{path}: meshes[{m}].primitives[{p}]: expected an object")
            attrs = prim.get("attributes") or {}
            used = [(f"meshes[{m}].primitives[{p}].attributes.{k}", a) for k, a in
                    (attrs.items() if isinstance(attrs, dict) else [])]
            if "indices" in prim:
                used.append((f"meshes[{m}].primitives[{p}].indices", prim["indices"]))
            counts = {}
            for where, a in used:
                counts[where] = _check_accessor(path, where, a, accessors, views)
            key = f"meshes[{m}].primitives[{p}].indices"
            n = counts.get(key, counts.get(f"meshes[{m}].primitives[{p}].attributes.POSITION", 0))
            faces += n // 3 if prim.get("mode", 4) == 4 else max(0, n - 2)
            if faces > limit:
                raise _too_many(path, faces, limit, "the glTF accessors' counts")


def _check_accessor(path: Path, where: str, a, accessors: list, views: list) -> int:
    i = _int(path, where, a)
    if i >= len(accessors):
        raise MeshFileError(f"{path}: {where} is accessor {i}; the file has {len(accessors)} accessors")
    acc = accessors[i]
    count = _int(path, f"accessors[{i}].count", acc.get("count"))
    comp = _COMPONENT.get(acc.get("componentType"))
    width = _TYPE.get(acc.get("type"))
    if comp is None or width is None:
        raise MeshFileError(f"{path}: accessors[{i}]: componentType {acc.get('componentType')!r} and type "
                            f"{str(acc.get('type'))[:20]!r} are not a glTF accessor's")
    if "bufferView" not in acc:
        return count                              # all zeros by the specification (or sparse)
    v = _int(path, f"accessors[{i}].bufferView", acc.get("bufferView"))
    if v >= len(views):
        raise MeshFileError(f"{path}: accessors[{i}].bufferView is {v}; the file has {len(views)} buffer views")
    element = comp * width
    stride = views[v].get("byteStride") or element
    offset = _int(path, f"accessors[{i}].byteOffset", acc.get("byteOffset"), 0)
    need = offset + (stride * (count - 1) + element if count else 0)
    if need > views[v]["byteLength"]:
        raise MeshFileError(f"{path}: accessors[{i}] needs {need:,} bytes ({count:,} {acc['type']} items) of "
                            f"bufferViews[{v}], which has {views[v]['byteLength']:,}")
    return count
