"""The project folder: create/open, refusals that leave files untouched, atomic writes, the audit log."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from studio.store import project as project_module
from studio.store.project import DB_NAME, Project, ProjectError, write_atomic
from studio.store.schema import SCHEMA_VERSION


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under the folder with its bytes, to prove a refusal changed nothing."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_create_then_open_round_trip(tmp_path):
    with Project.create(tmp_path / "film", name="Film", fps=30, frame_start=1001) as p:
        p.put_doc("plan", {"shots": [{"id": "s1", "frames": [1001, 1100]}]})
        name = p.put_asset(b"mesh bytes", "bin")
    with Project.open(tmp_path / "film") as p:
        assert (p.name, p.fps, p.frame_start) == ("Film", 30, 1001)
        assert p.meta("schema_version") == str(SCHEMA_VERSION)
        assert p.get_doc("plan") == {"shots": [{"id": "s1", "frames": [1001, 1100]}]}
        assert p.read_asset(name) == b"mesh bytes"
        assert [a["action"] for a in reversed(p.audit_log())] == ["create project", "set plan"]
    for sub in ("assets", "renders", "exports", "jobs"):
        assert (tmp_path / "film" / sub).is_dir()


def test_create_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("keep me")
    with pytest.raises(ProjectError, match="not empty"):
        Project.create(tmp_path / "busy")
    assert snapshot(tmp_path / "busy") == {"notes.txt": b"keep me"}


def _refusal(folder: Path, *fragments: str) -> None:
    before = snapshot(folder) if folder.is_dir() else None
    with pytest.raises(ProjectError) as e:
        Project.open(folder)
    for f in fragments:
        assert f in str(e.value), str(e.value)
    if before is not None:
        assert snapshot(folder) == before


def test_missing_folder(tmp_path):
    _refusal(tmp_path / "nowhere", "no such folder")
    assert not (tmp_path / "nowhere").exists()


def test_not_a_project_folder(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "a.png").write_bytes(b"\x89PNG....")
    _refusal(tmp_path / "photos", "not a Keypose project", DB_NAME)
    (tmp_path / "file.txt").write_text("x")
    _refusal(tmp_path / "file.txt", "not a folder")


def test_corrupt_database_file(tmp_path):
    folder = tmp_path / "broken"
    Project.create(folder).close()
    (folder / DB_NAME).write_bytes(b"this is not a database at all" * 100)
    _refusal(folder, str(folder / DB_NAME), "not an SQLite database")


def test_truncated_database_file(tmp_path):
    folder = tmp_path / "cut"
    with Project.create(folder) as p:
        p.put_doc("plan", {"text": "x" * 20000})
    data = (folder / DB_NAME).read_bytes()
    (folder / DB_NAME).write_bytes(data[:100] + b"\x00" * 4000 + data[4100:6000])
    _refusal(folder, str(folder / DB_NAME), "corrupt")


def test_foreign_sqlite_database(tmp_path):
    folder = tmp_path / "foreign"
    folder.mkdir()
    conn = sqlite3.connect(folder / DB_NAME)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    conn.commit()
    conn.close()
    _refusal(folder, "not a Keypose project", "no meta table")

    other = tmp_path / "other_app"
    other.mkdir()
    conn = sqlite3.connect(other / DB_NAME)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('app', 'photo-organiser')")
    conn.commit()
    conn.close()
    _refusal(other, "another application", "photo-organiser")


def test_newer_schema_version_is_refused_untouched(tmp_path):
    folder = tmp_path / "future"
    with Project.create(folder) as p:
        p.set_meta("schema_version", SCHEMA_VERSION + 5)
    _refusal(folder, f"schema {SCHEMA_VERSION + 5}", f"reads up to {SCHEMA_VERSION}", "update the studio")


def test_failed_transaction_leaves_nothing(tmp_project):
    with pytest.raises(RuntimeError):
        with tmp_project.transaction():
            tmp_project.db["docs"].insert({"key": "plan", "body": "{}"})
            tmp_project.audit("person", "half an edit")
            raise RuntimeError("crash mid-edit")
    assert tmp_project.get_doc("plan") is None
    assert "half an edit" not in [a["action"] for a in tmp_project.audit_log()]


def test_audit_log_is_append_only(tmp_project):
    tmp_project.audit("person", "approve", "state:S1", {"note": "good"})
    before = tmp_project.audit_log()
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        tmp_project.db.execute("UPDATE audit SET actor = 'someone else'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        tmp_project.db.execute("DELETE FROM audit")
    tmp_project.audit("agent", "propose repair", "film")
    after = tmp_project.audit_log()
    assert after[1:] == before
    assert (after[0]["actor"], after[0]["action"]) == ("agent", "propose repair")


@pytest.mark.parametrize("fail_in", ["fsync", "replace"])
def test_interrupted_atomic_write_leaves_the_old_file_and_no_part(tmp_path, monkeypatch, fail_in):
    target = tmp_path / "renders" / "still.png"
    write_atomic(target, b"old picture")

    def crash(*a, **k):
        raise KeyboardInterrupt("killed mid-write")
    monkeypatch.setattr(project_module.os, fail_in, crash)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new picture that never lands" * 1000)
    monkeypatch.undo()
    assert target.read_bytes() == b"old picture"
    assert sorted(os.listdir(target.parent)) == ["still.png"]


def test_altered_asset_is_detected(tmp_project):
    name = tmp_project.put_asset(b"tracks", "npz")
    path = tmp_project.asset_path(name)
    path.write_bytes(b"tampered")
    with pytest.raises(ProjectError, match="does not match its hash"):
        tmp_project.read_asset(name)
