"""How the worker talks and writes: JSON progress lines on stdout, atomic files.

The studio reads one JSON object per line on stdout (stage, frame, of,
message, and output + sha256 for each finished file); any other line is
Blender's own chatter and only goes to the job's log. A file appears under
its final name only when it is complete, so a killed worker leaves `.part`
files, never a half-written output.
"""
from __future__ import annotations

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
    """Move a finished temporary file to its final name (fsync first); return its sha256."""
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    return sha256_file(final)


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
