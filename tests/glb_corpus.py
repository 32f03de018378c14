"""Malformed and hostile .glb files, generated: each case is a name, the words its message must hold, and
the bytes. Every one must make `studio verify` exit 2 naming the file and the fault."""
from __future__ import annotations

import copy
import json
import struct

import numpy as np

from glb_films import BIN_CHUNK, JSON_CHUNK, MAGIC, GlbWriter, pack


def base() -> GlbWriter:
    """ground (node 0, accessors 0-1), crate (node 1, accessors 2-3), crate translation keys (4-5)."""
    g = GlbWriter()
    g.box("ground", [4, 0.1, 4], translation=(0, -0.05, 0))
    b = g.box("crate", [0.2, 0.2, 0.2])
    g.animate(b, "translation", [0, 0.5, 1.0], [[0, 1.0, 0], [0, 0.1, 0], [0, 0.1, 0]])
    return g


def edit(fn):
    """A case that changes the JSON document (and may append to the BIN chunk)."""
    def make():
        doc, blob = base().parts()
        blob = bytearray(blob)
        size = len(blob)
        out = fn(doc, blob)
        if isinstance(out, bytes):
            return out
        bufs = doc.get("buffers")
        if isinstance(bufs, list) and bufs and isinstance(bufs[0], dict) and bufs[0].get("byteLength") == size:
            bufs[0]["byteLength"] = len(blob)
        return pack(doc, bytes(blob))
    return make


def add_data(doc, blob, array, dtype="<f4", typ="SCALAR", ctype=5126) -> int:
    """Append raw values to the BIN chunk as a new accessor; its index."""
    data = np.asarray(array, dtype=dtype).tobytes()
    while len(blob) % 4:
        blob.append(0)
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
    blob += data
    doc["accessors"].append({"bufferView": len(doc["bufferViews"]) - 1, "componentType": ctype,
                             "count": int(np.asarray(array).reshape(len(array), -1).shape[0]), "type": typ})
    return len(doc["accessors"]) - 1


def set_path(doc, path, value):
    """doc with the value at a dotted path like 'nodes.1.children' set."""
    keys = path.split(".")
    at = doc
    for k in keys[:-1]:
        at = at[int(k)] if isinstance(at, list) else at[k]
    last = keys[-1]
    if isinstance(at, list):
        at[int(last)] = value
    else:
        at[last] = value
    return doc


def setting(path, value):
    return edit(lambda doc, blob: set_path(doc, path, value) and None)


def keys(times, values=None, path="translation", interpolation="LINEAR", out_type=None):
    """Replace the crate's animation with these keys."""
    def fn(doc, blob):
        t = add_data(doc, blob, np.asarray(times, float))
        v = np.asarray(values if values is not None else [[0, 0.1, 0]] * len(times), float)
        o = add_data(doc, blob, v, typ=out_type or {1: "SCALAR", 3: "VEC3", 4: "VEC4"}[v.shape[1]])
        doc["animations"][0]["samplers"][0] = {"input": t, "output": o, "interpolation": interpolation}
        doc["animations"][0]["channels"][0]["target"]["path"] = path
    return edit(fn)


def raw(data: bytes):
    return lambda: data


def json_text(text: bytes):
    return lambda: pack({}, base().parts()[1], json_bytes=text)


def with_json(fn):
    """A case whose JSON text is written by hand from the document."""
    def make():
        doc, blob = base().parts()
        return pack(doc, blob, json_bytes=fn(doc))
    return make


def chain(depth: int):
    """A node chain `depth` deep ending in the crate."""
    def fn(doc, blob):
        n0 = len(doc["nodes"])
        for k in range(depth):
            doc["nodes"].append({"name": f"link{k}", "children": [n0 + k + 1] if k < depth - 1 else [1]})
        doc["scenes"][0]["nodes"] = [0, n0]
    return edit(fn)


def diamond(layers: int):
    """Each layer's two nodes both list the next layer's two nodes as children."""
    def fn(doc, blob):
        n0 = len(doc["nodes"])
        for k in range(layers):
            nxt = [n0 + 2 * (k + 1), n0 + 2 * (k + 1) + 1] if k < layers - 1 else [1]
            doc["nodes"] += [{"children": list(nxt)}, {"children": list(nxt)}]
        doc["scenes"][0]["nodes"] = [0, n0, n0 + 1]
    return edit(fn)


def nested(levels: int):
    return json_text(b'{"asset": {"version": "2.0"}, "extras": ' + b"[" * levels + b"]" * levels + b"}")


