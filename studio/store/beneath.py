"""Paths inside a project, never followed through a symbolic link.

A project's structure (`studio.db` and its -wal/-shm/-journal, `assets/`,
`jobs/`, `renders/`, `exports/`, `logs/`, and everything below them) is the
studio's own: a link there would lead a write, or a read, to a file outside
the project or into another project. Two guards:

* `check_structure`, run when a project is opened, refuses a project whose
  structure holds a link anywhere (one line naming the first link and where
  it points; exit 2), before anything is read or written;
* `open_folder` and `write_atomic_beneath` open each path below the project
  folder with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel
  has it (Linux 5.6), otherwise one component at a time with O_NOFOLLOW, so a
  link made while the studio runs is refused too.

The project folder itself may be reached through a link the person made
(`~/films -> /data/films`); only what is inside it is the studio's.
"""
from __future__ import annotations

import ctypes
import errno
import os
import stat
import uuid
from pathlib import Path

from studio.store.errors import ProjectError

STRUCTURE = ("studio.db", "studio.db-wal", "studio.db-shm", "studio.db-journal",
             "assets", "jobs", "renders", "exports", "logs")
SYS_OPENAT2 = 437                    # the same number on every architecture
RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x04, 0x08


class LinkInProject(ProjectError):
    """A symbolic link in a project's structure; the message names it."""


def _said(path: Path) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    from studio.store.shown import shown
    return (f"{shown(str(path))}: a symbolic link (to {shown(target)}) inside the project's structure; the studio "
            f"never follows a project's files through a link, so it did not open or change the project. Replace "
            f"the link with the file or folder itself (or remove it), then try again")


def check_structure(root: Path) -> None:
    """LinkInProject naming the first link in `root`'s structure, or None when there is none."""
    root = Path(root)
    for name in STRUCTURE:
        path = root / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            raise LinkInProject(_said(path))
        if stat.S_ISDIR(st.st_mode):
            _walk_for_links(path)


MAX_DEPTH = 128


def _walk_for_links(top: Path) -> None:
    """Depth first by folder handles (a path may be longer than the system takes), links not followed."""
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (PermissionError, FileNotFoundError):
        return
    stack = [(fd, top, None)]
    try:
        while stack:
            fd, path, entries = stack[-1]
            if entries is None:
                try:
                    entries = [(e.name, e.is_symlink(), e.is_dir(follow_symlinks=False)) for e in os.scandir(fd)]
                except OSError:
                    entries = []
                stack[-1] = (fd, path, entries)
            if not entries:
                os.close(fd)
                stack.pop()
                continue
            name, link, folder = entries.pop()
            if link:
                raise LinkInProject(_said(path / name))
            if folder and len(stack) < MAX_DEPTH:
                try:
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                except OSError:
                    continue
                stack.append((sub, path / name, None))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_openat2_works: bool | None = None


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """openat2 beneath `dir_fd` with no link anywhere; None where the kernel lacks it."""
    global _openat2_works
    if _openat2_works is False:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
    fd = libc.syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(os.fsencode(rel)),
                      ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        _openat2_works = True
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and _openat2_works is None:   # EPERM: a filter refused the call
        _openat2_works = False
        return None
    raise OSError(err, os.strerror(err), rel)


def _parts(rel: str | Path) -> list[str]:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if Path(rel).is_absolute() or ".." in parts:
        raise ProjectError(f"{rel}: expected a path inside the project")
    return parts


def _open_at(root: Path, dir_fd: int, parts: list[str], flags: int, mode: int = 0o644) -> int:
    """Open `parts` below `dir_fd` refusing any link on the way (LinkInProject names it)."""
    rel = "/".join(parts) or "."
    try:
        fd = _openat2(dir_fd, rel, flags, mode)
        if fd is not None:
            return fd
        fd = os.dup(dir_fd)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            want = flags if last else os.O_RDONLY | os.O_DIRECTORY
            try:
                nxt = os.open(part, want | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
            finally:
                os.close(fd)
            fd = nxt
        return fd
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV):
            _raise_if_link(root, parts)
        raise


def _raise_if_link(root: Path, parts: list[str]) -> None:
    path = Path(root)
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise LinkInProject(_said(path)) from None


def open_folder(root: Path, rel: str | Path, create: bool = False) -> int:
    """A handle on the folder `root/rel` (made, folder by folder, when `create`); no link followed."""
    root = Path(root)
    base = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        parts = _parts(rel)
        if create:
            for i in range(len(parts)):
                parent = _open_at(root, base, parts[:i], os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.mkdir(parts[i], 0o777, dir_fd=parent)
                except FileExistsError:
                    pass
                finally:
                    os.close(parent)
        return _open_at(root, base, parts, os.O_RDONLY | os.O_DIRECTORY)
    finally:
        os.close(base)


def ensure_folder(root: Path, rel: str | Path) -> Path:
    """`root/rel` made if missing, each folder on the way checked not to be a link; returns the path."""
    os.close(open_folder(root, rel, create=True))
    return Path(root) / rel


def write_atomic_beneath(root: Path, rel: str | Path, data: bytes, mode: int) -> None:
    """Write `root/rel` atomically (temp, fsync, rename in the same folder), no link followed; the
    rename replaces whatever stood at the name (a link made there is replaced, never written through)."""
    parts = _parts(rel)
    Path(root).mkdir(parents=True, exist_ok=True)
    folder = open_folder(root, Path(*parts[:-1]) if parts[:-1] else ".", create=True)
    try:
        tmp = f".{parts[-1]}.{uuid.uuid4().hex[:12]}.part"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
    finally:
        os.close(folder)


def read_beneath(root: Path, rel: str | Path) -> bytes:
    """The bytes of the regular file `root/rel`, no link followed."""
    parts = _parts(rel)
    base = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = _open_at(Path(root), base, parts, os.O_RDONLY | os.O_NONBLOCK)
    finally:
        os.close(base)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ProjectError(f"{Path(root, *parts)}: not a regular file")
        return f.read()


def append_beneath(root: Path, rel: str | Path, text: str) -> None:
    """Append `text` to the file `root/rel` (made, with its folders, if missing); no link followed."""
    parts = _parts(rel)
    folder = open_folder(root, Path(*parts[:-1]) if parts[:-1] else ".", create=True)
    try:
        fd = os.open(parts[-1], os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=folder)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise LinkInProject(_said(Path(root, *parts))) from None
        raise
    finally:
        os.close(folder)
    with os.fdopen(fd, "a") as f:
        f.write(text)


def check_components(root: Path, path: Path) -> Path:
    """`path` if it lies outside `root`, or inside it with no link on the way (LinkInProject names
    the first); for writers that take a path rather than a handle."""
    root, path = Path(os.path.abspath(root)), Path(os.path.abspath(path))
    if not path.is_relative_to(root):
        return path
    _raise_if_link(root, list(path.relative_to(root).parts))
    return path
