"""In-betweens through key poses: position splines, quaternion slerp/squad and
joint-space cubics with ease-in/out.

Every function takes key frames (strictly increasing) and key values and
returns values at the requested frames; at a key frame the result is the key
value exactly, so baked tracks hit their states. The first and last keys have
zero velocity (the motion eases in and out); inner keys get Catmull-Rom
tangents so the motion flows through them.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import quat_conj, quat_from_rotvec, quat_mul, quat_normalize, quat_to_rotvec, slerp


def ease(t: np.ndarray, kind: str = "ease_in_out") -> np.ndarray:
    """Map 0..1 to 0..1: linear, ease_in, ease_out or ease_in_out (smoothstep)."""
    t = np.clip(np.asarray(t, float), 0.0, 1.0)
    if kind == "linear":
        return t
    if kind == "ease_in":
        return t * t
    if kind == "ease_out":
        return 1 - (1 - t) ** 2
    if kind == "ease_in_out":
        return t * t * (3 - 2 * t)
    raise ValueError(f"ease: expected linear, ease_in, ease_out or ease_in_out, got {kind!r}")


def _locate(keys: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interval index of each frame and its local parameter in [0, 1]."""
    keys = np.asarray(keys, float)
    if keys.ndim != 1 or len(keys) < 1 or np.any(np.diff(keys) <= 0):
        raise ValueError(f"key frames must be strictly increasing, got {keys.tolist()}")
    frames = np.clip(np.asarray(frames, float), keys[0], keys[-1])
    if len(keys) == 1:
        return np.zeros(len(frames), int), np.zeros(len(frames))
    i = np.clip(np.searchsorted(keys, frames, side="right") - 1, 0, len(keys) - 2)
    return i, (frames - keys[i]) / (keys[i + 1] - keys[i])


def cubic(keys: np.ndarray, values: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Cubic Hermite through (keys, values) with eased ends; values (K,) or (K,D)."""
    keys = np.asarray(keys, float)
    v = np.asarray(values, float)
    flat = v.ndim == 1
    v = v.reshape(len(keys), -1)
    if len(keys) == 1:
        out = np.repeat(v, len(np.atleast_1d(frames)), axis=0)
        return out[:, 0] if flat else out
    m = np.zeros_like(v)                     # tangents per unit frame; zero at the ends
    if len(keys) > 2:
        m[1:-1] = (v[2:] - v[:-2]) / (keys[2:] - keys[:-2])[:, None]
    i, t = _locate(keys, frames)
    h = (keys[i + 1] - keys[i])[:, None]
    t = t[:, None]
    h00, h10, h01, h11 = 2 * t**3 - 3 * t**2 + 1, t**3 - 2 * t**2 + t, -2 * t**3 + 3 * t**2, t**3 - t**2
    out = h00 * v[i] + h10 * h * m[i] + h01 * v[i + 1] + h11 * h * m[i + 1]
    exact = np.isin(np.asarray(frames, float), keys)
    if exact.any():
        out[exact] = v[np.searchsorted(keys, np.asarray(frames, float)[exact])]
    return out[:, 0] if flat else out


position_spline = cubic
joint_cubic = cubic


def _hemisphere(q: np.ndarray) -> np.ndarray:
    q = quat_normalize(np.asarray(q, float)).copy()
    for k in range(1, len(q)):
        if np.dot(q[k], q[k - 1]) < 0:
            q[k] = -q[k]
    return q


def slerp_keys(keys: np.ndarray, quats: np.ndarray, frames: np.ndarray, kind: str = "ease_in_out") -> np.ndarray:
    """Piecewise slerp between key rotations, eased within each interval."""
    q = _hemisphere(quats)
    if len(q) == 1:
        return np.repeat(q, len(frames), axis=0)
    i, t = _locate(keys, frames)
    return slerp(q[i], q[i + 1], ease(t, kind))


def _log(q: np.ndarray) -> np.ndarray:
    return quat_to_rotvec(q) / 2


def _exp(v: np.ndarray) -> np.ndarray:
    return quat_from_rotvec(2 * v)


def squad(keys: np.ndarray, quats: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Spherical cubic through key rotations (Shoemake's squad), C1 at inner keys."""
    q = _hemisphere(quats)
    if len(q) < 3:
        return slerp_keys(keys, q, frames)
    inv = quat_conj(q)
    s = q.copy()
    for k in range(1, len(q) - 1):
        a = _log(quat_mul(inv[k], q[k + 1])) + _log(quat_mul(inv[k], q[k - 1]))
        s[k] = quat_normalize(quat_mul(q[k], _exp(-a / 4)))
    i, t = _locate(keys, frames)
    t = ease(t, "linear")
    outer, inner = slerp(q[i], q[i + 1], t), slerp(s[i], s[i + 1], t)
    out = slerp(outer, inner, 2 * t * (1 - t))
    exact = np.isin(np.asarray(frames, float), np.asarray(keys, float))
    out[exact] = q[np.searchsorted(np.asarray(keys, float), np.asarray(frames, float)[exact])]
    return out


def interpolate_poses(scene: Scene, keys: list[tuple[int, Pose]], rotation: str = "squad") -> Tracks:
    """Tracks over keys[0].frame .. keys[-1].frame passing exactly through every key pose."""
    keys = sorted(keys, key=lambda kv: kv[0])
    kf = np.array([k for k, _ in keys], float)
    frames = np.arange(int(kf[0]), int(kf[-1]) + 1)
    poses = [p.completed(scene) for _, p in keys]
    roots = {}
    for name in poses[0].roots:
        t = np.array([p.roots[name] for p in poses])
        rot = squad(kf, t[:, 3:], frames) if rotation == "squad" else slerp_keys(kf, t[:, 3:], frames)
        roots[name] = np.concatenate([cubic(kf, t[:, :3], frames), rot], axis=1)
        roots[name][np.isin(frames, kf)] = t          # keys land bit-exact
    joints = {}
    for name in poses[0].joints:
        v = np.array([p.joints[name] for p in poses], float)
        joints[name] = cubic(kf, v, frames)
    return Tracks(int(kf[0]), roots, joints)