def header(magic=MAGIC, version=2, length=None, chunks=b""):
    return raw(struct.pack("<III", magic, version, 12 + len(chunks) if length is None else length) + chunks)


def skinned(doc, blob):
    doc["skins"] = [{"joints": [0]}]
    doc["nodes"][1]["skin"] = 0


def morph_weights(doc, blob):
    doc["meshes"][1]["primitives"][0]["targets"] = [{"POSITION": 2}]
    doc["nodes"][1]["weights"] = [0.5]


def morph_channel(doc, blob):
    doc["animations"][0]["channels"][0]["target"]["path"] = "weights"


def zero_area(doc, blob):
    a = add_data(doc, blob, np.zeros((3, 3)), typ="VEC3")
    doc["meshes"][1]["primitives"] = [{"attributes": {"POSITION": a}}]


def positions(values):
    def fn(doc, blob):
        a = add_data(doc, blob, np.asarray(values, float), typ="VEC3")
        doc["meshes"][1]["primitives"] = [{"attributes": {"POSITION": a}}]
    return edit(fn)


def indices(values, ctype=5125, dtype="<u4"):
    def fn(doc, blob):
        a = add_data(doc, blob, np.asarray(values), dtype=dtype, ctype=ctype)
        doc["meshes"][1]["primitives"][0]["indices"] = a
    return edit(fn)


def cycle(doc, blob):
    doc["nodes"][0]["children"] = [1]
    doc["nodes"][1]["children"] = [0]
    del doc["scenes"]
    del doc["scene"]


def second_channel(doc, blob):
    a = doc["animations"][0]
    a["channels"].append(copy.deepcopy(a["channels"][0]))


def many_moving(doc, blob):
    for k in range(6):
        doc["nodes"].append({"name": f"m{k}", "mesh": 1})
        doc["scenes"][0]["nodes"].append(len(doc["nodes"]) - 1)
        doc["animations"][0]["channels"].append({"sampler": 0, "target": {"node": len(doc["nodes"]) - 1,
                                                                          "path": "translation"}})
    t = add_data(doc, blob, np.array([0.0, 36_000.0]))
    v = add_data(doc, blob, np.array([[0, 1, 0], [0, 2, 0]], float), typ="VEC3")
    doc["animations"][0]["samplers"][0] = {"input": t, "output": v}


def many_forms(doc, blob):
    """A scale channel that takes 600 different proportions: each would be prepared as its own shape."""
    t = add_data(doc, blob, np.arange(600) / 24.0)
    v = add_data(doc, blob, np.c_[1 + np.arange(600) / 600, np.ones(600), np.ones(600)], typ="VEC3")
    doc["animations"][0]["samplers"].append({"input": t, "output": v})
    doc["animations"][0]["channels"].append({"sampler": 1, "target": {"node": 1, "path": "scale"}})


def zero_accessors(doc, blob):
    """Three primitives on accessors of 5,000,001 zero vertices each, with no data in the file."""
    for k in range(3):
        doc["accessors"].append({"componentType": 5126, "count": 5_000_001, "type": "VEC3"})
        doc["meshes"][1]["primitives"].append({"attributes": {"POSITION": len(doc["accessors"]) - 1}})


def bin_only(doc, blob):
    return pack(doc, None)


def strided_short(doc, blob):
    doc["bufferViews"][doc["accessors"][2]["bufferView"]]["byteStride"] = 8


