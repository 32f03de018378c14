"""Who holds a project's write lock.

SQLite in WAL mode takes its write lock as a POSIX lock on byte 120 of the
`-shm` file (the rollback journal locks the database file itself). Linux
lists every such lock with its owner's pid in /proc/locks, so a studio kept
waiting can name the process it waits for. Elsewhere the holder is unknown.
"""
from __future__ import annotations

import os
from pathlib import Path

WAL_WRITE_BYTE = 120


def write_lock_holder(dbfile: Path) -> int | None:
    """The pid of another process holding a write lock on `dbfile`, or None if none is seen."""
    targets = {}
    for path, byte in ((Path(f"{dbfile}-shm"), WAL_WRITE_BYTE), (Path(dbfile), None)):
        try:
            st = os.stat(path)
        except OSError:
            continue
        targets[(os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = byte
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    me = os.getpid()
    for line in lines:
        parts = line.split()
        if "->" in parts:             # a waiter, not a holder
            continue
        try:
            kind, pid, dev, start = parts[3], int(parts[4]), parts[5], parts[6]
            major, minor, ino = dev.split(":")
            key = (int(major, 16), int(minor, 16), int(ino))
        except (IndexError, ValueError):
            continue
        if kind != "WRITE" or pid == me or key not in targets:
            continue
        byte = targets[key]
        if byte is None or start == str(byte):
            return pid
    return None


def describe(pid: int | None) -> str:
    """'pid 123, python3 holder.py' — enough for a person to find the process."""
    if pid is None:
        return "pid unknown"
    try:
        cmd = " ".join(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split())
    except OSError:
        cmd = ""
    return f"pid {pid}, {cmd[:80]}" if cmd else f"pid {pid}"
