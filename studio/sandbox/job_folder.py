"""Reading a job folder the agent's code has had its hands on.

The code may leave links, fifos, names that are not text, folders nested past
any path length: every walk here goes by folder handles (`dir_fd`), never
follows a link, stops at MAX_DEPTH levels, and shows names escaped so that
no name can pass for a line of the studio's own output.

While the code runs its job folder is a size-limited tmpfs inside the
sandbox; `copy_out` brings its regular files and folders into the job folder
on disk through a handle on that tmpfs once every process of the run is gone
(links, fifos and devices are left out and counted).
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

MAX_DEPTH = 64


def walk(job_dir: Path | int) -> Iterator[tuple[int, str, str, os.stat_result]]:
    """(folder handle, name, path relative to the job folder, lstat) of every entry, depth first.
    `job_dir` is a path or a folder handle (which stays the caller's)."""
    try:
        top = os.dup(job_dir) if isinstance(job_dir, int) else \
            os.open(job_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    stack: list[tuple[int, str, list[str]]] = []

    def enter(fd: int, rel: str) -> None:
        try:
            names = sorted(os.listdir(fd), reverse=True)
        except OSError:
            names = []
        stack.append((fd, rel, names))
    enter(top, "")
    try:
        while stack:
            fd, rel, names = stack[-1]
            if not names:
                os.close(fd)
                stack.pop()
                continue
            name = names.pop()
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            path = f"{rel}/{name}" if rel else name
            yield fd, name, path, st
            if stat.S_ISDIR(st.st_mode) and len(stack) < MAX_DEPTH:
                try:
                    enter(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd), path)
                except OSError:
                    pass
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def usage(job_dir: Path, max_entries: int) -> tuple[int, int, bool]:
    """(bytes, entries, too deep) under the job folder; stops counting past `max_entries`."""
    total = entries = 0
    deep = False
    for _, _, path, st in walk(job_dir):
        entries += 1
        total += max(st.st_size, st.st_blocks * 512)
        deep = deep or path.count("/") >= MAX_DEPTH - 1
        if entries > max_entries:
            break
    return total, entries, deep


def shown(name: str) -> str:
    """A file name as the studio prints it: anything unprintable or not text escaped."""
    raw = os.fsencode(name)
    text = raw.decode("utf-8", "backslashreplace")
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def regular_files(job_dir: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """The regular files the code wrote (no links, fifos or devices), as shown names."""
    return sorted(shown(path) for _, _, path, st in walk(job_dir)
                  if stat.S_ISREG(st.st_mode) and path not in skip)


@dataclass
class Copied:
    """What `copy_out` brought back, and what it left out."""

    files: list[str] = field(default_factory=list)        # shown names, relative to the job folder
    left_out: dict[str, int] = field(default_factory=dict)  # kind ('links', 'fifos', ...) -> count
    bytes: int = 0
    largest: int = 0


KINDS = {stat.S_IFLNK: "links", stat.S_IFIFO: "fifos", stat.S_IFSOCK: "sockets", stat.S_IFCHR: "devices",
         stat.S_IFBLK: "devices"}


def measure(src: int) -> tuple[int, int, bool, int]:
    """(entries, bytes of regular files, nested too deep, largest file) under a folder handle."""
    entries = total = largest = 0
    deep = False
    for _, _, path, st in walk(src):
        entries += 1
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
            largest = max(largest, st.st_size)
        deep = deep or path.count("/") >= MAX_DEPTH - 1
    return entries, total, deep, largest


def copy_out(src: int, dest: Path, skip: tuple[str, ...] = ()) -> Copied:
    """Copy every regular file and folder under the handle `src` into `dest` (an existing folder,
    opened without following a link), links and special files left out. Names in `skip` at the
    top are not copied (the studio's own files)."""
    done = Copied()
    top = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    made: dict[str, int] = {"": top}
    try:
        for fd, name, path, st in walk(src):
            parent = path.rpartition("/")[0]
            into = made.get(parent)
            if into is None or (not parent and name in skip):
                continue
            kind = stat.S_IFMT(st.st_mode)
            if kind == stat.S_IFDIR:
                if path.count("/") >= MAX_DEPTH - 1:
                    continue
                os.mkdir(name, 0o755, dir_fd=into)
                made[path] = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=into)
            elif kind == stat.S_IFREG:
                _copy_file(fd, name, into, st.st_size)
                done.files.append(shown(path))
                done.bytes += st.st_size
                done.largest = max(done.largest, st.st_size)
            else:
                what = KINDS.get(kind, "other entries")
                done.left_out[what] = done.left_out.get(what, 0) + 1
    finally:
        for handle in made.values():
            os.close(handle)
    done.files.sort()
    return done


def _copy_file(src_dir: int, name: str, dst_dir: int, size: int) -> None:
    try:
        src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_dir)
    except PermissionError:           # the code took its own read bit away: the file is ours to read
        os.chmod(name, 0o600, dir_fd=src_dir)
        src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_dir)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            return
        dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dst_dir)
        try:
            left = size
            while left > 0:
                n = os.sendfile(dst, src, None, min(left, 1 << 24))
                if n == 0:
                    break
                left -= n
        finally:
            os.close(dst)
    finally:
        os.close(src)
