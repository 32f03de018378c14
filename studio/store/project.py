"""The project on disk: a folder with `studio.db` and content-addressed assets.

The database is the source of truth (SQLite in WAL mode through sqlite-utils).
Files are written atomically (temp, fsync, rename), so a killed app or job
never leaves a half-written asset where a finished one would be. Opening
checks everything first and writes nothing unless the project is sound.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils

from . import audit as chain
from .schema import APP_ID, SCHEMA_VERSION, migrate

DB_NAME = "studio.db"
FOLDERS = ("assets", "renders", "exports", "jobs")


class ProjectError(Exception):
    """A project that cannot be opened or written; the message says why."""


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _connect(dbfile: Path) -> sqlite_utils.Database:
    """Autocommit connection; `Project.transaction` groups writes explicitly."""
    conn = sqlite3.connect(dbfile, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA foreign_keys=ON")
    return sqlite_utils.Database(conn)


class Project:
    """An open project. Use `Project.create` or `Project.open`."""

    def __init__(self, path: Path, db: sqlite_utils.Database):
        self.path = Path(path).absolute()   # job specs and workers run from other folders
        self.db = db
        self._listeners: list = []
        self._after_commit: list = []

    # ---- opening --------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, name: str | None = None, fps: int = 24,
               frame_start: int = 1001, units: str = "m") -> "Project":
        path = Path(path)
        if (path / DB_NAME).exists():
            raise ProjectError(f"{path}: a project is already there")
        if path.exists() and any(p for p in path.iterdir() if not p.name.startswith(".")):
            raise ProjectError(f"{path}: the folder is not empty; choose a new folder for the project")
        if fps <= 0:
            raise ProjectError(f"fps must be positive, got {fps}")
        path.mkdir(parents=True, exist_ok=True)
        for sub in FOLDERS:
            (path / sub).mkdir(exist_ok=True)
        db = _connect(path / DB_NAME)
        db.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        migrate(db, 0)
        project = cls(path, db)
        with project.transaction():
            meta = {"app": APP_ID, "name": name or path.name, "fps": str(fps),
                    "frame_start": str(frame_start), "units": units, "created": now()}
            db["meta"].insert_all([{"key": k, "value": v} for k, v in meta.items()], replace=True)
            project.audit("person", "create project", str(path), meta)
        return project

    @classmethod
    def open(cls, path: str | Path) -> "Project":
        path = Path(path)
        if not path.exists():
            raise ProjectError(f"{path}: no such folder")
        if not path.is_dir():
            raise ProjectError(f"{path}: not a folder; a project is a folder holding {DB_NAME}")
        dbfile = path / DB_NAME
        if not dbfile.exists():
            raise ProjectError(f"{path}: not a Keypose project (no {DB_NAME} inside)")
        version = cls._inspect(dbfile)
        db = _connect(dbfile)
        if version < SCHEMA_VERSION:
            migrate(db, version)
        for sub in FOLDERS:
            (path / sub).mkdir(exist_ok=True)
        return cls(path, db)

    @staticmethod
    def _inspect(dbfile: Path) -> int:
        """Read the schema version without writing anything; refuse what is not ours."""
        # No plain open() of the file here: closing it would drop the SQLite locks this
        # process holds on it through an open connection (POSIX locks are per process),
        # and another process closing the project would then delete the WAL under it.
        not_sqlite = f"{dbfile}: not an SQLite database (the file is corrupt or of another kind)"
        if dbfile.stat().st_size < 100:
            raise ProjectError(not_sqlite)
        # With no WAL beside it the file holds everything: read it as immutable so
        # that a refusal leaves no -wal/-shm files behind.
        wal = dbfile.with_name(dbfile.name + "-wal")
        uri = f"file:{dbfile}?mode=ro" + ("" if wal.exists() else "&immutable=1")
        try:
            conn = sqlite3.connect(uri, uri=True)
            try:
                conn.execute("PRAGMA quick_check").fetchall()
                rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            finally:
                conn.close()
        except sqlite3.DatabaseError as e:
            msg = str(e)
            if "file is not a database" in msg:
                raise ProjectError(not_sqlite) from None
            if "no such table" in msg:
                raise ProjectError(f"{dbfile}: an SQLite database, but not a Keypose project (no meta table)") from None
            raise ProjectError(f"{dbfile}: the database is corrupt ({msg})") from None
        if rows.get("app") != APP_ID:
            raise ProjectError(f"{dbfile}: an SQLite database of another application (app={rows.get('app')!r})")
        try:
            version = int(rows.get("schema_version", "0"))
        except ValueError:
            raise ProjectError(f"{dbfile}: meta.schema_version is not a number") from None
        if version > SCHEMA_VERSION:
            raise ProjectError(f"{dbfile}: written by a newer Keypose Studio (schema {version}, "
                               f"this studio reads up to {SCHEMA_VERSION}); update the studio to open it")
        return version

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> "Project":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside land together or not at all."""
        conn = self.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            self._after_commit.clear()
            raise
        conn.execute("COMMIT")
        pending, self._after_commit = self._after_commit, []
        for fn in pending:
            fn()
        self._emit()

    def after_commit(self, fn) -> None:
        """Run `fn` once what is being written has committed (now, outside a transaction)."""
        if self.db.conn.in_transaction:
            self._after_commit.append(fn)
        else:
            fn()

    # ---- change events (views listen to these) --------------------------
    def subscribe(self, callback) -> None:
        self._listeners.append(callback)

    def _emit(self) -> None:
        for cb in list(self._listeners):
            cb()

    # ---- meta -------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: Any) -> None:
        with self.transaction():
            self.db["meta"].upsert({"key": key, "value": str(value)}, pk="key")

    @property
    def name(self) -> str:
        return self.meta("name") or self.path.name

    @property
    def fps(self) -> int:
        return int(self.meta("fps", "24"))

    @property
    def frame_start(self) -> int:
        return int(self.meta("frame_start", "1"))

    # ---- documents (plan, scene) ------------------------------------------
    def get_doc(self, key: str) -> Any:
        row = self.db.execute("SELECT body FROM docs WHERE key = ?", [key]).fetchone()
        return json.loads(row[0]) if row else None

    def put_doc(self, key: str, value: Any, actor: str = "person", action: str | None = None) -> None:
        with self.transaction():
            self.db["docs"].upsert({"key": key, "body": json.dumps(value, sort_keys=True),
                                    "updated": now()}, pk="key")
            self.audit(actor, action or f"set {key}", key, {})

    @property
    def project_id(self) -> str:
        """The id signatures bind, so a review cannot be copied into another project."""
        return self.meta("project_id") or ""

    # ---- audit log (append-only, hash-chained) -----------------------------
    def audit(self, actor: str, action: str, target: str = "", detail: dict | None = None) -> int:
        """Append one row to the chained audit log; returns its id."""
        with self.transaction():
            rid, _ = chain.append(self.db.conn, now(), actor, action, target,
                                  json.dumps(detail or {}, sort_keys=True))
        return rid

    def audit_log(self, limit: int = 1000) -> list[dict]:
        return [dict(r) for r in self.db.query("SELECT * FROM audit ORDER BY id DESC LIMIT ?", [limit])]

    # ---- assets (content-addressed) ---------------------------------------
    def put_asset(self, data: bytes, ext: str) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.asset_path(digest, ext)
        if not path.exists():
            write_atomic(path, data)
        return f"{digest}.{ext}"

    def asset_path(self, digest: str, ext: str | None = None) -> Path:
        name = digest if ext is None else f"{digest}.{ext}"
        return self.path / "assets" / name[:2] / name

    def read_asset(self, name: str) -> bytes:
        path = self.asset_path(name)
        if not path.exists():
            raise ProjectError(f"{self.path}: asset {name} is missing from assets/")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != name.split(".")[0]:
            raise ProjectError(f"{path}: asset content does not match its hash (the file was altered)")
        return data
