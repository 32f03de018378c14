"""Which bodies a camera sees in a pose, so a review can be bound to them.

The rule is deliberately simple and documented: a body is visible in a camera
if any of the 8 corners of its mesh's bounding box, or the box centre, lies in
front of the camera and projects inside the image. The camera follows
Blender's conventions: it looks down its -Z axis (`look_at`), the focal length
is `lens_mm`, and `sensor_mm` spans the larger image side (sensor fit AUTO).
Occlusion is ignored: a body hidden behind a wall still counts as in view.
A camera that follows a body is placed for the pose first (scene/cameras).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from studio.scene.cameras import placed
from studio.scene.ir import Camera, Scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh, geometry_hash
from studio.scene.pose import Pose
from studio.scene.transforms import invert, look_at

_BOUNDS: dict[tuple[str, str], np.ndarray] = {}


def body_box_points(scene: Scene, project_dir: Path | None = None) -> dict[str, np.ndarray]:
    """Per body, its bounding-box corners and centre in the body frame, (9, 3)."""
    out = {}
    for b in scene.bodies:
        key = (str(project_dir), geometry_hash(b.geometry))
        if key not in _BOUNDS:
            lo, hi = body_mesh(b, project_dir).bounds
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                for z in (lo[2], hi[2])])
            _BOUNDS[key] = np.vstack([corners, (lo + hi) / 2])
        out[b.name] = _BOUNDS[key]
    return out


def in_view(camera: Camera, points: np.ndarray) -> np.ndarray:
    """For world points (N,3), whether each is in front of the camera and inside its image."""
    cam = invert(look_at(camera.position, camera.target))
    p = points @ cam[:3, :3].T + cam[:3, 3]
    depth = -p[:, 2]
    w, h = camera.resolution
    sensor_w = camera.sensor_mm if w >= h else camera.sensor_mm * w / h
    sensor_h = sensor_w * h / w
    safe = np.where(depth > 1e-9, depth, 1.0)
    x = camera.lens_mm * p[:, 0] / safe / sensor_w
    y = camera.lens_mm * p[:, 1] / safe / sensor_h
    return (depth > 1e-9) & (np.abs(x) <= 0.5) & (np.abs(y) <= 0.5)


def visible_bodies(scene: Scene, pose: Pose, cameras: list[str] | None = None,
                   project_dir: Path | None = None) -> list[str]:
    """Sorted names of bodies visible through any of `cameras` (all cameras if None)."""
    world = pose_world(scene, pose.completed(scene))
    cams = [placed(scene.camera(c), world) for c in cameras] if cameras is not None else \
        [placed(c, world) for c in scene.cameras]
    boxes = body_box_points(scene, project_dir)
    seen = []
    for name, pts in boxes.items():
        m = world[name]
        wp = pts @ m[:3, :3].T + m[:3, 3]
        if any(in_view(c, wp).any() for c in cams):
            seen.append(name)
    return sorted(seen)
