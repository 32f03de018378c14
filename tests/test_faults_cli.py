"""No traceback reaches a person: each fault is one line and an exit code, and an
unexpected error names what failed and the log holding its traceback."""
from __future__ import annotations

import sqlite3

from faults_files import one_line, studio


def test_studio_new_on_a_file_is_refused_in_one_line(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("not a folder")
    out = studio("new", target)
    assert out.returncode == 2
    assert str(target) in one_line(out.stderr) and "is a file" in out.stderr
    assert target.read_text() == "not a folder"


def test_a_negative_schema_version_is_bad_input_naming_the_field(tmp_path):
    assert studio("new", tmp_path / "p").returncode == 0
    with sqlite3.connect(tmp_path / "p" / "studio.db") as conn:
        conn.execute("UPDATE meta SET value = '-5' WHERE key = 'schema_version'")
    out = studio("info", tmp_path / "p")
    assert out.returncode == 2
    assert "meta.schema_version is -5" in one_line(out.stderr)


def test_an_unexpected_error_is_one_line_naming_the_log_with_the_traceback(tmp_path):
    assert studio("new", tmp_path / "p").returncode == 0
    with sqlite3.connect(tmp_path / "p" / "studio.db") as conn:     # a body stored as a list, not an object
        conn.execute("INSERT INTO scene_objects VALUES ('body', 'crate', 0, '[1, 2]')")
    out = studio("info", tmp_path / "p")
    assert out.returncode == 3
    line = one_line(out.stderr)
    log = tmp_path / "p" / "logs" / "studio.log"
    assert "failed unexpectedly" in line and "AttributeError" in line and str(log) in line
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "studio/scene/ir.py" in text
    assert f"studio info {tmp_path / 'p'}" in text


def test_the_log_goes_to_the_users_state_folder_when_the_project_cannot_be_named(tmp_path):
    assert studio("new", tmp_path / "p").returncode == 0
    with sqlite3.connect(tmp_path / "p" / "studio.db") as conn:
        conn.execute("INSERT INTO scene_objects VALUES ('body', 'crate', 0, '[1, 2]')")
    (tmp_path / "p" / "logs").write_text("a file where the log folder would go")
    out = studio("info", tmp_path / "p", env={"XDG_STATE_HOME": str(tmp_path / "state")})
    assert out.returncode == 3
    log = tmp_path / "state" / "keypose-studio" / "studio.log"
    assert str(log) in one_line(out.stderr) and "AttributeError" in log.read_text()
