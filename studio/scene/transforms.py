"""Rigid-transform maths, vectorised over leading axes.

Quaternions are (w, x, y, z). Matrices are 4×4 homogeneous, acting on column
vectors. Every function accepts arrays with any leading shape.
"""
from __future__ import annotations

import numpy as np


def quat_normalize(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, ax, ay, az = np.moveaxis(np.asarray(a, float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, float) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * np.asarray(angle, float)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def quat_from_rotvec(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, float)
    angle = np.linalg.norm(v, axis=-1)
    safe = np.where(angle > 1e-12, angle, 1.0)
    axis = np.where((angle > 1e-12)[..., None], v / safe[..., None], np.array([0.0, 0.0, 1.0]))
    return quat_from_axis_angle(axis, angle)


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    q = quat_normalize(q)
    q = np.where(q[..., :1] < 0, -q, q)
    s = np.linalg.norm(q[..., 1:], axis=-1)
    angle = 2.0 * np.arctan2(s, q[..., 0])
    scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0)
    return q[..., 1:] * scale[..., None]


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = np.moveaxis(quat_normalize(q), -1, 0)
    m = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                  2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                  2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)
    return m.reshape(*m.shape[:-1], 3, 3)


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """Rotation matrix (…,3,3) to a unit quaternion with w ≥ 0."""
    m = np.asarray(m, float)[..., :3, :3]
    tr = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    cands = np.stack([
        np.stack([1 + tr, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1),
        np.stack([m[..., 2, 1] - m[..., 1, 2], 1 + m[..., 0, 0] - m[..., 1, 1] - m[..., 2, 2], m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0]], -1),
        np.stack([m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0], 1 - m[..., 0, 0] + m[..., 1, 1] - m[..., 2, 2], m[..., 1, 2] + m[..., 2, 1]], -1),
        np.stack([m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1], 1 - m[..., 0, 0] - m[..., 1, 1] + m[..., 2, 2]], -1),
    ], axis=-2)
    diag = np.stack([tr, m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]], -1)
    best = np.argmax(diag, axis=-1)
    q = np.take_along_axis(cands, best[..., None, None], axis=-2)[..., 0, :]
    q = quat_normalize(q)
    return np.where(q[..., :1] < 0, -q, q)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", quat_to_matrix(q), np.asarray(v, float))


def slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Shortest-arc spherical interpolation; t has the leading shape of the result."""
    q0, q1 = quat_normalize(q0), quat_normalize(q1)
    t = np.asarray(t, float)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-6
    w0 = np.where(small, 1 - t, np.sin((1 - t) * theta) / np.where(small, 1, sin))
    w1 = np.where(small, t, np.sin(t * theta) / np.where(small, 1, sin))
    return quat_normalize(w0 * q0 + w1 * q1)


def compose(pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
    """Position (…,3) and quaternion (…,4) to a 4×4 matrix."""
    pos = np.asarray(pos, float)
    m = np.zeros(pos.shape[:-1] + (4, 4))
    m[..., :3, :3] = quat_to_matrix(quat)
    m[..., :3, 3] = pos
    m[..., 3, 3] = 1.0
    return m


def from_7(t: np.ndarray) -> np.ndarray:
    """A (…,7) transform [x y z w qx qy qz] to a 4×4 matrix."""
    t = np.asarray(t, float)
    return compose(t[..., :3], t[..., 3:7])


def to_7(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, float)
    return np.concatenate([m[..., :3, 3], matrix_to_quat(m)], axis=-1)


def invert(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, float)
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def look_at(position: np.ndarray, target: np.ndarray, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Camera-to-world matrix for a camera looking down its -Z axis (Blender's)."""
    p, t, u = (np.asarray(v, float) for v in (position, target, up))
    back = p - t
    back = back / np.linalg.norm(back)
    right = np.cross(u, back)
    if np.linalg.norm(right) < 1e-9:
        right = np.array([1.0, 0.0, 0.0])
    right = right / np.linalg.norm(right)
    true_up = np.cross(back, right)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = right, true_up, back, p
    return m
