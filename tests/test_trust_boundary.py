"""The trust boundary as a hostile user or model would try it, through the real `studio` command.

Each attack runs `python -m studio.cli` in a subprocess on a project of the
test's own. After every refusal the test checks what a person would: one line
naming what was wrong (the link, the file and line, the table, row and field),
exit 2, every file of the project byte-identical to before, and `studio audit
verify` passing. What is stored is kept as given; only the printing escapes it.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from agent_scenes import make_arm_project
from agent_scripts import good_plan, plan_replies
from chat_server import ChatServer
from studio.scene.io import load_scene
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.storyboard import State, put_state

ROOT = Path(__file__).resolve().parents[1]


def studio(*args, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "studio.cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder`: its kind and, for a file, its bytes' hash (links are not followed)."""
    out = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(top) / name
            if p.is_symlink():
                out[str(p.relative_to(folder))] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p.relative_to(folder))] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                out[str(p.relative_to(folder))] = ("folder",)
    return out


def one_line_refusal(r: subprocess.CompletedProcess, *words: str) -> str:
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("studio: "), r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def audit_passes(project: Path) -> None:
    r = studio("audit", "verify", project)
    assert r.returncode == 0 and "audit log intact" in r.stdout, r.stdout + r.stderr


def edit_db(project: Path, *sql: str) -> None:
    """Change studio.db with sqlite3, as a person behind the studio's back would; closed, so the
    write-ahead log is folded back in before the test takes its snapshot."""
    db = sqlite3.connect(project / "studio.db")
    try:
        for statement in sql:
            db.execute(statement)
        db.commit()
    finally:
        db.close()


@pytest.fixture
def arm(tmp_path) -> Path:
    path = tmp_path / "arm"
    with Project.create(path, name="arm") as p:
        scene = make_arm_project(p)
        put_state(p, scene, State("start", 1001, Pose.rest(scene), "wide", "rest"))
    r = studio("board", "status", path)
    assert r.returncode == 0 and "start" in r.stdout, r.stdout + r.stderr
    return path


# ---- symbolic links in a project's structure ------------------------------------------------------

def test_a_jobs_folder_linked_out_of_the_project_is_refused_and_nothing_is_written(arm, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.rmdir(arm / "jobs")
    os.symlink(out, arm / "jobs")
    code = tmp_path / "code.py"
    code.write_text("open('out.txt', 'w').write('escaped')\n")
    before = snapshot(arm)
    r = studio("agent", "run-code", arm, code)
    one_line_refusal(r, f"{arm / 'jobs'}: a symbolic link (to {out})")
    assert list(out.iterdir()) == [] and snapshot(arm) == before
    os.unlink(arm / "jobs")
    os.mkdir(arm / "jobs")
    audit_passes(arm)


def test_an_assets_folder_linked_out_of_the_project_is_refused_by_scene_build(arm, tmp_path):
    elsewhere = tmp_path / "oa"
    os.rename(arm / "assets", elsewhere)
    os.symlink(elsewhere, arm / "assets")
    before, outside = snapshot(arm), snapshot(elsewhere)
    r = studio("scene", "build", arm)
    one_line_refusal(r, f"{arm / 'assets'}: a symbolic link (to {elsewhere})")
    assert snapshot(arm) == before and snapshot(elsewhere) == outside


def test_a_link_deep_below_assets_is_refused_too(arm, tmp_path):
    (arm / "assets" / "meshes").mkdir(parents=True, exist_ok=True)
    os.symlink(tmp_path, arm / "assets" / "meshes" / "cache")
    before = snapshot(arm)
    r = studio("scene", "build", arm)
    one_line_refusal(r, f"{arm / 'assets' / 'meshes' / 'cache'}: a symbolic link")
    assert snapshot(arm) == before


def test_a_database_linked_to_another_project_is_refused_and_neither_changes(arm, tmp_path):
    other = tmp_path / "other"
    Project.create(other, name="other").close()
    os.rename(arm / "studio.db", tmp_path / "arm.db")
    os.symlink(other / "studio.db", arm / "studio.db")
    before, theirs = snapshot(arm), snapshot(other)
    r = studio("board", "reject", arm, "rolling", "--note", "x")
    one_line_refusal(r, f"{arm / 'studio.db'}: a symbolic link (to {other / 'studio.db'})")
    assert snapshot(arm) == before and snapshot(other) == theirs
    audit_passes(other)


def test_a_log_folder_linked_out_is_refused(arm, tmp_path):
    os.symlink(tmp_path, arm / "logs")
    before = snapshot(arm)
    one_line_refusal(studio("info", arm), f"{arm / 'logs'}: a symbolic link")
    assert snapshot(arm) == before


# ---- what a calls file holds, printed and stored ----------------------------------------------------

def test_replay_stores_a_name_with_terminal_escapes_as_given_and_prints_it_escaped(arm, tmp_path):
    name = "\x1b]0;owned\x07\x1b[2J\x1b[Hfine\nreplayed 99 call(s) from x"
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"tool": "name_scene", "arguments": {"name": name}}) + "\n")
    r = studio("agent", "replay", arm, calls)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout + r.stderr and "\x07" not in r.stdout
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x1b[Hfine\\nreplayed 99" in r.stdout
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("replayed")] == [
        f"replayed 1 call(s) from {calls} into {arm}"]                       # no forged line
    with Project.open(arm) as p:
        assert load_scene(p).name == name                                   # stored exactly as given
    audit_passes(arm)


