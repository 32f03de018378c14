"""The audit log as a hash chain: each row carries the hash of the row before it
and its own hash over that and its change (id, when, who, what, target, payload),
so a row changed, inserted or deleted with sqlite3 breaks the chain at that point.

Appending is one function (`append`), called by `Project.audit` inside a
transaction, so two writers never chain onto the same row.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

GENESIS = "0" * 64
COLUMNS = "id, at, actor, action, target, detail, prev_hash, hash"


@dataclass
class ChainProblem:
    """The first row where the chain does not hold."""

    row: int
    at: str
    what: str

    def __str__(self) -> str:
        return f"audit row {self.row} ({self.at or 'no time'}): {self.what}"


def row_hash(prev_hash: str, row_id: int, at: str, actor: str, action: str, target: str, detail: str) -> str:
    """The hash of a row: the previous row's hash and this row's change, as stored."""
    body = json.dumps([prev_hash, int(row_id), at, actor, action, target or "", detail or ""],
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()


def head(conn) -> tuple[int, str]:
    """(id, hash) of the last row, or (0, GENESIS) for an empty log."""
    row = conn.execute("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").fetchone()
    return (int(row[0]), row[1] or "") if row else (0, GENESIS)


def append(conn, at: str, actor: str, action: str, target: str, detail: str) -> tuple[int, str]:
    """Chain one row onto the log; the caller holds the write transaction. Returns (id, hash)."""
    last, prev = head(conn)
    rid = last + 1
    h = row_hash(prev, rid, at, actor, action, target, detail)
    conn.execute(f"INSERT INTO audit ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 [rid, at, actor, action, target, detail, prev, h])
    return rid, h


def rows(conn):
    """Every row in order, as dicts."""
    cur = conn.execute(f"SELECT {COLUMNS} FROM audit ORDER BY id")
    names = [d[0] for d in cur.description]
    for r in cur:
        yield dict(zip(names, r))


def check_row(row: dict, prev: str, prev_id: int) -> str | None:
    """What is wrong with one row given the hash of the row before it, or None."""
    if not row["hash"] or not row["prev_hash"]:
        return "the row has no hash (written outside the studio)"
    if row["prev_hash"] != prev:
        where = f"row {prev_id}" if prev_id else "the start of the log"
        return (f"its previous-row hash does not match {where} "
                f"(a row was deleted, inserted or rewritten before it)")
    if row_hash(prev, row["id"], row["at"], row["actor"], row["action"], row["target"], row["detail"]) != row["hash"]:
        return "its content does not match its hash (the row was changed after it was written)"
    return None


def verify_chain(conn) -> ChainProblem | None:
    """The first broken row of the chain, or None when every row holds."""
    prev, prev_id = GENESIS, 0
    for row in rows(conn):
        what = check_row(row, prev, prev_id)
        if what:
            return ChainProblem(row["id"], row["at"], what)
        prev, prev_id = row["hash"], row["id"]
    return None


def rechain(conn) -> int:
    """Hash every row in order (the migration that starts the chain); returns the count."""
    prev, n = GENESIS, 0
    for row in list(rows(conn)):
        h = row_hash(prev, row["id"], row["at"], row["actor"], row["action"], row["target"], row["detail"])
        conn.execute("UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", [prev, h, row["id"]])
        prev, n = h, n + 1
    return n
