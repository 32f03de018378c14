"""How much disk a job needs: its missing outputs in the job folder and its
deliveries where they go. The figures are estimates from the spec (pixels,
frames, meshes), or from frames already rendered when a job resumes; they
decide whether a render starts and what a full disk's message asks for."""
from __future__ import annotations

import os
from pathlib import Path

from studio.store.space import disk_full, existing_folder, free_bytes, require_space

MARGIN = 8 << 20             # the database, the logs and the worker's temporary files
PNG_RATIO = {"BLENDER_WORKBENCH": 0.5, "CYCLES": 1.0}     # of raw RGB; flat shading compresses well
VIDEO_BYTES_PER_PIXEL = {"HIGH": 0.05, "MEDIUM": 0.02}    # per frame, H.264


def _pixels(spec: dict) -> int:
    w, h = spec.get("resolution") or (1920, 1080)
    return int(w) * int(h)


def frame_bytes(spec: dict, folder: Path) -> float:
    """One frame's PNG: the largest already rendered, else a share of raw RGB by engine."""
    sizes = [p.stat().st_size for p in (Path(folder) / "frames").glob("[0-9]*.png")] \
        if (Path(folder) / "frames").is_dir() else []
    if sizes:
        return 1.1 * max(sizes)
    return 3 * _pixels(spec) * PNG_RATIO.get(spec.get("engine", ""), 1.0)


def output_bytes(spec: dict, folder: Path, rel: str) -> float:
    """The estimated size of one output of the spec."""
    if rel.startswith("frames/") or rel.endswith(".png"):
        return frame_bytes(spec, folder)
    if rel.endswith(".mp4"):
        n = int(spec.get("frame_end", 0)) - int(spec.get("frame_start", 0)) + 1
        return (1 << 20) + n * _pixels(spec) * VIDEO_BYTES_PER_PIXEL.get(spec.get("quality", ""), 0.05)
    if rel.endswith(".blend"):
        inputs = [Path(folder) / r for r in [*spec.get("meshes", {}).values(), spec.get("tracks") or ""] if r]
        return (4 << 20) + 3 * sum(p.stat().st_size for p in inputs if p.is_file())
    return 1 << 20


def needed(spec: dict, folder: Path, missing: list[str]) -> float:
    """Bytes the job folder needs for the outputs still missing."""
    return MARGIN + sum(output_bytes(spec, folder, rel) for rel in missing)


def check_space(spec: dict, folder: Path, missing: list[str], destination) -> None:
    """Refuse (DiskFull) before starting when the missing outputs or the deliveries will not fit.
    `destination(dest)` maps a delivery entry to its path."""
    want: dict[int, list] = {}
    folder = Path(folder)
    want.setdefault(os.stat(folder).st_dev, [folder, 0.0])[1] += needed(spec, folder, missing)
    for rel, dest in spec.get("deliver", {}).items():
        try:
            where = existing_folder(Path(destination(dest)).parent)
        except ValueError:          # a destination delivery will refuse: it needs no room
            continue
        entry = want.setdefault(os.stat(where).st_dev, [where, 0.0])
        entry[1] += output_bytes(spec, folder, rel)
    for where, size in want.values():
        require_space(where, size, f"job {folder.name}")


def disk_full_message(spec: dict, folder: Path, missing: list[str], where: Path | None = None) -> str:
    """'disk full: N MB needed in FOLDER (M MB free)' for what the job still has to write."""
    return str(disk_full(where or folder, needed(spec, folder, missing)))


def is_short_of_space(spec: dict, folder: Path, missing: list[str]) -> bool:
    return free_bytes(folder) < needed(spec, folder, missing) - MARGIN
