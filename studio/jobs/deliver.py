"""Delivering a finished job's outputs: renders into the project, exports
where the user asked, and each state's still recorded on the state.

Every copy lands atomically (temp file beside the destination, fsync,
rename), so a failed delivery leaves the old file or none, never half. A
delivered file gets the mode the user's umask gives (0644 usually), so
colleagues can read it; a full disk says how much the copy needs, and where.

A spec is stored data, so it is not trusted to say where files go: every
output it names must lie in its job folder, every relative destination in the
project, and a destination outside the project is delivered only if the user
named it in this process (`name_destination`, called by `studio export` and
the Export dialog). So `jobs resume` of an export renders but refuses to write
outside the project; export again to deliver it there.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from studio.scene.io import load_scene
from studio.store.beneath import check_components
from studio.store.names import NameProblem, check_id, inside
from studio.store.project import Project, file_mode
from studio.store.space import disk_full, is_disk_full
from studio.timeline.storyboard import get_state, put_state


class DeliveryError(OSError):
    """An output that could not be delivered; the message names the destination."""


_NAMED: set[str] = set()


def name_destination(path: str | Path) -> str:
    """Record a delivery path the user gave (command line or dialog); returns it resolved."""
    p = str(Path(path).resolve())
    _NAMED.add(p)
    return p


def destination(project: Project, dest: str, field: str = "spec.deliver") -> Path:
    """Where an output goes: inside the project, or outside only where the user named it."""
    p = Path(dest)
    if p.is_absolute():
        if not p.resolve().is_relative_to(project.path.resolve()) and str(p.resolve()) not in _NAMED:
            raise NameProblem(f"{field}: {dest!r} is outside the project and was not named by you in this "
                              f"command; export again naming it")
        return p
    return inside(project.path, p, field)


def check_spec_paths(project: Project, folder: Path, spec: dict) -> None:
    """Refuse (NameProblem naming the field) a spec whose outputs leave the job folder or whose
    deliveries leave the project unasked."""
    if "project" in spec and Path(str(spec["project"])).resolve() != project.path.resolve():
        raise NameProblem(f"spec.project: {spec['project']!r} is not this project ({project.path})")
    for rel in spec.get("expected", []):
        inside(folder, rel, "spec.expected")
    for key in ("tracks", "video", "blend"):
        if spec.get(key):
            inside(folder, spec[key], f"spec.{key}")
    for rel in spec.get("meshes", {}).values():
        inside(folder, rel, "spec.meshes")
    for rel, dest in spec.get("deliver", {}).items():
        inside(folder, rel, "spec.deliver")
        destination(project, dest, f"spec.deliver[{rel!r}]")
    for state_id, rel in spec.get("record_stills", {}).items():
        check_id(state_id, "spec.record_stills")
        inside(folder, rel, f"spec.record_stills[{state_id!r}]")


def copy_atomic(src: Path, dest: Path) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    except OSError as e:
        raise DeliveryError(f"{dest}: cannot write into {dest.parent} ({e.strerror or e})") from None
    try:
        os.fchmod(fd, file_mode())     # mkstemp makes 0600; a deliverable is for others to read
        with os.fdopen(fd, "wb") as out, open(src, "rb") as f:
            shutil.copyfileobj(f, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
    except OSError as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if is_disk_full(e):
            raise DeliveryError(f"{disk_full(dest.parent, Path(src).stat().st_size)} to deliver {dest}") from None
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
    try:
        check_spec_paths(project, job_folder, spec)
    except NameProblem as e:
        raise DeliveryError(f"{job_folder / 'spec.json'}: {e}") from None
    done = {}
    for rel, dest in spec.get("deliver", {}).items():
        target = check_components(project.path, destination(project, dest))   # renders/, exports/: no link
        copy_atomic(inside(job_folder, rel, "spec.deliver"), target)
        done[rel] = str(target)
    stills = spec.get("record_stills", {})
    if stills:
        scene = load_scene(project)
        hashes = spec.get("state_hashes", {})
        for state_id, rel in stills.items():
            state = get_state(project, state_id)
            if state is None or current_hash(project, state_id) != hashes.get(state_id):
                continue            # deleted or edited while rendering: this still shows an old pose
            state.still = project.put_asset(inside(job_folder, rel, "spec.record_stills").read_bytes(), "png")
            put_state(project, scene, state, actor="studio", action="render still")
    return done
