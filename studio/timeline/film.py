"""Baked tracks in the project: one row per segment, the arrays in assets/.

A segment is named "A..B" after its bounding states and covers frames
frame(A)..frame(B) inclusive. The film's tracks are the segments joined in
frame order (shared boundary frames appear once).
"""
from __future__ import annotations

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import canonical_hash
from studio.scene.meshes import scene_design_id
from studio.scene.reading import read_memo
from studio.scene.pose import Tracks
from studio.store.project import Project, now


def segment_id(a: str, b: str) -> str:
    return f"{a}..{b}"


def save_segment(project: Project, segment: str, tracks: Tracks, tool: str, bounds_hash: str,
                 actor: str = "person") -> None:
    asset = project.put_asset(tracks.to_bytes(), "npz")
    with project.transaction():
        project.db["tracks"].upsert({"segment": segment, "start": tracks.frame_start,
                                     "end": tracks.frame_end, "asset": asset, "hash": tracks.hash(),
                                     "tool": tool, "bounds_hash": bounds_hash, "at": now()}, pk="segment")
        project.audit(actor, "bake segment", f"segment:{segment}",
                      {"tool": tool, "frames": [tracks.frame_start, tracks.frame_end]})


def delete_segment(project: Project, segment: str, actor: str = "person") -> None:
    with project.transaction():
        project.db.execute("DELETE FROM tracks WHERE segment = ?", [segment])
        project.audit(actor, "delete segment", f"segment:{segment}", {})


def list_segments(project: Project) -> list[dict]:
    return [dict(r) for r in project.db.query('SELECT * FROM tracks ORDER BY start, "end"')]


def load_segment(project: Project, segment: str) -> Tracks | None:
    rows = list(project.db.query("SELECT asset FROM tracks WHERE segment = ?", [segment]))
    return Tracks.from_bytes(project.read_asset(rows[0]["asset"])) if rows else None


def load_film_tracks(project: Project) -> Tracks | None:
    """All baked segments joined in frame order, or None if nothing is baked.
    Raises ValueError if the segments leave a gap or overlap disagreeing."""
    segs = list_segments(project)
    if not segs:
        return None
    parts = [Tracks.from_bytes(project.read_asset(s["asset"])) for s in segs]
    film = parts[0]
    for seg, part in zip(segs[1:], parts[1:]):
        if part.frame_start > film.frame_end + 1:
            raise ValueError(f"segment {seg['segment']} starts at {part.frame_start}, "
                             f"leaving frames {film.frame_end + 1}..{part.frame_start - 1} unbaked")
        skip = film.frame_end + 1 - part.frame_start
        film = Tracks(film.frame_start,
                      {k: np.concatenate([v, part.roots[k][skip:]]) for k, v in film.roots.items()},
                      {k: np.concatenate([v, part.joints[k][skip:]]) for k, v in film.joints.items()})
    return film


def film_binding(tracks: Tracks, design: str, plan: dict | None) -> str:
    """What film reports are bound to: the joined tracks, the scene design and the plan."""
    return canonical_hash({"tracks": tracks.hash(), "design": design, "plan": plan})[:16]


def film_hash(project: Project) -> str | None:
    """film_binding of the project's current film; None if nothing (or nothing joinable) is baked.
    Computed once per read-only pass (`reading_scenes`), where nothing is written."""
    memo = read_memo()
    if memo is not None:
        key = ("film_hash", id(project))
        if key not in memo:
            memo[key] = (project, _film_hash(project))
        return memo[key][1]
    return _film_hash(project)


def _film_hash(project: Project) -> str | None:
    try:
        tracks = load_film_tracks(project)
    except ValueError:
        return None
    if tracks is None:
        return None
    return film_binding(tracks, scene_design_id(load_scene(project)), project.get_doc("plan"))
