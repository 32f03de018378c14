"""Compare a reopened .blend with the Scene IR and the baked tracks.

The description comes from the worker's `verify` job (inspect_blend): every
mesh object's world matrix and every joint's value at chosen frames. A body
matches when its position is within `tol_m` and its rotation within
`tol_rad` of forward kinematics on the tracks; the hierarchy matches when
each joint's empty sits between its parent and child body.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import tracks_world
from studio.scene.pose import Tracks


def rotation_error(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (radians) of the rotation between two 3x3 rotation matrices."""
    m = a.T @ b
    s = 0.5 * np.linalg.norm([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]])
    return float(np.arctan2(s, (np.trace(m) - 1.0) / 2.0))   # stable near zero, unlike arccos


def compare(scene: Scene, tracks: Tracks, description: dict, frames: list[int],
            tol_m: float = 1e-4, tol_rad: float = 1e-4) -> tuple[list[str], dict]:
    """Problems found (empty if the file matches) and the largest errors seen."""
    problems: list[str] = []
    objects = description.get("objects", {})
    for b in scene.bodies:
        if objects.get(b.name, {}).get("type") != "MESH":
            problems.append(f"body {b.name}: no mesh object of that name in the .blend")
    for j in scene.joints:
        got = description.get("joints", {}).get(j.name)
        if got is None:
            problems.append(f"joint {j.name}: missing from the .blend")
            continue
        if got["parent"] != j.parent or j.child not in got["children"] or got["type"] != j.type:
            problems.append(f"joint {j.name}: expected {j.type} {j.parent} -> {j.child}, "
                            f"found {got['type']} {got['parent']} -> {got['children']}")
    if (description.get("frame_start"), description.get("frame_end")) != (tracks.frame_start, tracks.frame_end):
        problems.append(f"frame range: expected {tracks.frame_start}..{tracks.frame_end}, found "
                        f"{description.get('frame_start')}..{description.get('frame_end')}")
    world = tracks_world(scene, tracks)
    worst_m = worst_rad = 0.0
    for f in frames:
        got = description.get("frames", {}).get(str(f), {}).get("world", {})
        i = f - tracks.frame_start
        for b in scene.bodies:
            if b.name not in got:
                continue
            m = np.asarray(got[b.name], float)
            want = world[b.name][i]
            dm = float(np.linalg.norm(m[:3, 3] - want[:3, 3]))
            dr = rotation_error(m[:3, :3], want[:3, :3])
            worst_m, worst_rad = max(worst_m, dm), max(worst_rad, dr)
            if dm > tol_m or dr > tol_rad:
                problems.append(f"frame {f} body {b.name}: off by {dm:.2e} m, {dr:.2e} rad")
    return problems, {"max_position_error_m": worst_m, "max_rotation_error_rad": worst_rad,
                      "frames": len(frames)}
