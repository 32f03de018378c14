"""Forward kinematics, vectorised over frames.

World transform of a child body = parent world · joint origin · joint motion(q).
Revolute: rotation by q about the axis; prismatic: translation q along the
axis; ball: rotation by the rotation vector q; fixed: none. Bodies are visited
in tree order once per call, each step a batched matrix product over frames.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import compose, from_7, quat_from_axis_angle, quat_from_rotvec


def tree_order(scene: Scene) -> list[str]:
    """Bodies ordered so that every parent precedes its children."""
    children: dict[str, list[str]] = {}
    for j in scene.joints:
        children.setdefault(j.parent, []).append(j.child)
    order, stack = [], list(reversed(scene.roots))
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children.get(b, [])))
    return order


def joint_motion(joint, q: np.ndarray) -> np.ndarray:
    """(F,4,4) local motion of a joint for values q: (F,) or (F,3)."""
    q = np.asarray(q, float)
    n = q.shape[0]
    axis = np.asarray(joint.axis, float)
    if joint.type == "revolute":
        return compose(np.zeros((n, 3)), quat_from_axis_angle(np.broadcast_to(axis, (n, 3)), q))
    if joint.type == "prismatic":
        return compose(q[:, None] * axis, np.tile([1.0, 0, 0, 0], (n, 1)))
    if joint.type == "ball":
        return compose(np.zeros((n, 3)), quat_from_rotvec(q.reshape(n, 3)))
    return np.tile(np.eye(4), (n, 1, 1))


def forward(scene: Scene, roots: dict[str, np.ndarray], joints: dict[str, np.ndarray],
            n_frames: int, only: set[str] | None = None) -> dict[str, np.ndarray]:
    """World matrices (F,4,4) of every body (only: of those bodies and the chains they hang on)."""
    world: dict[str, np.ndarray] = {}
    by_child = {j.child: j for j in scene.joints}
    needed = None
    if only is not None:
        needed = set()
        for body in only:
            while body not in needed:
                needed.add(body)
                j = by_child.get(body)
                if j is None:
                    break
                body = j.parent
    for body in tree_order(scene):
        if needed is not None and body not in needed:
            continue
        j = by_child.get(body)
        if j is None:
            t = roots.get(body)
            if t is None:
                world[body] = np.tile(np.eye(4), (n_frames, 1, 1))
            else:
                m = from_7(np.asarray(t, float))       # (4,4) for one transform, (F,4,4) per frame
                world[body] = m if m.ndim == 3 else np.broadcast_to(m, (n_frames, 4, 4)).copy()
            continue
        origin = from_7(np.asarray(j.origin.as_list()))
        q = joints.get(j.name)
        if q is None:
            q = np.zeros((n_frames, 3) if j.type == "ball" else n_frames)
        q = np.asarray(q, float)
        if j.type == "ball":
            q = q.reshape(-1, 3)
            q = np.broadcast_to(q, (n_frames, 3)) if q.shape[0] == 1 else q
        else:
            q = np.broadcast_to(q.reshape(-1), (n_frames,)) if q.size == 1 else q.reshape(-1)
        world[body] = world[j.parent] @ origin @ joint_motion(j, q)
    return world


def pose_world(scene: Scene, pose: Pose) -> dict[str, np.ndarray]:
    """World matrices (4,4) of every body in one pose."""
    roots = {k: np.asarray(v, float)[None] for k, v in pose.roots.items()}
    joints = {k: np.asarray(v, float).reshape(1, -1) if isinstance(v, list) else np.array([v], float)
              for k, v in pose.joints.items()}
    return {k: v[0] for k, v in forward(scene, roots, joints, 1).items()}


def tracks_world(scene: Scene, tracks: Tracks) -> dict[str, np.ndarray]:
    """World matrices (F,4,4) of every body at every baked frame."""
    return forward(scene, tracks.roots, tracks.joints, tracks.n_frames)


def frame_world(scene: Scene, world: dict[str, np.ndarray], frame_name: str) -> np.ndarray:
    """World matrix of a named frame, given body world matrices (…,4,4)."""
    f = scene.frame(frame_name)
    return world[f.body] @ from_7(np.asarray(f.local.as_list()))
