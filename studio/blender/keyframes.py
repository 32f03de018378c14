"""Poses and baked tracks on the Blender objects.

A pose sets each root body's world transform and each joint's value on its
child body (see scene_from_ir for the hierarchy). Tracks become one key per
frame on every channel, with linear interpolation, so the film plays exactly
the baked values at every frame and nothing invented between them.
"""
from __future__ import annotations

import bpy
import numpy as np
from scene_from_ir import look_at


def rotvec_to_quat(v) -> np.ndarray:
    """(…,3) rotation vectors to (…,4) quaternions (w, x, y, z)."""
    v = np.asarray(v, float)
    angle = np.linalg.norm(v, axis=-1, keepdims=True)
    safe = np.where(angle > 1e-12, angle, 1.0)
    axis = np.where(angle > 1e-12, v / safe, [0.0, 0.0, 1.0])
    return np.concatenate([np.cos(angle / 2), np.sin(angle / 2) * axis], axis=-1)


def joint_channels(joint: dict, q: np.ndarray) -> dict[str, np.ndarray]:
    """The child body's local channels for joint values q of shape (F,) or (F,3)."""
    axis = np.asarray(joint["axis"], float)
    n = q.shape[0]
    if joint["type"] == "revolute":
        return {"rotation_axis_angle": np.column_stack([q.reshape(n), np.tile(axis, (n, 1))])}
    if joint["type"] == "prismatic":
        return {"location": q.reshape(n, 1) * axis}
    if joint["type"] == "ball":
        return {"rotation_quaternion": rotvec_to_quat(q.reshape(n, 3))}
    return {}


def apply_pose(objects: dict, ir: dict, pose: dict) -> None:
    """Set a static pose (no keys): root transforms and joint values."""
    for name, t in pose.get("roots", {}).items():
        ob = objects[name]
        ob.location = t[:3]
        ob.rotation_quaternion = t[3:7]
    for j in ir.get("joints", []):
        if j["name"] not in pose.get("joints", {}):
            continue
        q = np.asarray(pose["joints"][j["name"]], float).reshape(1, -1)
        ob = objects[j["child"]]
        for path, values in joint_channels(j, q if j["type"] == "ball" else q.reshape(1)).items():
            setattr(ob, path, values[0].tolist())
    bpy.context.view_layer.update()


def key_channels(ob, frames: np.ndarray, channels: dict[str, np.ndarray]) -> None:
    """One key per frame on each channel, written in bulk."""
    if ob.animation_data is None:
        ob.animation_data_create()
    action = ob.animation_data.action
    if action is None:
        action = bpy.data.actions.new(f"{ob.name}Action")
        ob.animation_data.action = action
    n = len(frames)
    for path, values in channels.items():
        values = np.asarray(values, float).reshape(n, -1)
        setattr(ob, path, values[0].tolist())
        for i in range(values.shape[1]):
            fc = action.fcurve_ensure_for_datablock(ob, path, index=i)
            fc.keyframe_points.clear()
            fc.keyframe_points.add(n)
            co = np.column_stack([frames.astype(float), values[:, i]]).ravel()
            fc.keyframe_points.foreach_set("co", co)
            fc.keyframe_points.foreach_set("interpolation", [LINEAR] * n)
            fc.update()


LINEAR = 1   # bpy enum index of 'LINEAR' in Keyframe.interpolation


def apply_tracks(objects: dict, ir: dict, tracks_path: str) -> tuple[int, int]:
    """Key every baked frame; return the (first, last) frame of the tracks."""
    with np.load(tracks_path) as z:
        start = int(z["frame_start"])
        roots = {k[5:]: z[k] for k in z.files if k.startswith("root:")}
        joints = {k[6:]: z[k] for k in z.files if k.startswith("joint:")}
    n = next(iter([*roots.values(), *joints.values()])).shape[0]
    frames = np.arange(start, start + n)
    for name, t in roots.items():
        t = np.asarray(t, float)
        key_channels(objects[name], frames, {"location": t[:, :3], "rotation_quaternion": _continuous(t[:, 3:7])})
    for j in ir.get("joints", []):
        if j["name"] in joints:
            q = np.asarray(joints[j["name"]], float)
            ch = joint_channels(j, q)
            if "rotation_quaternion" in ch:
                ch["rotation_quaternion"] = _continuous(ch["rotation_quaternion"])
            key_channels(objects[j["child"]], frames, ch)
    return start, start + n - 1


def apply_camera_paths(objects: dict, paths: dict, start: int) -> None:
    """Key following cameras at every frame from their position and target per frame."""
    for name, path in paths.items():
        pos = np.asarray(path["position"], float)
        quats = np.array([list(look_at(p, t)) for p, t in zip(pos.tolist(), path["target"])], float)
        frames = np.arange(start, start + len(pos))
        key_channels(objects[name], frames, {"location": pos, "rotation_quaternion": _continuous(quats)})


def _continuous(q: np.ndarray) -> np.ndarray:
    """Flip quaternion signs so neighbours agree (q and -q are the same rotation)."""
    q = np.array(q, float)
    for i in range(1, len(q)):
        if float(np.dot(q[i], q[i - 1])) < 0:
            q[i] = -q[i]
    return q
