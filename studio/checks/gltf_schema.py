"""The glTF 2.0 JSON checked against the schema's types before anything reads it.

Only the parts the film reader uses are described; everything else (materials,
textures, cameras, extensions, extras other than `extras.studio`) may hold any
JSON. Integers must be whole and within their range, numbers finite, arrays of
the right length, indices non-negative. A fault raises SchemaError with the
JSON path (`nodes[3].children[0]`) and what was expected.
"""
from __future__ import annotations

import math

MAX_DEPTH = 64                  # JSON nesting the reader accepts (glTF itself needs about 8)
MAX_ITEMS = 1_000_000           # entries in any one top-level array (nodes, accessors, ...)
MAX_INDEX = 2 ** 31 - 1


class SchemaError(ValueError):
    """The JSON does not have the types glTF requires; the message starts with the JSON path."""


def _type_name(v) -> str:
    if v is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(v), type(v).__name__)


def _int(v, where: str, lo: int = 0, hi: int = MAX_INDEX) -> int:
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise SchemaError(f"{where}: expected an integer, got {_type_name(v)}")
    if not lo <= v <= hi:
        raise SchemaError(f"{where}: {v} is out of range, expected {lo}..{hi}")
    return v


def _num(v, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SchemaError(f"{where}: expected a number, got {_type_name(v)}")
    if isinstance(v, int) and abs(v) > 1e300:
        raise SchemaError(f"{where}: number out of range")
    if not math.isfinite(v):
        raise SchemaError(f"{where}: expected a finite number, got {v}")
    return float(v)


def _numbers(v, where: str, n: int) -> list[float]:
    if not isinstance(v, list) or len(v) != n:
        got = f"{len(v)} entries" if isinstance(v, list) else _type_name(v)
        raise SchemaError(f"{where}: expected an array of {n} numbers, got {got}")
    return [_num(x, f"{where}[{i}]") for i, x in enumerate(v)]


def _obj(v, where: str) -> dict:
    if not isinstance(v, dict):
        raise SchemaError(f"{where}: expected an object, got {_type_name(v)}")
    return v


def _arr(v, where: str, lo: int = 0, hi: int = MAX_ITEMS) -> list:
    if not isinstance(v, list):
        raise SchemaError(f"{where}: expected an array, got {_type_name(v)}")
    if not lo <= len(v) <= hi:
        raise SchemaError(f"{where}: {len(v)} entries, expected {lo}..{hi}")
    return v


def _str(v, where: str) -> str:
    if not isinstance(v, str):
        raise SchemaError(f"{where}: expected a string, got {_type_name(v)}")
    return v


def _enum(v, where: str, allowed) -> object:
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, str)) or v not in allowed:
        raise SchemaError(f"{where}: {v!r} is not one of {sorted(allowed, key=str)}")
    return v


