"""Schema versions and forward migrations of `studio.db`.

Each migration is a script taking the database from version N-1 to N in one
transaction, so a crash leaves it at N-1 or N. The version lives in `meta.schema_version`.
"""
from __future__ import annotations

import sqlite_utils

APP_ID = "keypose-studio"
SCHEMA_VERSION = 2


V1 = """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE IF NOT EXISTS docs (key TEXT PRIMARY KEY, body TEXT NOT NULL, updated TEXT);
    CREATE TABLE IF NOT EXISTS scene_objects (
        kind TEXT NOT NULL, name TEXT NOT NULL, position INTEGER, body TEXT NOT NULL,
        PRIMARY KEY (kind, name));
    CREATE TABLE IF NOT EXISTS states (
        id TEXT PRIMARY KEY, frame INTEGER NOT NULL, shot TEXT, description TEXT,
        pose TEXT NOT NULL, content_hash TEXT, design_id TEXT, visible TEXT, still TEXT, updated TEXT);
    CREATE TABLE IF NOT EXISTS reviews (
        id INTEGER PRIMARY KEY, state_id TEXT NOT NULL, verdict TEXT NOT NULL, note TEXT,
        reviewer TEXT, at TEXT, content_hash TEXT, design_id TEXT, visible TEXT);
    CREATE TABLE IF NOT EXISTS reports (
        id INTEGER PRIMARY KEY, target TEXT NOT NULL, name TEXT NOT NULL, verdict TEXT NOT NULL,
        evidence TEXT, metrics TEXT, seconds REAL, checked_hash TEXT, at TEXT);
    CREATE INDEX IF NOT EXISTS reports_target ON reports(target, name);
    CREATE TABLE IF NOT EXISTS tracks (
        segment TEXT PRIMARY KEY, start INTEGER, "end" INTEGER, asset TEXT, hash TEXT,
        tool TEXT, bounds_hash TEXT, at TEXT);
    CREATE TABLE IF NOT EXISTS jobs (
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL, state TEXT NOT NULL, progress REAL DEFAULT 0,
        spec TEXT, log TEXT, attempts INTEGER DEFAULT 0, outputs TEXT, pid INTEGER,
        runner TEXT, submission_id TEXT, error TEXT, created TEXT, updated TEXT);
    CREATE TABLE IF NOT EXISTS audit (
        id INTEGER PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
        target TEXT, detail TEXT);
    CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""

# Agent steps (checkpoints) and repair proposals.
V2 = """
    CREATE TABLE IF NOT EXISTS agent_steps (
        id INTEGER PRIMARY KEY, at TEXT, action TEXT, detail TEXT, tokens INTEGER, seconds REAL,
        snapshot TEXT);
    CREATE TABLE IF NOT EXISTS repairs (
        id INTEGER PRIMARY KEY, target TEXT, check_name TEXT, proposal TEXT, status TEXT,
        note TEXT, source TEXT, at TEXT);
"""

MIGRATIONS = [V1, V2]


def migrate(db: sqlite_utils.Database, current: int) -> None:
    """Apply each missing version in its own transaction (script, then the version mark)."""
    for version in range(current + 1, SCHEMA_VERSION + 1):
        db.conn.executescript(
            "BEGIN IMMEDIATE;\n" + MIGRATIONS[version - 1]
            + f"\nINSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '{version}');\nCOMMIT;")
