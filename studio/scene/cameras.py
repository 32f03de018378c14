"""Where a camera is at a frame: a following camera keeps its offset from the
body it follows and aims at the point offset from it, frame by frame."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from studio.scene.ir import Camera


def placed(camera: Camera, world: dict[str, np.ndarray]) -> Camera:
    """The camera in the world for one pose (body world matrices (4,4)); a fixed camera as it is."""
    if not camera.follow:
        return camera
    at = np.asarray(world[camera.follow], float)[:3, 3]
    return replace(camera, position=[float(v) for v in at + camera.position],
                   target=[float(v) for v in at + camera.target], follow="")


def camera_path(camera: Camera, world: dict[str, np.ndarray]) -> dict[str, list[list[float]]]:
    """Position and target at every frame, given body world matrices (F,4,4)."""
    at = np.asarray(world[camera.follow], float)[:, :3, 3]
    return {"position": (at + np.asarray(camera.position, float)).tolist(),
            "target": (at + np.asarray(camera.target, float)).tolist()}
