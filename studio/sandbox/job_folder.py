"""Reading a job folder the agent's code has had its hands on.

The code may leave links, fifos, names that are not text, folders nested past
any path length: every walk here goes by folder handles (`dir_fd`), never
follows a link, stops at MAX_DEPTH levels, and shows names escaped so that
no name can pass for a line of the studio's own output.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator

MAX_DEPTH = 64


def walk(job_dir: Path) -> Iterator[tuple[int, str, str, os.stat_result]]:
    """(folder handle, name, path relative to the job folder, lstat) of every entry, depth first."""
    try:
        top = os.open(job_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
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


def give_back(job_dir: Path, uid: int, gid: int) -> None:
    """Every entry of the job folder owned by uid:gid again, links not followed."""
    for fd, name, _, _ in walk(job_dir):
        try:
            os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
        except OSError:
            pass
    os.chown(job_dir, uid, gid, follow_symlinks=False)