def test_a_60_mb_argument_gives_a_short_line_naming_the_file_and_line(arm, tmp_path):
    calls = tmp_path / "big.jsonl"
    with open(calls, "w") as f:
        f.write(json.dumps({"tool": "name_scene", "arguments": {"name": "ok"}}) + "\n")
        f.write('{"tool": "name_scene", "arguments": {"name": "' + "x" * 60_000_000 + '"}}\n')
    before = snapshot(arm)
    line = one_line_refusal(studio("agent", "replay", arm, calls), f"{calls} line 2")
    assert len(line) < 400
    assert snapshot(arm) == before                 # the file is checked whole before any call runs
    audit_passes(arm)


@pytest.mark.parametrize("body, words", [
    ('{"tool": "name_scene", "arguments": {"name": ' + "[" * 100_000 + "]" * 100_000 + "}}",
     ["line 2", "nested deeper than 32 levels"]),
    ('{"tool": "name_scene", "arguments": {"name": ' + "9" * 5000 + "}}", ["line 2", "an integer of 5,000 digits"]),
    ('{"tool": "name_scene", "arguments": {"name": "ab\\ud800cd"}}',
     ["line 2", "arguments.name", "lone surrogate (\\ud800)"]),
    ('{"tool": "name_scene", "arguments": {"name": NaN}}', ["line 2", "NaN is not a JSON number"]),
], ids=["nested_100k", "digits_5000", "lone_surrogate", "nan"])
def test_calls_files_that_break_the_parser_are_one_line_naming_file_line_and_field(arm, tmp_path, body, words):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"tool": "name_scene", "arguments": {"name": "first"}}) + "\n" + body + "\n")
    before = snapshot(arm)
    one_line_refusal(studio("agent", "replay", arm, calls), str(calls), *words)
    assert snapshot(arm) == before
    audit_passes(arm)


def test_a_calls_file_that_is_not_utf8_names_the_line_and_column(arm, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_bytes(b'{"tool": "name_scene", "arguments": {"name": "a"}}\n{"tool": "name_scene", "argu\xffments"}\n')
    one_line_refusal(studio("agent", "replay", arm, calls), f"{calls}: byte 0xff at line 2 column 29 is not UTF-8")


# ---- stored JSON edited behind the studio's back -----------------------------------------------------

def test_a_pose_edited_to_broken_json_names_the_database_state_and_field(arm):
    edit_db(arm, "UPDATE states SET pose = '{not json' WHERE id = 'start'")
    before = snapshot(arm)
    one_line_refusal(studio("board", "status", arm),
                     f"{arm / 'studio.db'}: states row start, field pose: not valid JSON (Expecting property name")
    assert snapshot(arm) == before


def test_a_scene_body_nested_too_deep_is_named(arm):
    edit_db(arm, f"UPDATE scene_objects SET body = '{'[' * 5000 + ']' * 5000}' WHERE kind = 'scene'")
    before = snapshot(arm)
    one_line_refusal(studio("board", "status", arm),
                     "scene_objects row scene scene, field body: nested deeper than 64 levels")
    assert snapshot(arm) == before


# ---- meshes that break the reader --------------------------------------------------------------------

def _glb(doc: dict, binary: bytes) -> bytes:
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    body = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(binary), 0x004E4942) + binary
    return b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body


