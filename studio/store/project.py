"""The project on disk: a folder with `studio.db` and content-addressed assets.

The database is the source of truth (SQLite in WAL mode through sqlite-utils).
Files are written atomically (temp, fsync, rename), so a killed app or job
never leaves a half-written asset where a finished one would be. Opening
checks everything first and writes nothing unless the project is sound.

A project whose folder or database cannot be written (a read-only mount, a
reviewer's copy) opens for reading: SQLite reads it with `mode=ro` (or as
immutable when no WAL is pending), nothing is created beside it, and any
write says the project is read-only. A write kept waiting by another
process's transaction says so after two seconds, naming that process, and
gives up after `lock_wait_limit()` seconds.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils

from studio.store import audit as chain
from studio.store.beneath import check_structure, ensure_folder, read_beneath, write_atomic_beneath
from studio.store.errors import DiskFull, ForeignTrigger, ProjectError, ProjectLocked, ReadOnlyProject
from studio.store.locks import describe, write_lock_holder
from studio.store.json_reading import stored
from studio.store.shown import shown
from studio.store.schema import APP_ID, SCHEMA_VERSION, foreign_triggers, migrate
from studio.store.space import disk_full, free_bytes, is_disk_full

DB_NAME = "studio.db"
FOLDERS = ("assets", "renders", "exports", "jobs")
LOCK_NOTICE_SECONDS = 2.0

__all__ = ["DiskFull", "ProjectError", "ProjectLocked", "ReadOnlyProject"]


def lock_wait_limit() -> float:
    """Seconds a write waits for another process's lock (KEYPOSE_LOCK_WAIT, default 60)."""
    try:
        return max(0.0, float(os.environ.get("KEYPOSE_LOCK_WAIT", "60")))
    except ValueError:
        return 60.0


def tell(message: str) -> None:
    """Say something to the person at the terminal while work goes on."""
    print(f"studio: {message}", file=sys.stderr, flush=True)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def umask() -> int:
    """The process's umask, read without changing it (other threads may be creating files)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a plain new file gets: 0644 with the usual umask 022."""
    return 0o666 & ~umask()


def write_atomic(path: Path, data: bytes, mode: int | None = None, beneath: Path | None = None) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never half.
    The file gets `mode`, or the mode the user's umask gives a new file. With `beneath` (a
    project folder holding `path`) no folder or file below it is followed through a link."""
    path = Path(path)
    if beneath is not None:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(beneath))
        write_atomic_beneath(Path(beneath), rel, data, file_mode() if mode is None else mode)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        os.fchmod(fd, file_mode() if mode is None else mode)   # mkstemp makes 0600
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


def _connect(dbfile: Path, readonly: bool = False) -> sqlite_utils.Database:
    """Autocommit connection; `Project.transaction` groups writes explicitly.
    Read-only: `mode=ro` when a WAL is pending (its -shm must be there), else immutable,
    so that SQLite creates no -wal or -shm file beside a database it may not write."""
    limit_ms = int(lock_wait_limit() * 1000)
    if readonly:
        uri = f"file:{dbfile}?mode=ro" + ("" if _wal_pending(dbfile) else "&immutable=1")
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute("SELECT count(*) FROM meta").fetchone()
        except sqlite3.OperationalError as e:
            why = "the disk is full" if _disk_is_full(dbfile) else "the disk is read-only"
            raise (DiskFull if why == "the disk is full" else ReadOnlyProject)(
                f"{dbfile}: cannot read it while {why} ({e}): its write-ahead log {dbfile.name}-wal holds "
                f"writes SQLite must index first; open the project once where it can be written") from None
    else:
        conn = sqlite3.connect(dbfile, timeout=limit_ms / 1000, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={limit_ms}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA trusted_schema=OFF")    # a view or trigger in the file calls no function with side effects
    return sqlite_utils.Database(conn)


def _wal_pending(dbfile: Path) -> bool:
    """Does a write-ahead log beside the database hold writes not yet in the file itself?"""
    wal = dbfile.with_name(dbfile.name + "-wal")
    return wal.exists() and wal.stat().st_size > 0


def _disk_is_full(path: Path) -> bool:
    """Too little room for SQLite's shared-memory index (it needs a few pages to open a WAL database)."""
    try:
        return free_bytes(path.parent if path.is_file() else path) < (1 << 20)
    except OSError:
        return False


