"""Shots and their cameras: which camera sees a state, and where the film cuts.

A shot is the plan's `{id, camera, start, end}`; a state names its shot by id
(`door`), never by camera (`cam_door`). A frame belongs to the plan's shot
whose span holds it (of overlapping spans, the one that began last); a frame
outside every span belongs to the shot of the state holding there (the last
state at or before it). The film cuts wherever that shot changes, and each cut
is seen through its shot's camera: stills, previews, the film, the `.blend`'s
markers and the window's Shot camera view all read these functions, so they
cannot disagree. Without a plan shot the scene's first camera sees everything.
"""
from __future__ import annotations

from dataclasses import dataclass

from studio.scene.ir import Scene

from studio.timeline.plan import shot_camera


class ShotProblem(ValueError):
    """A shot that names a camera the scene does not have; the message names both."""


@dataclass(frozen=True)
class Cut:
    """From `frame` on, the film is seen through `camera`, in shot `shot` ("" when no shot holds)."""
    frame: int
    shot: str
    camera: str


def _spans(plan: dict | None) -> list[tuple[int, int, str]]:
    out = []
    for s in (plan or {}).get("shots", []) or []:
        if isinstance(s, dict) and isinstance(s.get("start"), int) and isinstance(s.get("end"), int):
            out.append((int(s["start"]), int(s["end"]), str(s.get("id", ""))))
    return out


def shot_at(plan: dict | None, states, frame: int) -> str:
    """The shot holding `frame`: the plan's span around it, else the shot of the state holding there."""
    inside = [(a, shot) for a, b, shot in _spans(plan) if a <= frame <= b]
    if inside:
        return max(inside, key=lambda t: t[0])[1]
    held = None
    for s in sorted(states, key=lambda s: s.frame):
        if s.frame <= frame:
            held = s
    held = held or (min(states, key=lambda s: s.frame) if states else None)
    return held.shot if held is not None else ""


def camera_of(scene: Scene, plan: dict | None, shot: str) -> str:
    """The camera that sees `shot`: the plan's camera for it, else the scene's first camera."""
    if not scene.cameras:
        raise ShotProblem("the scene has no camera")
    cam = shot_camera(plan, shot) if shot else None
    if cam is None:
        return scene.cameras[0].name
    if cam not in {c.name for c in scene.cameras}:
        raise ShotProblem(f"shot {shot!r} is seen through camera {cam!r}, which the scene does not have "
                          f"(cameras: {', '.join(c.name for c in scene.cameras)})")
    return cam


def state_camera(scene: Scene, plan: dict | None, state) -> str:
    """The camera a state's storyboard still is seen through: its own shot's camera."""
    return camera_of(scene, plan, state.shot)


def cuts(scene: Scene, plan: dict | None, states, first: int, last: int) -> list[Cut]:
    """Every cut of frames first..last, the first at `first`: one wherever the shot changes."""
    marks = {first}
    for a, b, _ in _spans(plan):
        marks.update((a, b + 1))
    marks.update(s.frame for s in states)
    out: list[Cut] = []
    for f in sorted(m for m in marks if first <= m <= last):
        shot = shot_at(plan, states, f)
        if not out or shot != out[-1].shot:
            out.append(Cut(f, shot, camera_of(scene, plan, shot)))
    return out


def cut_at(cut_list: list[Cut], frame: int) -> Cut | None:
    """The cut that holds at `frame` (the last one at or before it)."""
    held = None
    for c in cut_list:
        if c.frame <= frame:
            held = c
    return held or (cut_list[0] if cut_list else None)
