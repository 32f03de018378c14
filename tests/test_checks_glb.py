"""`studio verify` and `studio score` on animated .glb files written byte by byte in the test."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from glb_films import GlbWriter
from studio.cli import main


def falling_box(tmp_path, up_z=False, extras=None, interpolation="LINEAR"):
    """A 0.2 m box falls from 1 m (Y up), lands at t=0.5 s, sinks 31 mm from t=1 s to 1.25 s."""
    g = GlbWriter()
    if extras is not None:
        g.doc["scenes"][0]["extras"] = {"studio": extras}
    g.box("ground", [4, 0.1, 4], translation=(0, -0.05, 0))
    b = g.box("crate", [0.2, 0.2, 0.2])
    keys = [[0, 1.0, 0], [0, 0.1, 0], [0, 0.1, 0], [0, 0.069, 0], [0, 0.069, 0]]
    g.animate(b, "translation", [0, 0.5, 1.0, 1.25, 1.5], keys, interpolation)
    path = tmp_path / "fall.glb"
    path.write_bytes(g.bytes())
    return path


def run_verify(path, tmp_path, capsys):
    out = tmp_path / "out.json"
    code = main(["verify", str(path), "--json", str(out)])
    return code, json.loads(out.read_text()) if out.exists() else None, capsys.readouterr()


def test_falling_and_sinking_box(tmp_path, capsys):
    code, doc, _ = run_verify(falling_box(tmp_path), tmp_path, capsys)
    assert code == 1
    reports = {r["name"]: r for r in doc["reports"]}
    # 24 fps, frame_start 1: t = (frame-1)/24; lands at frame 13, sinks past 5 mm after t=1 s
    floating = sorted(e["frame"] for e in reports["Supported"]["evidence"])
    assert floating == list(range(1, 13))
    assert {e["body"] for e in reports["Supported"]["evidence"]} == {"crate"}
    pen = reports["NoPenetration"]["evidence"]
    t = (np.array([e["frame"] for e in pen]) - 1) / 24
    depth = np.clip((t - 1.0) / 0.25, 0, 1) * 0.031
    assert [e["depth_m"] for e in pen] == pytest.approx(depth.tolist(), abs=1e-5)
    every = np.arange(1, 38)
    truth = np.clip(((every - 1) / 24 - 1.0) / 0.25, 0, 1) * 0.031
    assert [e["frame"] for e in pen] == every[truth > 0.005].tolist() == list(range(26, 38))
    assert {(e["a"], e["b"]) for e in pen} == {("crate", "ground")}      # the movable body first
    assert all(e["axis"] == pytest.approx([0, 0, 1], abs=1e-6) for e in pen)   # +Z up after the Y-up turn
    assert doc["metrics"]["penetration_rate"] == pytest.approx(len(pen) / 37)
    assert doc["metrics"]["floating_rate"] == pytest.approx(12 / 37)


def test_z_up_fps_and_frame_start_from_scene_extras(tmp_path, capsys):
    g = GlbWriter()
    g.doc["scenes"][0]["extras"] = {"studio": {"up": "Z", "fps": 10, "frame_start": 1001}}
    g.box("floor", [4, 4, 0.1], translation=(0, 0, -0.05), extras={"role": "ground"})
    b = g.box("puck", [0.1, 0.1, 0.1])
    g.animate(b, "translation", [0, 1.0], [[0, 0, 0.05], [0, 0, 0.35]], "STEP")
    path = tmp_path / "z.glb"
    path.write_bytes(g.bytes())
    code, doc, _ = run_verify(path, tmp_path, capsys)
    sup = {r["name"]: r for r in doc["reports"]}["Supported"]
    assert sup["metrics"]["body_frames"] == 11
    assert [e["frame"] for e in sup["evidence"]] == [1011]      # STEP: jumps up only at the last key
    assert code == 0                                             # floating is advisory


def test_static_overlaps_are_construction_and_flyers_are_exempt(tmp_path, capsys):
    g = GlbWriter()
    g.box("ground", [4, 0.1, 4], translation=(0, -0.05, 0))
    g.box("wall", [1, 1, 0.1], translation=(0, 0.5, 0))
    g.box("shelf", [0.5, 0.05, 0.3], translation=(0, 0.5, 0.1))          # built into the wall
    d = g.box("drone", [0.3, 0.1, 0.3], extras={"self_propelled": True})
    g.animate(d, "translation", [0, 1], [[1, 2, 0], [1.5, 2, 0]])
    r = g.box("spinner", [0.2, 0.2, 0.2], translation=(-1, 0.1, 0))
    g.animate(r, "rotation", [0, 1], [[0, 0, 0, 1], [0, np.sin(0.5), 0, np.cos(0.5)]])
    path = tmp_path / "s.glb"
    path.write_bytes(g.bytes())
    code, doc, _ = run_verify(path, tmp_path, capsys)
    reports = {r["name"]: r for r in doc["reports"]}
    assert code == 0
    assert reports["NoPenetration"]["verdict"] == "pass"
    assert reports["Supported"]["verdict"] == "pass"
    assert reports["Supported"]["metrics"]["body_frames"] == 25           # only the spinner is judged


def test_score_prints_a_table_and_the_mean(tmp_path, capsys):
    a = falling_box(tmp_path)
    sub = tmp_path / "b"
    sub.mkdir()
    b = falling_box(sub, interpolation="STEP")
    out = tmp_path / "score.json"
    assert main(["score", str(a), str(b), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "penetration" in text and "mean of 2 films" in text
    doc = json.loads(out.read_text())
    rates = [f["penetration_rate"] for f in doc["films"]]
    assert doc["mean"]["penetration_rate"] == pytest.approx(sum(rates) / 2)
    assert doc["films"][1]["floating_rate"] == pytest.approx(12 / 37)      # STEP: up at 1 m until t = 0.5 s
    assert doc["films"][1]["penetration_rate"] == pytest.approx(7 / 37)    # sunk only from t = 1.25 s


def corrupt(path, how):
    data = bytearray(path.read_bytes())
    if how == "magic":
        data[:4] = b"GLTX"
    elif how == "truncated":
        data = data[:-40]
        struct.pack_into("<I", data, 8, len(data) + 40)
        data = data[:len(data)]
    elif how in ("accessor", "buffer"):
        jlen = struct.unpack_from("<I", data, 12)[0]
        doc = json.loads(bytes(data[20:20 + jlen]))
        if how == "accessor":
            doc["accessors"][0]["count"] = 10_000
        else:
            doc["buffers"] = []
        js = json.dumps(doc).encode()
        js += b" " * (-len(js) % 4)
        rest = data[20 + jlen:]
        data = bytearray(struct.pack("<III", 0x46546C67, 2, 20 + len(js) + len(rest))
                         + struct.pack("<II", len(js), 0x4E4F534A) + js + rest)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how, message", [("magic", "bad magic"), ("truncated", "truncated"),
                                          ("accessor", "accessor out of range"), ("buffer", "missing buffer")])
def test_malformed_glb_is_bad_input_with_a_message(tmp_path, capsys, how, message):
    path = falling_box(tmp_path)
    corrupt(path, how)
    code = main(["verify", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "fall.glb" in err
