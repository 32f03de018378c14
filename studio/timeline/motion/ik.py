"""Inverse kinematics: analytic two-bone for limbs, damped least squares for chains.

`two_bone` places a limb's middle joint from the law of cosines and a pole
vector (the knee or elbow points towards the pole). `solve_ik` moves the given
joints so that goal frames reach their targets: damped least squares on a
Jacobian taken by finite differences, every step evaluated as one batched
forward-kinematics call over only the bodies the goals depend on. Joint limits
are respected by clamping after each step and freezing a joint that sits on a
limit and is pushed further. A fixed joint named in a chain is part of the
chain's shape (a knob on a door, a flange on a wrist) but has no value, so
the solve leaves it out rather than failing on it. `solve_limb` joins the
two: the effector goes to the target and the middle body is drawn towards
the analytic pole position.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import from_7, matrix_to_quat, quat_conj, quat_mul, quat_to_rotvec


class IKError(ValueError):
    """A goal that names nothing in the scene, or a chain with no joints."""


def two_bone(root, target, l1: float, l2: float, pole) -> tuple[np.ndarray, np.ndarray, bool]:
    """Middle and end points of a two-bone limb from `root` towards `target`, bending
    towards `pole`. A target out of reach is approached along the line (reached False)."""
    root, target, pole = (np.asarray(v, float) for v in (root, target, pole))
    d_vec = target - root
    dist = float(np.linalg.norm(d_vec))
    u = d_vec / dist if dist > 1e-12 else np.array([0.0, 0.0, -1.0])
    reach = float(np.clip(dist, abs(l1 - l2) + 1e-9, l1 + l2 - 1e-9))
    cos_a = np.clip((l1 * l1 + reach * reach - l2 * l2) / (2 * l1 * reach), -1.0, 1.0)
    side = pole - root
    side = side - np.dot(side, u) * u
    n = np.linalg.norm(side)
    if n < 1e-9:
        side = np.cross(u, [0.0, 0.0, 1.0]) if abs(u[2]) < 0.99 else np.cross(u, [1.0, 0.0, 0.0])
        n = np.linalg.norm(side)
    side /= n
    mid = root + l1 * (cos_a * u + np.sqrt(1 - cos_a * cos_a) * side)
    return mid, root + reach * u, abs(reach - dist) < 1e-6


def bend_angle(l1: float, l2: float, dist: float) -> float:
    """The middle joint's bend (0 = straight) that puts the limb's ends `dist` apart."""
    dist = float(np.clip(dist, abs(l1 - l2), l1 + l2))
    return float(np.pi - np.arccos(np.clip((l1 * l1 + l2 * l2 - dist * dist) / (2 * l1 * l2), -1, 1)))


@dataclass
class Goal:
    """Bring a named frame (or a body's origin) to `position`, and optionally to `rotation` (w,x,y,z)."""

    name: str
    position: np.ndarray
    rotation: np.ndarray | None = None
    weight: float = 1.0
    rotation_weight: float = 0.2      # metres of error that one radian counts as
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)   # a point fixed in that frame, not its origin


def _frame_local(scene: Scene, name: str) -> tuple[str, np.ndarray]:
    try:
        f = scene.frame(name)
        return f.body, from_7(np.asarray(f.local.as_list()))
    except KeyError:
        pass
    if name in scene.body_names:
        return name, np.eye(4)
    raise IKError(f"IK goal {name!r}: no named frame or body of that name")


def _ancestors(scene: Scene, body: str) -> list[str]:
    out = [body]
    while (j := scene.joint_of_child(out[-1])) is not None:
        out.append(j.parent)
    return out


def _sub_scene(scene: Scene, bodies: set[str]) -> Scene:
    return Scene(name=scene.name, bodies=[b for b in scene.bodies if b.name in bodies],
                 joints=[j for j in scene.joints if j.child in bodies])


