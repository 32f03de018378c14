"""Schema versions and forward migrations of `studio.db`.

Each migration is a script taking the database from version N-1 to N in one
transaction, so a crash leaves it at N-1 or N. The version lives in `meta.schema_version`.
"""
from __future__ import annotations

import functools
import sqlite3
import uuid
from dataclasses import dataclass

import sqlite_utils

from studio.store import audit

APP_ID = "keypose-studio"
SCHEMA_VERSION = 3


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


# One statement each: a script would commit the migration's transaction half way.
V3_BEFORE = [
    "ALTER TABLE audit ADD COLUMN prev_hash TEXT",
    "ALTER TABLE audit ADD COLUMN hash TEXT",
    "ALTER TABLE reviews ADD COLUMN signature TEXT",
    "ALTER TABLE reviews ADD COLUMN chain TEXT",
    "CREATE TABLE IF NOT EXISTS reviewers (name TEXT PRIMARY KEY, kind TEXT NOT NULL, public_key TEXT NOT NULL, "
    "added TEXT)",
    "DROP TRIGGER IF EXISTS audit_no_update",
]
V3_AFTER = [
    "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS reviews_no_update BEFORE UPDATE ON reviews "
    "BEGIN SELECT RAISE(ABORT, 'a review is never edited; review the state again'); END",
    "CREATE TRIGGER IF NOT EXISTS reviewers_no_update BEFORE UPDATE ON reviewers "
    "BEGIN SELECT RAISE(ABORT, 'a reviewer key is never replaced'); END",
    "CREATE TRIGGER IF NOT EXISTS reviewers_no_delete BEFORE DELETE ON reviewers "
    "BEGIN SELECT RAISE(ABORT, 'a reviewer key is never removed'); END",
]


def v3(conn) -> None:
    """Signed reviews and a hash-chained audit log.

    Adds `reviewers` (each reviewer's public key and kind), a signature and the
    chain position to every review, `prev_hash`/`hash` to every audit row, and a
    `project_id` that signatures bind so a review cannot be copied into another
    project. Existing audit rows are hashed in order, which starts the chain.
    Reviews made before this version carry no signature and no longer count:
    their states read "unreviewed: the review is unsigned" until reviewed again.
    """
    for sql in V3_BEFORE:
        conn.execute(sql)
    audit.rechain(conn)
    for sql in V3_AFTER:
        conn.execute(sql)
    conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('project_id', ?)", [uuid.uuid4().hex])


MIGRATIONS = [V1, V2, v3]


def migrate(db: sqlite_utils.Database, current: int) -> None:
    """Apply each missing version in its own transaction (the change, then the version mark)."""
    conn = db.conn
    for version in range(current + 1, SCHEMA_VERSION + 1):
        step = MIGRATIONS[version - 1]
        if isinstance(step, str):
            conn.executescript(
                "BEGIN IMMEDIATE;\n" + step
                + f"\nINSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '{version}');\nCOMMIT;")
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            step(conn)
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", [str(version)])
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


# ---- the studio's own schema, and what else a studio.db may hold --------------------------------

@dataclass(frozen=True)
class SchemaObject:
    """One entry of sqlite_master: a table, view, index or trigger."""

    kind: str
    name: str
    table: str
    sql: str

    def __str__(self) -> str:
        from studio.store.shown import shown
        on = f" on {self.table}" if self.table and self.table != self.name else ""
        return f"{self.kind} {shown(self.name, 80)}{on} ({shown(' '.join((self.sql or '').split()), 160)})"


def _objects(conn) -> dict[tuple[str, str], SchemaObject]:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return {(r[0], r[1]): SchemaObject(r[0], r[1], r[2] or "", r[3] or "") for r in rows
            if not str(r[1]).startswith("sqlite_")}      # SQLite's own (autoindexes, sequences, statistics)


@functools.lru_cache(maxsize=1)
def own_schema() -> dict[tuple[str, str], str]:
    """{(kind, name): normalised SQL} of every object the migrations make, from a fresh database."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        migrate(sqlite_utils.Database(conn), 0)
        return {key: _norm(o.sql) for key, o in _objects(conn).items()}
    finally:
        conn.close()


def _norm(sql: str) -> str:
    return " ".join((sql or "").split())


def foreign_objects(conn) -> list[SchemaObject]:
    """Every schema object the studio did not make, or made differently (a trigger replaced under
    the same name counts), in sqlite_master's order of kind and name."""
    own = own_schema()
    found = [o for key, o in _objects(conn).items() if own.get(key) != _norm(o.sql)]
    return sorted(found, key=lambda o: (o.kind, o.name))


def foreign_triggers(conn) -> list[SchemaObject]:
    return [o for o in foreign_objects(conn) if o.kind == "trigger"]
