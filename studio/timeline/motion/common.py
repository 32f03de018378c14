"""What the motion tools share: named frames in the world over many frames, yaw, easing, and
the check that a tool's names exist in the scene (so a wrong name is refused, never guessed)."""
from __future__ import annotations

import math

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import forward, pose_world
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7, quat_from_axis_angle, quat_mul, quat_to_matrix

from studio.timeline.motion import MotionError


def frame_local(scene: Scene, name: str, tool: str) -> tuple[str, np.ndarray]:
    """(body, local 4x4) of a named frame or a body's origin; refuses an unknown name."""
    for f in scene.frames:
        if f.name == name:
            return f.body, from_7(np.asarray(f.local.as_list(), float))
    if name in scene.body_names:
        return name, np.eye(4)
    raise MotionError(f"{tool}: {name!r} is no named frame or body of the scene")


def need_joints(scene: Scene, names: list[str], tool: str, where: str) -> None:
    have = {j.name for j in scene.joints}
    for n in names:
        if n not in have:
            raise MotionError(f"{tool}: {where} names joint {n!r}, which the scene does not have")


def chain_joints(scene: Scene, names: list[str], tool: str, where: str) -> list[str]:
    """The joints of a chain that move: every name must be a joint of the scene, and a fixed joint
    (a knob on a door, a tool flange on a wrist) is part of the chain's shape but has no value to solve."""
    need_joints(scene, names, tool, where)
    return [n for n in names if scene.joint(n).type != "fixed"]


def moving_joints(scene: Scene) -> list[str]:
    """Every joint of the scene that has a value (fixed joints have none)."""
    return [j.name for j in scene.joints if j.type != "fixed"]


def need_root(scene: Scene, name: str, tool: str, where: str) -> None:
    if name not in scene.roots:
        raise MotionError(f"{tool}: {where} {name!r} is no root body of the scene "
                          f"(expected one of {', '.join(scene.roots)})")


def world_of(scene: Scene, tracks: Tracks) -> dict[str, np.ndarray]:
    """(F,4,4) world matrices of every body over the tracks' frames."""
    return forward(scene, tracks.roots, tracks.joints, tracks.n_frames)


def yaw_of(quat) -> float:
    m = quat_to_matrix(np.asarray(quat, float))
    return float(math.atan2(m[1, 0], m[0, 0]))


def yaw_quat(yaw: float) -> np.ndarray:
    return quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array(float(yaw)))


def tilt_of(quat) -> np.ndarray:
    """The rotation left once the yaw is taken out (pitch and roll), as a quaternion."""
    q = np.asarray(quat, float)
    return quat_mul(yaw_quat(-yaw_of(q)), q)


def wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def smooth(t) -> np.ndarray:
    t = np.clip(np.asarray(t, float), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def point(value, scene: Scene, pose: Pose, tool: str, where: str) -> np.ndarray:
    """A target given as [x, y, z] or as the name of a frame or body (its origin in `pose`)."""
    if isinstance(value, str):
        body, local = frame_local(scene, value, tool)
        return (pose_world(scene, pose)[body] @ local)[:3, 3]
    v = np.asarray(value, float)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise MotionError(f"{tool}: {where} must be [x, y, z] or a frame name, got {value!r}")
    return v
