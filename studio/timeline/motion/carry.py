"""Attach and carry: a grasped body rides on a hand's frame from grasp to release.

At the grasp frame the carried body's pose relative to the hand frame is taken
(`attach_offset`); until release the body's world pose is the hand's world pose
times that offset, so it rests on the gripper and never floats; after release
it stays where it was placed. The other direction, a hand following a carried
object (`handle_targets`), gives IK targets for hands on an object whose path
was authored first. Carry windows come from the plan's grasp/release events.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.scene.ir import Scene
from studio.scene.transforms import from_7, invert, to_7


@dataclass
class CarryWindow:
    frame: str           # the hand's named frame
    body: str            # the carried body
    grasp: int           # first frame carried
    release: int         # last frame carried


def carry_windows(plan: dict, scene: Scene) -> list[CarryWindow]:
    """Grasp events (subjects [named_frame, body]) paired with the next release of that body."""
    frames = {f.name for f in scene.frames}
    out = []
    events = sorted(plan.get("events", []), key=lambda e: e["window"][0])
    for e in events:
        if e["kind"] != "grasp" or len(e.get("subjects", [])) < 2:
            continue
        hand, body = e["subjects"][0], e["subjects"][1]
        if hand not in frames:
            raise ValueError(f"plan.events {e['id']!r}: grasp subject {hand!r} is not a named frame")
        rel = [r for r in events if r["kind"] == "release" and body in r.get("subjects", [])
               and r["window"][0] >= e["window"][0]]
        end = rel[0]["window"][1] if rel else None
        out.append(CarryWindow(hand, body, int(e["window"][0]), int(end) if end is not None else 10**9))
    return out


def attach_offset(hand_world: np.ndarray, body_world: np.ndarray) -> np.ndarray:
    """The body's pose in the hand's frame at the grasp, (4,4)."""
    return invert(np.asarray(hand_world, float)) @ np.asarray(body_world, float)


def carried_track(hand_world: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """(F,7) world track of a carried body given the hand's (F,4,4) world matrices."""
    return to_7(np.asarray(hand_world, float) @ offset)


def carry(body_track: np.ndarray, hand_world: np.ndarray, frames: np.ndarray, grasp: int, release: int) -> np.ndarray:
    """A body's (F,7) root track: as given before the grasp, on the hand from grasp to
    release, and left where the hand put it after release."""
    out = np.asarray(body_track, float).copy()
    frames = np.asarray(frames)
    if not (frames[0] <= grasp <= frames[-1]):
        raise ValueError(f"carry: grasp frame {grasp} is outside frames {frames[0]}..{frames[-1]}")
    gi = int(np.searchsorted(frames, grasp))
    offset = attach_offset(hand_world[gi], from_7(out[gi]))
    sel = (frames >= grasp) & (frames <= release)
    out[sel] = carried_track(hand_world[sel], offset)
    after = frames > release
    if after.any():
        out[after] = out[np.flatnonzero(sel)[-1]]
    return out


def handle_targets(scene: Scene, body_track: np.ndarray, frame_name: str) -> np.ndarray:
    """(F,4,4) world matrices of a named frame on a root body that follows `body_track`."""
    f = scene.frame(frame_name)
    return from_7(np.asarray(body_track, float)) @ from_7(np.asarray(f.local.as_list()))