def _rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """(B,3,3) rotations about a unit axis (Rodrigues), batched over angles."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1 - c) * (k @ k)


def _motion(joint, q: np.ndarray) -> np.ndarray:
    """(B,4,4) local motion of a joint for values q ((B,) or (B,3))."""
    out = np.tile(np.eye(4), (len(q), 1, 1))
    axis = np.asarray(joint.axis, float)
    if joint.type == "revolute":
        out[:, :3, :3] = _rotation(axis, q)
    elif joint.type == "prismatic":
        out[:, :3, 3] = q[:, None] * axis
    elif joint.type == "ball":
        angle = np.linalg.norm(q, axis=1)
        safe = np.where(angle > 1e-12, angle, 1.0)
        for i in range(len(q)):           # ball joints are rare in IK chains; keep it simple
            a = q[i] / safe[i] if angle[i] > 1e-12 else np.array([0.0, 0.0, 1.0])
            out[i, :3, :3] = _rotation(a, angle[i:i + 1])[0]
    return out


def _chain(sub: Scene, pose: Pose, moving: dict[str, tuple[int, int]]) -> list:
    """Per body in tree order: (name, parent, constant part, joint, slice of q) for a fast batched FK."""
    from studio.scene.kinematics import tree_order
    by_child = {j.child: j for j in sub.joints}
    steps = []
    for body in tree_order(sub):
        j = by_child.get(body)
        if j is None:
            steps.append((body, None, from_7(np.asarray(pose.roots.get(body, [0, 0, 0, 1, 0, 0, 0]), float)), None, None))
            continue
        origin = from_7(np.asarray(j.origin.as_list()))
        if j.name in moving:
            steps.append((body, j.parent, origin, j, moving[j.name]))
        else:
            v = pose.joints.get(j.name, 0.0)
            q = np.asarray(v, float).reshape(1, -1) if isinstance(v, list) else np.array([float(v)])
            steps.append((body, j.parent, origin @ _motion(j, q)[0], None, None))
    return steps


def _chain_world(chain: list, qs: np.ndarray) -> dict[str, np.ndarray]:
    world: dict[str, np.ndarray] = {}
    for body, parent, const, joint, sl in chain:
        if parent is None:
            world[body] = np.broadcast_to(const, (len(qs), 4, 4))
        elif joint is None:
            world[body] = world[parent] @ const
        else:
            k, d = sl
            q = qs[:, k:k + d] if joint.type == "ball" else qs[:, k]
            world[body] = world[parent] @ const @ _motion(joint, q)
    return world


def frame_pose(scene: Scene, pose: Pose, name: str) -> np.ndarray:
    """World matrix of a named frame (or body) in a pose."""
    body, local = _frame_local(scene, name)
    return pose_world(scene, pose.completed(scene))[body] @ local


def solve_ik(scene: Scene, pose: Pose, joints: list[str], goals: list[Goal], iterations: int = 100,
             damping: float = 0.02, tolerance: float = 1e-4) -> tuple[Pose, float]:
    """Move `joints` so the goals are met; returns the new pose and the largest position error (m)."""
    js = [scene.joint(n) for n in joints]
    js = [j for j in js if j.type != "fixed"]           # a fixed joint shapes the chain but has no value
    if not js:
        raise IKError("IK: no joints to move" + (f" ({', '.join(joints)} are fixed)" if joints else ""))
    pose = pose.completed(scene)
    locals_ = []
    for g in goals:
        body, loc = _frame_local(scene, g.name)
        shift = np.eye(4)
        shift[:3, 3] = g.offset
        locals_.append((body, loc @ shift))
    bodies = set().union(*(_ancestors(scene, b) for b, _ in locals_))
    sub = _sub_scene(scene, bodies)
    for j in js:
        if j.child not in bodies:
            raise IKError(f"IK: joint {j.name!r} does not move any goal frame")
    sizes = [j.dof for j in js]
    lo = np.concatenate([[j.lower] * d if j.type != "ball" else [-j.upper] * 3 for j, d in zip(js, sizes)])
    hi = np.concatenate([[j.upper] * d if j.type != "ball" else [j.upper] * 3 for j, d in zip(js, sizes)])
    q = np.concatenate([np.atleast_1d(np.asarray(pose.joints[j.name], float)) for j in js])
    q = np.clip(q, lo, hi)
    moving = {j.name: (k, d) for j, d, k in zip(js, sizes, np.cumsum([0] + sizes[:-1]))}
    chain = _chain(sub, pose, moving)
    n = len(q)
    eps = 1e-6

    def evaluate(qs: np.ndarray) -> list[np.ndarray]:
        w = _chain_world(chain, qs)
        return [w[b] @ loc for b, loc in locals_]

    def residual(mats: list[np.ndarray]) -> np.ndarray:
        parts = []
        for g, m in zip(goals, mats):
            parts.append(g.weight * (np.asarray(g.position, float) - m[:, :3, 3]))
            if g.rotation is not None:
                cur = matrix_to_quat(m[:, :3, :3])
                err = quat_to_rotvec(quat_mul(np.asarray(g.rotation, float), quat_conj(cur)))
                parts.append(g.weight * g.rotation_weight * err)
        return np.concatenate(parts, axis=1)

    def pos_error(r: np.ndarray) -> float:
        k, worst = 0, 0.0
        for g in goals:
            worst = max(worst, float(np.linalg.norm(r[k:k + 3])) / g.weight)
            k += 6 if g.rotation is not None else 3
        return worst

    for _ in range(iterations):
        batch = np.repeat(q[None], n + 1, axis=0)
        batch[1:] += np.eye(n) * eps
        r = residual(evaluate(batch))
        e = r[0]
        if pos_error(e) < tolerance and np.linalg.norm(e) < tolerance * 3:
            break
        jac = -(r[1:] - e).T / eps                       # d(goal frames)/dq
        push = jac.T @ e                                  # > 0: raising q reduces the error
        free = ~(((q <= lo + 1e-9) & (push < 0)) | ((q >= hi - 1e-9) & (push > 0)))
        jf = jac[:, free]
        step = np.zeros(n)
        step[free] = jf.T @ np.linalg.solve(jf @ jf.T + damping ** 2 * np.eye(len(e)), e)
        step = np.clip(step, -0.5, 0.5)
        q = np.clip(q + step, lo, hi)
    final = residual(evaluate(q[None]))[0]
    out = pose.copy()
    k = 0
    for j, d in zip(js, sizes):
        out.joints[j.name] = q[k:k + d].tolist() if j.type == "ball" else float(q[k])
        k += d
    return out, pos_error(final)


def solve_limb(scene: Scene, pose: Pose, joints: list[str], effector: str, target: np.ndarray,
               pole: np.ndarray, middle: str | None = None, rotation: np.ndarray | None = None,
               iterations: int = 100) -> tuple[Pose, float]:
    """Two-bone limb IK: the analytic pole position guides the middle body, then the
    effector is solved exactly (the pole goal is dropped for the final pass)."""
    js = [j for j in (scene.joint(n) for n in joints) if j.type != "fixed"]
    middle = middle or js[-1].child if len(js) > 1 else None
    goal = Goal(effector, np.asarray(target, float), rotation)
    if middle is not None:
        w = pose_world(scene, pose.completed(scene))
        root_p = w[js[0].child][:3, 3]
        mid_p = w[middle][:3, 3]
        end_p = frame_pose(scene, pose, effector)[:3, 3]
        l1, l2 = np.linalg.norm(mid_p - root_p), np.linalg.norm(end_p - mid_p)
        if l1 > 1e-6 and l2 > 1e-6:
            want, _, _ = two_bone(root_p, target, l1, l2, pole)
            pose, _ = solve_ik(scene, pose, joints, [goal, Goal(middle, want, weight=0.3)], iterations // 2)
    return solve_ik(scene, pose, joints, [goal], iterations)
