"""glTF animation samplers evaluated at the film's frame times: LINEAR, STEP and CUBICSPLINE.

Times before the first key hold the first value, after the last key the last
value (the spec's clamping). Rotations are glTF quaternions [x y z w]: LINEAR
is spherical, CUBICSPLINE is the Hermite spline of the components, normalized.
"""
from __future__ import annotations

import numpy as np

from studio.scene.transforms import slerp


def _key(t: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Index of the key at or before each time. Key times are float32 in the file: one that rounds to
    a hair after a frame's time (1/24 s is not exact) still belongs to that frame."""
    slack = 4 * np.finfo(np.float32).eps * np.maximum(np.abs(times), 1.0)
    return np.clip(np.searchsorted(t, times + slack, side="right") - 1, 0, len(t) - 1)


def sample(t: np.ndarray, v: np.ndarray, interp: str, times: np.ndarray, rotation: bool = False) -> np.ndarray:
    """Values of one channel at `times`; for CUBICSPLINE, v holds (in-tangent, value, out-tangent) per key."""
    if interp == "CUBICSPLINE":
        return _cubic(t, v.reshape(len(t), 3, -1), times, rotation)
    k = _key(t, times)
    k1 = np.minimum(k + 1, len(t) - 1)
    if interp == "STEP" or len(t) == 1:
        return v[k]
    u = _fraction(t, k, k1, times)
    if rotation:
        q0 = np.concatenate([v[k, 3:4], v[k, :3]], axis=1)
        q1 = np.concatenate([v[k1, 3:4], v[k1, :3]], axis=1)
        q = slerp(q0, q1, u)
        return np.concatenate([q[:, 1:], q[:, :1]], axis=1)
    return v[k] + u[:, None] * (v[k1] - v[k])


def _fraction(t, k, k1, times) -> np.ndarray:
    span = np.where(t[k1] > t[k], t[k1] - t[k], 1.0)
    u = np.clip((times - t[k]) / span, 0.0, 1.0)
    return np.where(k1 == k, 0.0, u)


def _cubic(t: np.ndarray, v: np.ndarray, times: np.ndarray, rotation: bool) -> np.ndarray:
    """The spec's cubic Hermite spline: key k's value and out-tangent, key k+1's in-tangent and value."""
    k = _key(t, times)
    k1 = np.minimum(k + 1, len(t) - 1)
    s = _fraction(t, k, k1, times)[:, None]
    td = (t[k1] - t[k])[:, None]
    s2, s3 = s * s, s * s * s
    out = ((2 * s3 - 3 * s2 + 1) * v[k, 1] + td * (s3 - 2 * s2 + s) * v[k, 2]
           + (-2 * s3 + 3 * s2) * v[k1, 1] + td * (s3 - s2) * v[k1, 0])
    if rotation:
        n = np.linalg.norm(out, axis=1, keepdims=True)
        out = out / np.where(n > 0, n, 1.0)
    return out
