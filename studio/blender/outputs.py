"""How the worker talks and writes: JSON progress lines on stdout, atomic files.

The studio reads one JSON object per line on stdout (stage, frame, of,
message, and output + sha256 for each finished file); any other line is
Blender's own chatter and only goes to the job's log. A file appears under
its final name only when it is complete, so a killed worker leaves `.part`
files, never a half-written output. Blender reports a file "Saved" even when
the disk was full and it wrote nothing, so every file is checked (a PNG ends
with IEND, an MP4 holds its moov box, a .blend ends with ENDB) before it is
published; a short file on a full disk is `DiskFull`.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
import tempfile


def emit(stage: str, **fields) -> None:
    """One progress line for the studio."""
    sys.stdout.write(json.dumps({"stage": stage, **fields}, sort_keys=True) + "\n")
    sys.stdout.flush()


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def part_path(final: str) -> str:
    """A temporary name beside `final` that no reader mistakes for it."""
    folder, name = os.path.split(final)
    stem, ext = os.path.splitext(name)
    return os.path.join(folder, f".{stem}.part{ext}")


def publish(tmp: str, final: str) -> str:
    """Move a finished temporary file to its final name (fsync first); return its sha256.
    A file that is missing or incomplete is removed and never published."""
    problem = incomplete(tmp, final)
    if problem:
        size_hint = os.path.getsize(tmp) if os.path.exists(tmp) else 0
        try:
            os.unlink(tmp)
        except OSError:
            pass
        folder = os.path.dirname(os.path.abspath(final))
        if free_bytes(folder) < max(LOW_SPACE, 2 * size_hint):
            raise DiskFull(f"disk full while writing {final} ({free_bytes(folder) >> 20} MB free in {folder})",
                           folder)
        raise RuntimeError(f"{final}: Blender wrote an incomplete file ({problem})")
    try:
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFull(f"disk full while writing {final}", os.path.dirname(os.path.abspath(final))) from None
        raise
    return sha256_file(final)


LOW_SPACE = 4 << 20      # a failed write with less than this left is the disk filling up


class DiskFull(RuntimeError):
    """The disk holding `folder` filled up while an output was written."""

    def __init__(self, message: str, folder: str):
        super().__init__(message)
        self.folder = folder


def free_bytes(folder: str) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def incomplete(path: str, final: str) -> str:
    """Why the file at `path` (to be published as `final`) is not a whole file, or ''."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return "no file was written"
    if size == 0:
        return "the file is empty"
    ext = os.path.splitext(final)[1].lower()
    with open(path, "rb") as f:
        head = f.read(16)
        f.seek(max(0, size - 64))
        tail = f.read()
    if ext == ".png" and not (head.startswith(b"\x89PNG") and tail.endswith(b"IEND\xaeB`\x82")):
        return "the PNG has no end"
    if ext == ".blend" and b"ENDB" not in tail:
        return "the .blend has no end block"
    if ext in (".mp4", ".mov") and not _has_moov(path, size):
        return "the video has no index (moov)"
    return ""


def _has_moov(path: str, size: int) -> bool:
    """Do the MP4's top-level boxes tile the file and include 'moov' (written last by FFmpeg)?"""
    seen, pos = set(), 0
    with open(path, "rb") as f:
        while pos < size:
            f.seek(pos)
            head = f.read(16)
            if len(head) < 8:
                return False
            n, kind = int.from_bytes(head[:4], "big"), head[4:8]
            if n == 1 and len(head) == 16:
                n = int.from_bytes(head[8:16], "big")
            elif n == 0:
                n = size - pos
            if n < 8:
                return False
            seen.add(kind)
            pos += n
    return pos == size and b"moov" in seen


def fail_now(message: str, **fields) -> None:
    """Report a failure and end the worker at once: Blender swallows exceptions raised
    in its render handlers and would go on rendering frames onto a full disk."""
    emit("error", message=message, **fields)
    sys.stdout.flush()
    os._exit(1)


def write_json_atomic(path: str, data: dict) -> None:
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def ensure_writable(folder: str, where: str) -> None:
    """Create `folder` and prove a file can be written there, or say which folder cannot."""
    try:
        os.makedirs(folder, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise SpecError(f"{where}: cannot write into {folder} ({e.strerror or e})") from None


def inside_folder(folder: str, rel: str, field: str) -> str:
    """`folder/rel`, refused (SpecError naming the field) if it is absolute or leads out of `folder`."""
    root = os.path.realpath(folder)
    full = os.path.realpath(os.path.join(root, rel))
    if os.path.isabs(rel) or ".." in rel.replace("\\", "/").split("/") or os.path.commonpath([root, full]) != root:
        raise SpecError(f"spec {field}: {rel!r} leads outside the job folder {root}")
    return os.path.join(folder, rel)


class SpecError(ValueError):
    """A job spec the worker cannot carry out; the message names the field."""
