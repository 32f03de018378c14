"""The set: the bodies no repair may move.

A repair proposes new motion; it never rearranges what a person built. Three
kinds of body are the set:
- static bodies and the ground (by kind or flag);
- bodies the plan's objects mark as fixed scenery (`{"name": ..., "fixed": true}`,
  a body or a group);
- bodies the approved storyboard and the baked film both keep still: the same
  world transform in every approved key state and at every frame of the film
  (a cabinet, a table, a robot arm's base), since moving one is motion nobody
  approved.

A body's world transform is still when its tree's root is still and so is every
joint between the root and the body, so the set is found from the tracks alone,
without forward kinematics per frame. A change moving any body of the set, at
any frame, by more than `HAIR` is refused, whatever else it fixes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import quat_conj, quat_mul

HAIR = 1e-7                 # metres or radians: rounding, never a move


def _path(scene: Scene, body: str) -> tuple[str, list[str]]:
    """The body's tree root and the joints from the root down to it."""
    joints = []
    j = scene.joint_of_child(body)
    while j is not None:
        joints.append(j.name)
        body = j.parent
        j = scene.joint_of_child(body)
    return body, joints


def _still(values: np.ndarray) -> bool:
    values = np.asarray(values, float)
    if values.size == 0:            # no frames, or a joint with no value (a fixed joint): nothing moves
        return True
    values = values.reshape(len(values), -1)
    return bool(np.max(np.abs(values - values[0])) <= HAIR)


def fixed_by_plan(scene: Scene, plan: dict | None) -> set[str]:
    """Bodies the plan's objects mark `fixed` (an object naming a group fixes all its bodies)."""
    out: set[str] = set()
    for o in (plan or {}).get("objects", []) or []:
        if isinstance(o, dict) and o.get("fixed") is True:
            name = o.get("name")
            out |= {b.name for b in scene.bodies if b.name == name or b.group == name}
    return out


def the_set(scene: Scene, plan: dict | None, poses: list[Pose], film: Tracks | None) -> set[str]:
    """The bodies no repair may move, given the approved key states' poses and the baked film."""
    out = {b.name for b in scene.bodies if b.is_static} | fixed_by_plan(scene, plan)
    poses = [p.completed(scene) for p in poses]
    for b in scene.bodies:
        if b.name in out:
            continue
        root, joints = _path(scene, b.name)
        joints = [j for j in joints if scene.joint(j).type != "fixed"]     # a fixed joint holds no value
        roots = [p.roots[root] for p in poses]
        values = {j: [np.atleast_1d(np.asarray(p.joints[j], float)).tolist() for p in poses] for j in joints}
        if film is not None:
            if root in film.roots:
                roots += film.roots[root].tolist()
            for j in joints:
                if j in film.joints:
                    values[j] += np.asarray(film.joints[j], float).reshape(film.n_frames, -1).tolist()
        if not roots:
            continue
        if _still(roots) and all(_still(v) for v in values.values()):
            out.add(b.name)
    return out


@dataclass
class Moved:
    """A body of the set that a change moves: how far (metres, radians) and at which frame."""
    body: str
    metres: float
    radians: float
    frame: int

    def words(self) -> str:
        what = f"{self.metres * 1000:.0f} mm" if self.metres > HAIR else ""
        turn = f"{np.degrees(self.radians):.1f}°" if self.radians > HAIR else ""
        return f"{self.body} {' and '.join(x for x in (what, turn) if x) or 'a hair'} at {self.frame}"


def _root_moves(before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame, how far a root moves (metres) and turns (radians) from `before` to `after`."""
    metres = np.linalg.norm(after[:, :3] - before[:, :3], axis=1)
    dq = np.array([quat_mul(b, quat_conj(a)) for a, b in zip(before[:, 3:], after[:, 3:])])
    radians = 2 * np.arccos(np.clip(np.abs(dq[:, 0]), 0.0, 1.0))
    return metres, radians


def moved_in_tracks(scene: Scene, fixed: set[str], before: Tracks, after: Tracks,
                    frames: tuple[int, int]) -> list[Moved]:
    """Bodies of the set that `after` moves away from `before` on the frames (inclusive), worst first."""
    lo = max(frames[0], before.frame_start, after.frame_start)
    hi = min(frames[1], before.frame_end, after.frame_end)
    if hi < lo:
        return []
    out = []
    for body in sorted(fixed):
        root, joints = _path(scene, body)
        worst: tuple[float, float, int] | None = None
        if root in before.roots and root in after.roots:
            a = before.roots[root][lo - before.frame_start:hi - before.frame_start + 1]
            b = after.roots[root][lo - after.frame_start:hi - after.frame_start + 1]
            metres, radians = _root_moves(np.asarray(a, float), np.asarray(b, float))
            k = int(np.argmax(np.maximum(metres, radians)))
            if max(metres[k], radians[k]) > HAIR:
                worst = (float(metres[k]), float(radians[k]), lo + k)
        for j in joints:
            if worst is None and j in before.joints and j in after.joints:
                a = np.asarray(before.joints[j], float)[lo - before.frame_start:hi - before.frame_start + 1]
                b = np.asarray(after.joints[j], float)[lo - after.frame_start:hi - after.frame_start + 1]
                d = np.abs(b - a).reshape(len(a), -1).max(axis=1)
                k = int(np.argmax(d))
                if d[k] > HAIR:
                    worst = (0.0, float(d[k]), lo + k)
        if worst is not None:
            out.append(Moved(body, *worst))
    return sorted(out, key=lambda m: -max(m.metres, m.radians))


def moved_in_pose(scene: Scene, fixed: set[str], before: Pose, after: Pose, frame: int) -> list[Moved]:
    """Bodies of the set that `after` moves away from `before` (one pose: a key state)."""
    a, b = before.completed(scene), after.completed(scene)
    one = lambda p: Tracks(frame, {r: np.asarray([p.roots[r]], float) for r in p.roots},
                           {j: np.asarray([v], float) for j, v in p.joints.items()})
    return moved_in_tracks(scene, fixed, one(a), one(b), (frame, frame))
