"""Free disk space: how much there is, how much a write needs, and the one
message a full disk gives ("disk full: N MB needed in FOLDER")."""
from __future__ import annotations

import errno
import math
import os
import sqlite3
from pathlib import Path

from studio.store.errors import DiskFull

MB = 1 << 20


def existing_folder(path: Path) -> Path:
    """`path` or its nearest ancestor that exists (where a new file would land)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p if p.is_dir() else p.parent


def free_bytes(path: Path) -> int:
    """Bytes an ordinary user may still write on the file system holding `path`."""
    st = os.statvfs(existing_folder(path))
    return st.f_bavail * st.f_frsize


def megabytes(n: float) -> int:
    return max(0, math.ceil(n / MB))


def disk_full(folder: Path, needed: float) -> DiskFull:
    """The error for `needed` bytes that do not fit in `folder`."""
    folder = existing_folder(folder)
    return DiskFull(f"disk full: {megabytes(needed)} MB needed in {folder} "
                    f"({megabytes(free_bytes(folder))} MB free)")


def require_space(folder: Path, needed: float, what: str = "") -> None:
    """Refuse before starting when `needed` bytes will not fit in `folder`."""
    if free_bytes(folder) < needed:
        err = disk_full(folder, needed)
        raise DiskFull(f"{err}{' for ' + what if what else ''}; free some space and try again")


def is_disk_full(exc: BaseException) -> bool:
    """Is this the file system (or SQLite on it) saying there is no room left?"""
    if isinstance(exc, DiskFull):
        return True
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc)