def _triangle_glb(count: int) -> bytes:
    positions = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
    return _glb({"asset": {"version": "2.0"}, "buffers": [{"byteLength": len(positions)}],
                 "bufferViews": [{"buffer": 0, "byteLength": len(positions)}],
                 "accessors": [{"bufferView": 0, "componentType": 5126, "count": count, "type": "VEC3"}],
                 "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
                 "nodes": [{"mesh": 0}], "scenes": [{"nodes": [0]}], "scene": 0}, positions)


MESHES = {
    "index.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 99999999\n",
                  ["index.obj line 5: f: vertex 99999999 is not one of the 3 vertices"]),
    "broken.stl": (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\n"
                   b"endsolid x\n", ["broken.stl line 2: the facet has 2 vertices; expected 3"]),
    "letters.stl": (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 zero 0\nvertex 0 1 0\n"
                    b"endloop\nendfacet\nendsolid x\n", ["letters.stl line 5: vertex: zero is not a number"]),
    "short.stl": (b"\0" * 80 + struct.pack("<I", 1_000_000) + b"\0" * 50,
                  ["the binary STL header says 1,000,000 triangles (50,000,084 bytes) but the file has 134 bytes"]),
    "past_end.glb": (_triangle_glb(1_000_000), ["accessors[0] needs 12,000,000 bytes", "bufferViews[0], which has 36"]),
}


@pytest.mark.parametrize("name", sorted(MESHES))
def test_meshes_that_break_the_reader_are_one_line_naming_the_fault(arm, tmp_path, name):
    data, words = MESHES[name]
    mesh = tmp_path / name
    mesh.write_bytes(data)
    before = snapshot(arm)
    line = one_line_refusal(studio("scene", "import", arm, mesh, "--name", "prop"), *words)
    assert "numpy" not in line and "reshape" not in line and "IndexError" not in line
    assert snapshot(arm) == before
    audit_passes(arm)


def test_a_mesh_past_the_face_limit_is_refused_before_it_is_read(arm, tmp_path):
    mesh = tmp_path / "huge.obj"
    with open(mesh, "w") as f:
        f.write("v 0 0 0\nv 1 0 0\nv 0 1 0\n" + "f 1 2 3\n" * 3_000_000)
    before = snapshot(arm)
    one_line_refusal(studio("scene", "import", arm, mesh, "--name", "prop", timeout=120),
                     "huge.obj: 3,000,000 faces", "past the face limit of 1,000,000")
    assert snapshot(arm) == before
    small = tmp_path / "small.obj"
    small.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n")
    one_line_refusal(studio("scene", "import", arm, small, "--name", "prop", env={"KEYPOSE_MESH_FACE_LIMIT": "3"}),
                     "4 faces", "past the face limit of 3")
    r = studio("scene", "import", arm, small, "--name", "prop")
    assert r.returncode == 0 and "4 triangles" in r.stdout, r.stderr


# ---- a foreign trigger in studio.db ------------------------------------------------------------------

