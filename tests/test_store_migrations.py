"""Schema migrations: a version-1 project opens in this studio and keeps its data."""
from __future__ import annotations

import sqlite3

from studio.store.project import DB_NAME, Project
from studio.store.schema import APP_ID, MIGRATIONS, SCHEMA_VERSION


def _tables(path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


def test_v1_database_migrates_to_current_and_keeps_data(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    conn = sqlite3.connect(folder / DB_NAME)
    conn.executescript(MIGRATIONS[0])
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", APP_ID), ("schema_version", "1"),
                                                        ("name", "old film"), ("fps", "25"),
                                                        ("frame_start", "1001")])
    conn.execute("INSERT INTO docs (key, body) VALUES ('plan', '{\"shots\": 3}')")
    conn.execute("INSERT INTO audit (at, actor, action) VALUES ('2026-01-01', 'person', 'create project')")
    conn.commit()
    conn.close()
    v1_tables = _tables(folder / DB_NAME)
    assert "agent_steps" not in v1_tables

    with Project.open(folder) as p:
        assert p.meta("schema_version") == str(SCHEMA_VERSION)
        assert (p.name, p.fps, p.frame_start) == ("old film", 25, 1001)
        assert p.get_doc("plan") == {"shots": 3}
        assert [a["action"] for a in p.audit_log()] == ["create project"]
        p.db["agent_steps"].insert({"action": "plan", "tokens": 10})
    fresh = tmp_path / "fresh"
    Project.create(fresh).close()
    assert _tables(folder / DB_NAME) == _tables(fresh / DB_NAME)
    with Project.open(folder) as p:      # opening again migrates nothing more
        assert p.meta("schema_version") == str(SCHEMA_VERSION)
