"""Delivering a finished job's outputs: renders into the project, exports
where the user asked, and each state's still recorded on the state.

Every copy lands atomically (temp file beside the destination, fsync,
rename), so a failed delivery leaves the old file or none, never half.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.storyboard import get_state, put_state


class DeliveryError(OSError):
    """An output that could not be delivered; the message names the destination."""


def destination(project: Project, dest: str) -> Path:
    p = Path(dest)
    return p if p.is_absolute() else project.path / p


def copy_atomic(src: Path, dest: Path) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    except OSError as e:
        raise DeliveryError(f"{dest}: cannot write into {dest.parent} ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as f:
            shutil.copyfileobj(f, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
    except OSError as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise DeliveryError(f"{dest}: cannot write it ({e.strerror or e})") from None


def check_destination(path: Path) -> None:
    """Refuse early a destination the studio cannot write (before any rendering)."""
    folder = Path(path).parent
    probe = folder
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise DeliveryError(f"{path}: cannot write there ({probe} is a file, not a folder)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise DeliveryError(f"{path}: cannot write there ({probe} is not writable)")
    if Path(path).is_dir():
        raise DeliveryError(f"{path}: is a folder; give a file name")


def current_hash(project: Project, state_id: str) -> str | None:
    row = project.db.execute("SELECT content_hash FROM states WHERE id = ?", [state_id]).fetchone()
    return row[0] if row else None


def deliver(project: Project, job_folder: Path, spec: dict) -> dict[str, str]:
    """Copy each output to its destination; record stills on their states. Return {output: destination}."""
    done = {}
    for rel, dest in spec.get("deliver", {}).items():
        target = destination(project, dest)
        copy_atomic(job_folder / rel, target)
        done[rel] = str(target)
    stills = spec.get("record_stills", {})
    if stills:
        scene = load_scene(project)
        hashes = spec.get("state_hashes", {})
        for state_id, rel in stills.items():
            state = get_state(project, state_id)
            if state is None or current_hash(project, state_id) != hashes.get(state_id):
                continue            # deleted or edited while rendering: this still shows an old pose
            state.still = project.put_asset((job_folder / rel).read_bytes(), "png")
            put_state(project, scene, state, actor="studio", action="render still")
    return done
