"""What a frame shows when nothing says otherwise: the baked film where it is
baked, else the key state that holds there (the last one at or before it, the
first one before any), else the scene's rest pose. The window draws this, and
tools that reason about a frame range (framing a camera on the action) read it,
so both see the same bodies in the same places."""
from __future__ import annotations

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks

from studio.timeline.storyboard import State


def held_state(states: list[State], frame: int) -> State | None:
    """The state that holds at `frame`: the last one at or before it (states in frame order)."""
    held = None
    for s in states:
        if s.frame <= frame:
            held = s
    return held or (states[0] if states else None)


def pose_at(scene: Scene, film: Tracks | None, states: list[State], frame: int) -> Pose:
    if film is not None and film.n_frames and film.frame_start <= frame <= film.frame_end:
        return film.pose_at(frame)
    s = held_state(states, frame)
    return s.pose.completed(scene) if s else Pose.rest(scene)