CASES: list[tuple[str, tuple[str, ...], object]] = [
    # the container
    ("empty", ("truncated header",), raw(b"")),
    ("magic", ("bad magic",), header(magic=0x58544C47)),
    ("version1", ("version 1",), header(version=1)),
    ("length_beyond", ("truncated file",), header(length=1000)),
    ("chunk_header_cut", ("truncated chunk header",), header(chunks=b"\x05\x00\x00")),
    ("chunk_beyond", ("truncated chunk",), header(chunks=struct.pack("<II", 99, JSON_CHUNK) + b"{}")),
    ("bin_first", ("first chunk must be JSON",), header(chunks=struct.pack("<II", 4, BIN_CHUNK) + b"\0" * 4)),
    ("no_chunks", ("first chunk must be JSON",), header()),
    ("utf8", ("not valid JSON",), json_text(b'{"asset": "\xff\xfe"}')),
    ("syntax", ("not valid JSON",), json_text(b'{"asset": {"version": "2.0"},')),
    ("top_array", ("expected an object at the top",), json_text(b"[1, 2, 3]")),
    ("nan_literal", ("NaN",), json_text(b'{"asset": {"version": "2.0"}, "scene": NaN}')),
    ("infinity_literal", ("Infinity",), json_text(b'{"asset": {"version": "2.0"}, "scene": Infinity}')),
    ("nested_200k", ("nested deeper",), nested(200_000)),
    ("nested_100", ("nested deeper",), nested(100)),
    ("huge_int", ("scene", "out of range"), json_text(b'{"asset": {"version": "2.0"}, "scene": 1' + b"0" * 400 + b"}")),
    ("float_overflow", ("translation[1]", "finite"), with_json(lambda d: json.dumps(d).replace(
        '"translation": [0, -0.05, 0]', '"translation": [0, -1e400, 0]').encode())),
    ("no_asset", ("asset",), edit(lambda d, b: d.pop("asset") and None)),
    ("asset_version", ("asset.version",), setting("asset.version", "1.0")),
    ("asset_string", ("asset",), setting("asset", "2.0")),
    # types of the JSON
    ("nodes_string", ("nodes", "expected an array"), setting("nodes", "0,1")),
    ("nodes_dict", ("nodes", "expected an array"), setting("nodes", {"0": {}})),
    ("node_string", ("nodes[1]", "expected an object"), setting("nodes.1", "crate")),
    ("children_string", ("nodes[0].children", "expected an array"), setting("nodes.0.children", "x")),
    ("child_string", ("nodes[0].children[0]", "expected an integer"), setting("nodes.0.children", ["1"])),
    ("child_negative", ("nodes[0].children[0]", "out of range"), setting("nodes.0.children", [-1])),
    ("child_missing", ("nodes[0].children[0]", "no node 7"), setting("nodes.0.children", [7])),
    ("child_self", ("nodes[0].children[0]", "own child"), setting("nodes.0.children", [0])),
    ("buffer_view_string", ("accessors[0].bufferView", "expected an integer"), setting("accessors.0.bufferView", "0")),
    ("mesh_bool", ("nodes[1].mesh", "expected an integer, got a boolean"), setting("nodes.1.mesh", True)),
    ("mesh_missing", ("nodes[1].mesh", "no mesh 9"), setting("nodes.1.mesh", 9)),
    ("name_number", ("nodes[1].name", "expected a string"), setting("nodes.1.name", 5)),
    ("scene_string", ("scene", "expected an integer"), setting("scene", "0")),
    ("scene_missing", ("scene", "no scene 3"), setting("scene", 3)),
    ("scene_nodes_string", ("scenes[0].nodes", "expected an array"), setting("scenes.0.nodes", "all")),
    ("root_missing", ("scenes[0].nodes[1]", "no node 5"), setting("scenes.0.nodes", [0, 5])),
    ("root_twice", ("scenes[0].nodes[1]", "listed twice"), setting("scenes.0.nodes", [0, 0, 1])),
    ("matrix_short", ("nodes[0].matrix", "16 numbers"), setting("nodes.0.matrix", [1, 0, 0])),
    ("matrix_string", ("nodes[0].matrix[0]", "expected a number"), setting("nodes.0.matrix", ["1"] + [0] * 15)),
    ("matrix_projective", ("nodes[0].matrix", "last row"), setting("nodes.0.matrix", [1, 0, 0, 1, 0, 1, 0, 0,
                                                                                      0, 0, 1, 0, 0, 0, 0, 1])),
    ("matrix_animated", ("nodes[1].matrix", "animated node"), setting("nodes.1.matrix", np.eye(4).reshape(-1).tolist())),
    ("translation_two", ("nodes[0].translation", "3 numbers"), setting("nodes.0.translation", [0, 1])),
    ("translation_far", ("nodes[0]", "beyond"), setting("nodes.0.translation", [0, 1e9, 0])),
    ("rotation_zero", ("nodes[0].rotation", "length 0"), setting("nodes.0.rotation", [0, 0, 0, 0])),
    ("scale_zero", ("ground", "scale 0"), setting("nodes.0.scale", [1, 0, 1])),
    ("primitives_empty", ("meshes[1].primitives", "entries"), setting("meshes.1.primitives", [])),
    ("attributes_string", ("meshes[1].primitives[0].attributes", "expected an object"),
     setting("meshes.1.primitives.0.attributes", "POSITION")),
    ("no_position", ("meshes[1].primitives[0].attributes", "no POSITION"),
     setting("meshes.1.primitives.0.attributes", {"NORMAL": 2})),
    ("mode_nine", ("meshes[1].primitives[0].mode", "not one of"), setting("meshes.1.primitives.0.mode", 9)),
    ("component_type", ("accessors[2].componentType", "not one of"), setting("accessors.2.componentType", 9999)),
    ("type_vec5", ("accessors[2].type", "not one of"), setting("accessors.2.type", "VEC5")),
    ("normalized_string", ("accessors[2].normalized", "true or false"), setting("accessors.2.normalized", "yes")),
    ("count_negative", ("accessors[2].count", "-5"), setting("accessors.2.count", -5)),
    ("count_zero", ("accessors[2].count", "out of range"), setting("accessors.2.count", 0)),
    ("count_4e9_no_view", ("accessors[2].count", "out of range"),
     edit(lambda d, b: d["accessors"][2].pop("bufferView") and set_path(d, "accessors.2.count", 4_000_000_000)
          and None)),
    ("count_2e9_no_view", ("accessors[2].count", "values"),
     edit(lambda d, b: d["accessors"][2].pop("bufferView") and set_path(d, "accessors.2.count", 2_000_000_000)
          and None)),
    ("zero_accessors", ("accessors[", "more than 33554432 values"), edit(zero_accessors)),
    ("count_beyond_view", ("accessors[2]", "out of range"), setting("accessors.2.count", 10_000)),
    ("byte_offset_negative", ("accessors[2].byteOffset", "out of range"), setting("accessors.2.byteOffset", -1)),
    ("byte_offset_misaligned", ("accessors[2].byteOffset", "aligned"), setting("accessors.2.byteOffset", 1)),
    ("view_missing", ("accessors[2].bufferView", "no bufferView 99"), setting("accessors.2.bufferView", 99)),
    ("view_length_zero", ("bufferViews[0].byteLength", "out of range"), setting("bufferViews.0.byteLength", 0)),
    ("view_stride_odd", ("bufferViews[0].byteStride", "multiple of 4"), setting("bufferViews.0.byteStride", 6)),
    ("view_stride_short", ("byteStride", "less than one element"), edit(strided_short)),
    ("view_beyond_buffer", ("bufferViews[0]", "out of range of the buffer"),
     setting("bufferViews.0.byteOffset", 1 << 20)),
    ("view_buffer_missing", ("bufferViews[0].buffer", "missing buffer 4"), setting("bufferViews.0.buffer", 4)),
    ("buffers_empty", ("missing buffer",), setting("buffers", [])),
    ("buffer_uri", ("buffers[0].uri", "not read"), setting("buffers.0.uri", "film.bin")),
    ("buffer_longer_than_bin", ("buffers[0].byteLength", "exceeds"), setting("buffers.0.byteLength", 1 << 24)),
    ("no_bin_chunk", ("no BIN chunk",), edit(bin_only)),
    ("sparse", ("accessors[2].sparse", "not supported"), setting("accessors.2.sparse", {"count": 1})),
    ("position_scalar", ("accessors[2].type", "expected VEC3"), setting("accessors.2.type", "SCALAR")),
    ("positions_nan", ("NaN or infinite", "POSITION"), positions([[0, 0, 0], [np.nan, 0, 0], [0, 1, 0]])),
    ("positions_inf", ("NaN or infinite", "POSITION"), positions([[0, 0, 0], [np.inf, 0, 0], [0, 1, 0]])),
    ("positions_far", ("POSITION", "beyond"), positions([[0, 0, 0], [1e30, 0, 0], [0, 1, 0]])),
    ("zero_area", ("crate", "no area"), edit(zero_area)),
    ("indices_beyond", ("indices", "index 99 out of range"), indices([0, 1, 99])),
    ("indices_not_triples", ("indices", "not a multiple of 3"), indices([0, 1, 2, 3])),
    ("indices_float", ("indices", "whole numbers"), indices([0.5, 1, 2], ctype=5126, dtype="<f4")),
    ("indices_vec3", ("accessors", "expected SCALAR"), setting("meshes.1.primitives.0.indices", 2)),
    ("no_mesh_node", ("no mesh node",), edit(lambda d, b: [n.pop("mesh") for n in d["nodes"]] and None)),
    ("points_only", ("no mesh node",), edit(lambda d, b: [p.update(mode=0) for m in d["meshes"]
                                                           for p in m["primitives"]] and None)),
    # the node graph
    ("cycle", ("cycle",), edit(cycle)),
    ("shared_child", ("nodes[2].children[0]", "already a child of nodes[0]"), edit(
        lambda d, b: d["nodes"].append({"children": [1]}) or set_path(d, "nodes.0.children", [1]) and None)),
    ("root_is_child", ("scenes[0].nodes", "not a root"), setting("nodes.0.children", [1])),
    ("diamond_40", ("already a child",), diamond(40)),
    ("chain_5000", ("deeper than 256",), chain(5000)),
    # animation
    ("sampler_missing", ("channels[0].sampler", "no sampler 5"), setting("animations.0.channels.0.sampler", 5)),
    ("target_node_missing", ("channels[0].target.node", "no node 40"),
     setting("animations.0.channels.0.target.node", 40)),
    ("target_path", ("target.path", "not one of"), setting("animations.0.channels.0.target.path", "position")),
    ("interpolation", ("interpolation", "QUADRATIC"), setting("animations.0.samplers.0.interpolation", "QUADRATIC")),
    ("channels_string", ("animations[0].channels", "expected an array"), setting("animations.0.channels", "all")),
    ("samplers_empty", ("animations[0].samplers", "entries"), setting("animations.0.samplers", [])),
    ("second_channel", ("second channel",), edit(second_channel)),
    ("input_vec3", ("samplers[0].input", "expected SCALAR"), setting("animations.0.samplers.0.input", 2)),
    ("output_width", ("samplers[0].output", "needs 3 values"), keys([0, 1], [[0, 0, 0, 1]] * 2)),
    ("key_count", ("2 key times but 3 values",), keys([0, 1], [[0, 0, 0]] * 3)),
    ("cubic_count", ("CUBICSPLINE needs 3 per key",), keys([0, 1], [[0, 0, 0]] * 2, interpolation="CUBICSPLINE")),
    ("times_decrease", ("samplers[0].input", "must not decrease"), keys([0, 1, 0.5])),
    ("time_negative", ("samplers[0].input", "negative"), keys([-1, 1])),
    ("time_nan", ("samplers[0].input", "NaN"), keys([0, np.nan])),
    ("time_inf", ("samplers[0].input", "NaN or infinite"), keys([0, np.inf])),
    ("value_nan", ("samplers[0].output", "NaN"), keys([0, 1], [[0, np.nan, 0], [0, 1, 0]])),
    ("time_1e9", ("frames",), keys([0, 1e9])),
    ("time_200k", ("frames",), keys([0, 200_000])),
    ("moving_node_frames", ("node-frames",), edit(many_moving)),
    ("rotation_key_zero", ("rotation key of length 0",), keys([0, 1], [[0, 0, 0, 0], [0, 0, 0, 1]], "rotation")),
    ("scale_key_far", ("scale value", "beyond"), keys([0, 1], [[1, 1, 1], [1e7, 1, 1]], "scale")),
    ("scale_key_zero", ("crate", "scale 0"), keys([0, 1], [[1, 1, 1], [0, 0, 0]], "scale")),
    ("many_forms", ("nodes[1] (crate)", "600 different proportions"), edit(many_forms)),
    # extras the studio reads
    ("fps_1e308", ("extras.studio.fps",), setting("scenes.0.extras", {"studio": {"fps": 1e308}})),
    ("fps_negative", ("extras.studio.fps",), setting("scenes.0.extras", {"studio": {"fps": -24}})),
    ("fps_string", ("extras.studio.fps", "expected a number"), setting("scenes.0.extras", {"studio": {"fps": "24"}})),
    ("frame_start_huge", ("extras.studio.frame_start", "out of range"),
     setting("scenes.0.extras", {"studio": {"frame_start": 10 ** 20}})),
    ("up_x", ("extras.studio.up", "not one of"), setting("scenes.0.extras", {"studio": {"up": "X"}})),
    ("studio_string", ("extras.studio", "expected an object"), setting("scenes.0.extras", {"studio": "Z-up"})),
    ("self_propelled_string", ("nodes[1].extras.studio.self_propelled", "true or false"),
     setting("nodes.1.extras", {"studio": {"self_propelled": "yes"}})),
    ("draco", ("extensionsRequired[0]", "KHR_draco_mesh_compression"),
     setting("extensionsRequired", ["KHR_draco_mesh_compression"])),
    # what a rigid film cannot hold
    ("skin", ("nodes[1] (crate)", "skinned mesh"), edit(skinned)),
    ("morph_weights", ("nodes[1] (crate)", "morph targets"), edit(morph_weights)),
    ("morph_channel", ("nodes[1] (crate", "morph target weights"), edit(morph_channel)),
]


def write_corpus(folder) -> list[tuple[str, tuple[str, ...], object]]:
    """Write every case as folder/<name>.glb; (name, expected words, path)."""
    out = []
    for name, words, make in CASES:
        path = folder / f"{name}.glb"
        path.write_bytes(make())
        out.append((name, words, path))
    return out
