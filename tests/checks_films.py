"""Small films built from code for the verifier tests: boxes, cards, stacks, carried bodies."""
from __future__ import annotations

import itertools

import numpy as np

from studio.scene.ir import Scene
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Tracks
from studio.scene.transforms import quat_from_axis_angle, quat_to_matrix

IDQ = [1.0, 0.0, 0.0, 0.0]


def box(name, size, kind="rigid", flags=(), **extra):
    return {"name": name, "kind": kind, "flags": list(flags), "geometry": {"source": "box", "size": list(size)},
            **extra}


def scene(bodies, **rest) -> Scene:
    return Scene.from_dict({"bodies": bodies, **rest})


def still(pos, quat=IDQ, n=1) -> np.ndarray:
    """A root track that stays at one pose for n frames."""
    return np.tile([*pos, *quat], (n, 1)).astype(float)


def tracks(frame_start=1, **roots) -> Tracks:
    return Tracks(frame_start, {k: np.asarray(v, float) for k, v in roots.items()})


def meshes(sc: Scene):
    return scene_meshes(sc)


def axis_angle(axis, angle) -> list[float]:
    return quat_from_axis_angle(np.asarray(axis, float), np.asarray(angle, float)).tolist()


def sat_depth(size_a, pose_a, size_b, pose_b) -> float:
    """Exact overlap depth of two boxes by the separating-axis theorem (<= 0: apart)."""
    def frame(size, pose):
        return np.asarray(pose[:3], float), quat_to_matrix(np.asarray(pose[3:], float)), np.asarray(size, float) / 2
    ca, ra, ha = frame(size_a, pose_a)
    cb, rb, hb = frame(size_b, pose_b)
    axes = [ra[:, i] for i in range(3)] + [rb[:, i] for i in range(3)]
    axes += [np.cross(ra[:, i], rb[:, j]) for i, j in itertools.product(range(3), range(3))]
    best = np.inf
    for ax in axes:
        n = np.linalg.norm(ax)
        if n < 1e-9:
            continue
        ax = ax / n
        pa = np.sum(np.abs(ra.T @ ax) * ha)
        pb = np.sum(np.abs(rb.T @ ax) * hb)
        best = min(best, pa + pb - abs(np.dot(cb - ca, ax)))
    return float(best)