def writable(path: Path) -> bool:
    """Can this process write `path` (a read-only mount answers no, even to root)?"""
    return os.access(path, os.W_OK)


def _read_meta(uri: str) -> dict:
    conn = sqlite3.connect(uri, uri=True)
    try:
        conn.execute("PRAGMA quick_check").fetchall()
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


def refuse_foreign_triggers(conn, dbfile: Path) -> None:
    """ForeignTrigger when the database holds a trigger the studio did not make."""
    found = foreign_triggers(conn)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ForeignTrigger(f"{dbfile}: holds a {first}{more} that the studio did not create; it would run on "
                             f"every write, so the studio writes nothing to this project until it is removed "
                             f"(sqlite3 {dbfile} 'DROP TRIGGER \"{shown(first.name, 80)}\"'); `studio audit verify "
                             f"{dbfile.parent}` lists every such object")


class Project:
    """An open project. Use `Project.create` or `Project.open`."""

    def __init__(self, path: Path, db: sqlite_utils.Database, readonly: bool = False, full: bool = False):
        self.path = Path(path).absolute()   # job specs and workers run from other folders
        self.db = db
        self.readonly = readonly            # opened for reading only: a read-only disk, or a full one
        self.full = full
        self.on_lock_wait = tell            # told once a write has waited LOCK_NOTICE_SECONDS
        self._listeners: list = []
        self._after_commit: list = []

    # ---- opening --------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, name: str | None = None, fps: int = 24,
               frame_start: int = 1001, units: str = "m") -> "Project":
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise ProjectError(f"{path}: is a file; a project is a new folder (give a path that does not exist yet)")
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
        if not dbfile.exists() and not dbfile.is_symlink():
            raise ProjectError(f"{path}: not a Keypose project (no {DB_NAME} inside)")
        check_structure(path)                 # no link in studio.db, assets/, jobs/, ... nor below them
        version = cls._inspect(dbfile)
        readonly = not (writable(path) and writable(dbfile))
        if readonly:
            if version < SCHEMA_VERSION:
                raise ReadOnlyProject(f"{dbfile}: written by an older Keypose Studio (schema {version}) and "
                                      f"read-only, so it cannot be brought to schema {SCHEMA_VERSION}; open a "
                                      f"writable copy")
            return cls(path, _connect(dbfile, readonly=True), readonly=True)
        try:
            db = _connect(dbfile)
        except sqlite3.OperationalError as e:
            if not _disk_is_full(dbfile):
                raise ProjectError(f"{dbfile}: cannot open the database ({e})") from None
            # A full disk: SQLite cannot make its -shm index. Read what the file holds; writes say why not.
            return cls(path, _connect(dbfile, readonly=True), readonly=True, full=True)
        if version < SCHEMA_VERSION:
            refuse_foreign_triggers(db.conn, dbfile)
            migrate(db, version)
        for sub in FOLDERS:
            ensure_folder(path, sub)
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
            try:
                rows = _read_meta(uri)
            except sqlite3.OperationalError:
                if _wal_pending(dbfile) or not _disk_is_full(dbfile):
                    raise
                rows = _read_meta(f"file:{dbfile}?mode=ro&immutable=1")   # an empty WAL: the file holds all
        except sqlite3.DatabaseError as e:
            msg = str(e)
            if "file is not a database" in msg:
                raise ProjectError(not_sqlite) from None
            if "no such table" in msg:
                raise ProjectError(f"{dbfile}: an SQLite database, but not a Keypose project (no meta table)") from None
            if _disk_is_full(dbfile):
                raise DiskFull(f"{disk_full(dbfile.parent, 1 << 20)}: SQLite cannot read {dbfile} ({msg}) without "
                               f"room for its index; free some space and try again") from None
            raise ProjectError(f"{dbfile}: the database is corrupt ({msg})") from None
        if rows.get("app") != APP_ID:
            raise ProjectError(f"{dbfile}: an SQLite database of another application (app={rows.get('app')!r})")
        try:
            version = int(rows.get("schema_version", "0"))
        except ValueError:
            raise ProjectError(f"{dbfile}: meta.schema_version is not a number") from None
        if version < 0:
            raise ProjectError(f"{dbfile}: meta.schema_version is {version}; expected 0 to {SCHEMA_VERSION}")
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
        self.require_writable()
        self._begin()
        try:
            yield
        except BaseException as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._after_commit.clear()
            if isinstance(e, sqlite3.OperationalError) and self._no_room(e):
                raise self._disk_full() from None
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._after_commit.clear()
            if self._no_room(e):
                raise self._disk_full() from None
            raise
        pending, self._after_commit = self._after_commit, []
        for fn in pending:
            fn()
        self._emit()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Every read inside sees one committed version of the project (a read transaction in
        WAL mode), never part of another connection's commit landing between two queries."""
        conn = self.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")      # nothing was written: this only ends the snapshot

    def after_commit(self, fn) -> None:
        """Run `fn` once what is being written has committed (now, outside a transaction)."""
        if self.db.conn.in_transaction:
            self._after_commit.append(fn)
        else:
            fn()

    def require_writable(self) -> None:
        """Refuse now, before any work, what could not be stored: a read-only project, a full disk,
        or a database holding a trigger the studio did not make (it would run on every write)."""
        if self.full:
            raise self._disk_full()
        if self.readonly:
            raise ReadOnlyProject(f"{self.path}: the project is read-only (its folder or {DB_NAME} cannot be "
                                  f"written); this command changes it, so it did not run")
        refuse_foreign_triggers(self.db.conn, self.path / DB_NAME)

    def _begin(self) -> None:
        """BEGIN IMMEDIATE; if another process is writing, say so after a while, give up at the limit."""
        conn, limit = self.db.conn, lock_wait_limit()
        start, told = time.monotonic(), False
        conn.execute(f"PRAGMA busy_timeout={int(min(LOCK_NOTICE_SECONDS, limit) * 1000)}")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) and "busy" not in str(e):
                        raise
                holder = describe(write_lock_holder(self.path / DB_NAME))
                waited = time.monotonic() - start
                if waited >= limit:
                    raise ProjectLocked(f"{self.path}: another process kept this project's write lock for "
                                        f"{waited:.0f} s ({holder}); gave up waiting. Close it or let it "
                                        f"finish, then try again") from None
                if not told:
                    self.on_lock_wait(f"waiting for another studio writing this project ({holder})")
                    told = True
                conn.execute(f"PRAGMA busy_timeout={int(max(0.1, min(1.0, limit - waited)) * 1000)}")
        finally:
            conn.execute(f"PRAGMA busy_timeout={int(limit * 1000)}")

    def _no_room(self, e: sqlite3.OperationalError) -> bool:
        """SQLite says "database or disk is full", or an I/O error on a disk that has no room left."""
        return is_disk_full(e) or ("disk I/O error" in str(e) and _disk_is_full(self.path))

    def _disk_full(self) -> DiskFull:
        err = disk_full(self.path, 1 << 20)
        return DiskFull(f"{err}: cannot write {self.path / DB_NAME}; free some space and try again")

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
        return stored(row[0], self.path / DB_NAME, "docs", key, "body") if row else None

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
            write_atomic(path, data, beneath=self.path)
        return f"{digest}.{ext}"

    def asset_path(self, digest: str, ext: str | None = None) -> Path:
        name = digest if ext is None else f"{digest}.{ext}"
        return self.path / "assets" / name[:2] / name

    def read_asset(self, name: str) -> bytes:
        path = self.asset_path(name)
        if not path.exists():
            raise ProjectError(f"{self.path}: asset {name} is missing from assets/")
        data = read_beneath(self.path, path.relative_to(self.path))
        if hashlib.sha256(data).hexdigest() != name.split(".")[0]:
            raise ProjectError(f"{path}: asset content does not match its hash (the file was altered)")
        return data