def depth(doc) -> int:
    """Deepest nesting of arrays and objects, walked without recursion."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _each(doc: dict, key: str):
    """(index, object, path) of every entry of a top-level array; the array itself is typed."""
    items = _arr(doc.get(key, []), key)
    for i, item in enumerate(items):
        yield i, _obj(item, f"{key}[{i}]"), f"{key}[{i}]"


def studio_extras(owner: dict, where: str) -> dict:
    """`extras.studio` of a scene or node, typed; {} when absent (other extras are free)."""
    extras = owner.get("extras")
    if not isinstance(extras, dict) or "studio" not in extras:
        return {}
    w = f"{where}.extras.studio" if where else "extras.studio"
    s = _obj(extras["studio"], w)
    if "fps" in s:
        fps = _num(s["fps"], f"{w}.fps")
        if not 0 < fps <= 10_000:
            raise SchemaError(f"{w}.fps: {fps} frames per second, expected more than 0 and at most 10000")
    if "frame_start" in s:
        _int(s["frame_start"], f"{w}.frame_start", -10 ** 9, 10 ** 9)
    if "up" in s:
        _enum(str(_str(s["up"], f"{w}.up")).upper(), f"{w}.up", {"Y", "Z"})
    if "role" in s:
        _str(s["role"], f"{w}.role")
    if "body" in s:
        _str(s["body"], f"{w}.body")
    if "self_propelled" in s and not isinstance(s["self_propelled"], bool):
        raise SchemaError(f"{w}.self_propelled: expected true or false, got {_type_name(s['self_propelled'])}")
    return s


def check(doc: dict) -> None:
    """Raise SchemaError at the first value whose type or range glTF does not allow."""
    asset = _obj(doc.get("asset"), "asset") if "asset" in doc else None
    if asset is None:
        raise SchemaError("asset: missing (every glTF file declares asset.version)")
    version = _str(asset.get("version"), "asset.version")
    if not version.startswith("2."):
        raise SchemaError(f"asset.version: {version!r}, expected 2.x")
    for key in ("extensionsUsed", "extensionsRequired"):
        for i, e in enumerate(_arr(doc.get(key, []), key)):
            _str(e, f"{key}[{i}]")
    if "scene" in doc:
        _int(doc["scene"], "scene")
    for i, s, w in _each(doc, "scenes"):
        for k, n in enumerate(_arr(s.get("nodes", []), f"{w}.nodes")):
            _int(n, f"{w}.nodes[{k}]")
        studio_extras(s, w)
    if isinstance(doc.get("extras"), dict):
        studio_extras(doc, "")
    for i, n, w in _each(doc, "nodes"):
        if "name" in n:
            _str(n["name"], f"{w}.name")
        for k in ("mesh", "skin", "camera"):
            if k in n:
                _int(n[k], f"{w}.{k}")
        for k, c in enumerate(_arr(n.get("children", []), f"{w}.children")):
            _int(c, f"{w}.children[{k}]")
        if "matrix" in n:
            _numbers(n["matrix"], f"{w}.matrix", 16)
        for k, size in (("translation", 3), ("rotation", 4), ("scale", 3)):
            if k in n:
                _numbers(n[k], f"{w}.{k}", size)
        for k, x in enumerate(_arr(n.get("weights", []), f"{w}.weights")):
            _num(x, f"{w}.weights[{k}]")
        studio_extras(n, w)
    for i, m, w in _each(doc, "meshes"):
        for k, p in enumerate(_arr(m.get("primitives"), f"{w}.primitives", lo=1)):
            pw = f"{w}.primitives[{k}]"
            _obj(p, pw)
            for name, a in _obj(p.get("attributes"), f"{pw}.attributes").items():
                _int(a, f"{pw}.attributes.{name}")
            if "indices" in p:
                _int(p["indices"], f"{pw}.indices")
            if "mode" in p:
                _enum(p["mode"], f"{pw}.mode", set(range(7)))
            for t, target in enumerate(_arr(p.get("targets", []), f"{pw}.targets")):
                for name, a in _obj(target, f"{pw}.targets[{t}]").items():
                    _int(a, f"{pw}.targets[{t}].{name}")
        for k, x in enumerate(_arr(m.get("weights", []), f"{w}.weights")):
            _num(x, f"{w}.weights[{k}]")
    for i, a, w in _each(doc, "accessors"):
        if "bufferView" in a:
            _int(a["bufferView"], f"{w}.bufferView")
        _int(a.get("byteOffset", 0), f"{w}.byteOffset")
        _enum(a.get("componentType"), f"{w}.componentType", {5120, 5121, 5122, 5123, 5125, 5126})
        if "normalized" in a and not isinstance(a["normalized"], bool):
            raise SchemaError(f"{w}.normalized: expected true or false, got {_type_name(a['normalized'])}")
        _int(a.get("count"), f"{w}.count", lo=1)
        _enum(a.get("type"), f"{w}.type", {"SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"})
        if "sparse" in a:
            _obj(a["sparse"], f"{w}.sparse")
    for i, v, w in _each(doc, "bufferViews"):
        _int(v.get("buffer"), f"{w}.buffer")
        _int(v.get("byteOffset", 0), f"{w}.byteOffset")
        _int(v.get("byteLength"), f"{w}.byteLength", lo=1)
        if "byteStride" in v:
            stride = _int(v["byteStride"], f"{w}.byteStride", lo=4, hi=252)
            if stride % 4:
                raise SchemaError(f"{w}.byteStride: {stride} is not a multiple of 4")
    for i, b, w in _each(doc, "buffers"):
        if "uri" in b:
            _str(b["uri"], f"{w}.uri")
        _int(b.get("byteLength"), f"{w}.byteLength", lo=1)
    for i, s, w in _each(doc, "skins"):
        for k, j in enumerate(_arr(s.get("joints"), f"{w}.joints", lo=1)):
            _int(j, f"{w}.joints[{k}]")
    for i, a, w in _each(doc, "animations"):
        samplers = _arr(a.get("samplers"), f"{w}.samplers", lo=1)
        for k, s in enumerate(samplers):
            sw = f"{w}.samplers[{k}]"
            _obj(s, sw)
            _int(s.get("input"), f"{sw}.input")
            _int(s.get("output"), f"{sw}.output")
            _enum(s.get("interpolation", "LINEAR"), f"{sw}.interpolation", {"LINEAR", "STEP", "CUBICSPLINE"})
        for k, c in enumerate(_arr(a.get("channels"), f"{w}.channels", lo=1)):
            cw = f"{w}.channels[{k}]"
            _obj(c, cw)
            s = _int(c.get("sampler"), f"{cw}.sampler")
            if s >= len(samplers):
                raise SchemaError(f"{cw}.sampler: no sampler {s} ({len(samplers)} in this animation)")
            t = _obj(c.get("target"), f"{cw}.target")
            if "node" in t:
                _int(t["node"], f"{cw}.target.node")
            _enum(t.get("path"), f"{cw}.target.path", {"translation", "rotation", "scale", "weights"})
