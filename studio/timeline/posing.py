"""Posing a state the way an animator thinks: set a joint, move a body, put one named
frame on another, reach an effector to a frame.

Each function takes a pose and returns a new one (the input is left alone), so a
person, the agent or an example can chain them and store the result as a state
(through `commands.SetPose`, which makes it undoable). Moving a body that hangs
on joints moves the root of its tree, so the body lands where asked and the
joints keep their values.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import from_7, invert, to_7

from studio.timeline.motion.ik import Goal, frame_pose, solve_ik


class PoseError(ValueError):
    """A posing request that does not fit the scene; the message names the joint, body or frame."""


def set_joint(scene: Scene, pose: Pose, joint: str, value) -> Pose:
    """The pose with one joint set; a value outside the joint's limits is refused."""
    try:
        j = scene.joint(joint)
    except KeyError:
        raise PoseError(f"set joint: no joint named {joint!r}") from None
    if j.type == "fixed":
        raise PoseError(f"set joint {joint}: a fixed joint has no value")
    out = pose.completed(scene).copy()
    if j.type == "ball":
        v = [float(x) for x in value]
        if len(v) != 3 or np.linalg.norm(v) > j.upper + 1e-9:
            raise PoseError(f"set joint {joint}: expected a rotation vector of 3 with angle <= {j.upper:.3f}")
        out.joints[joint] = v
        return out
    v = float(value)
    if not j.lower - 1e-9 <= v <= j.upper + 1e-9:
        raise PoseError(f"set joint {joint}: {v:.4f} is outside its limits [{j.lower:.4f}, {j.upper:.4f}]")
    out.joints[joint] = v
    return out


def _place_tree(scene: Scene, pose: Pose, body: str, world: np.ndarray) -> Pose:
    """Move the root of `body`'s tree so that `body` has the world matrix `world`."""
    out = pose.completed(scene).copy()
    root = scene.group_root(body)
    w = pose_world(scene, out)
    root_in_body = invert(w[body]) @ w[root]
    out.roots[root] = to_7(world @ root_in_body).tolist()
    return out


def move_body(scene: Scene, pose: Pose, body: str, position=None, rotation=None) -> Pose:
    """Put a body at a world position and/or rotation (w, x, y, z), moving its whole tree."""
    if body not in scene.body_names:
        raise PoseError(f"move body: no body named {body!r}")
    if scene.body(body).is_static:
        raise PoseError(f"move body {body}: it is static; edit the scene to move it")
    cur = pose_world(scene, pose.completed(scene))[body]
    p = cur[:3, 3] if position is None else np.asarray(position, float)
    q = to_7(cur)[3:] if rotation is None else np.asarray(rotation, float)
    return _place_tree(scene, pose, body, from_7(np.array([*p, *q])))


def align(scene: Scene, pose: Pose, frame: str, to: str, offset: np.ndarray | None = None) -> Pose:
    """Move the body carrying named frame `frame` (with its tree) so that `frame` coincides with
    named frame `to` (times an optional 4x4 `offset` in `to`'s frame)."""
    try:
        f = scene.frame(frame)
    except KeyError:
        raise PoseError(f"align: no named frame {frame!r}") from None
    target = frame_pose(scene, pose, to) @ (np.eye(4) if offset is None else np.asarray(offset, float))
    body_world = target @ invert(from_7(np.asarray(f.local.as_list())))
    if scene.body(scene.group_root(f.body)).is_static:
        raise PoseError(f"align {frame}: it is on a static body; align the other frame to it instead")
    return _place_tree(scene, pose, f.body, body_world)


def reach(scene: Scene, pose: Pose, effector: str, to: str, joints: list[str],
          orient: bool = False, tolerance: float = 1e-3) -> tuple[Pose, float]:
    """Solve `joints` so the effector frame reaches named frame `to` (and its rotation if `orient`)."""
    target = frame_pose(scene, pose, to)
    goal = Goal(effector, target[:3, 3], to_7(target)[3:] if orient else None)
    out, err = solve_ik(scene, pose, joints, [goal], iterations=150, tolerance=tolerance / 10)
    return out, err