def test_a_foreign_trigger_is_named_by_audit_verify_and_stops_every_write(arm):
    edit_db(arm, "CREATE TRIGGER spy AFTER INSERT ON audit BEGIN UPDATE meta SET value = 'renamed' WHERE key = 'name'; END",
            "CREATE VIEW peek AS SELECT * FROM reviewers", "CREATE TABLE stash (x)")
    before = snapshot(arm)
    r = studio("audit", "verify", arm)
    assert r.returncode == 1
    assert "trigger spy on audit" in r.stdout and "view peek" in r.stdout and "table stash" in r.stdout
    one_line_refusal(studio("board", "reject", arm, "start", "--note", "no"),
                     "holds a trigger spy on audit", "writes nothing to this project until it is removed")
    calls = arm.parent / "calls.jsonl"
    calls.write_text(json.dumps({"tool": "name_scene", "arguments": {"name": "x"}}) + "\n")
    assert studio("agent", "replay", arm, calls).returncode != 0
    assert snapshot(arm) == before
    with Project.open(arm) as p:
        assert p.meta("name") == "arm"
    edit_db(arm, "DROP TRIGGER spy", "DROP VIEW peek", "DROP TABLE stash")
    audit_passes(arm)
    assert studio("agent", "replay", arm, calls).returncode == 0


def test_a_studio_trigger_replaced_under_its_own_name_counts_as_foreign(arm):
    edit_db(arm, "DROP TRIGGER audit_no_delete",
            "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT 1; END")
    r = studio("audit", "verify", arm)
    assert r.returncode == 1 and "trigger audit_no_delete on audit (CREATE TRIGGER audit_no_delete" in r.stdout


# ---- the session keyring, as the model would reach it --------------------------------------------------

SECRET = "HOST-KEYRING-SECRET-42"
LAUNCH = """
import ctypes, os, sys
import pyseccomp
syscall_number = lambda name: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.syscall(ctypes.c_long(syscall_number("keyctl")), 1, None) > 0
secret = sys.argv[1].encode()
assert libc.syscall(ctypes.c_long(syscall_number("add_key")), b"user", b"session_rtsecret", secret,
                    ctypes.c_size_t(len(secret)), ctypes.c_long(-3)) > 0
os.execv(sys.executable, [sys.executable, "-m", "studio.cli", *sys.argv[2:]])
"""
READ_KEYRING = """
import ctypes, sys
from ctypes import c_long
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = c_long
kid = libc.syscall(c_long(250), c_long(10), c_long(-3), b"user", b"session_rtsecret", c_long(0))
buf = ctypes.create_string_buffer(256)
n = libc.syscall(c_long(250), c_long(11), c_long(kid), buf, c_long(256))
keys = open("/proc/keys").read().replace(chr(10), " | ")
sys.exit(f"keyring: {kid} {n} {buf.value.decode(errors='replace')} {keys}")       # the last line reaches the model
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the code calls keyctl by its x86_64 number")
def test_agent_code_never_reads_the_session_keyring_and_the_model_never_sees_it(arm):
    call = {"tool_calls": [{"name": "build_part_code", "arguments": {"body": "part", "code": READ_KEYRING}}]}
    plan = good_plan("the arm lifts the panel")
    plan["objects"], plan["events"] = [{"name": "panel", "description": "a panel"}], []
    with ChatServer([*plan_replies(plan), call, call, call, {"content": "done"}]) as chat:
        r = subprocess.run([sys.executable, "-c", LAUNCH, SECRET, "agent", "plan", str(arm), "--prompt",
                            "the arm lifts the panel", "--build"], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "KEYPOSE_MODEL_BASE_URL": chat.base_url,
                                "KEYPOSE_MODEL_NAME": "scripted", "OPENAI_API_KEY": "sk-keyring-test-0123456789"})
        requests = [json.dumps(q["body"]) for q in chat.requests]
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(requests) == len(plan_replies(plan)) + 4
    refusals = [q for q in requests[-3:] if "the code exited with status 1" in q]
    assert len(refusals) == 3                                           # each run's outcome went back
    assert "keyring: -1 -1" in requests[-1]                             # keyctl refused: no key id, no bytes
    assert not any(SECRET in q for q in requests) and SECRET not in r.stdout + r.stderr
    for job in (arm / "jobs").glob("agent-part-*"):
        for f in job.rglob("*"):
            assert not f.is_file() or SECRET.encode() not in f.read_bytes()
    audit_passes(arm)
