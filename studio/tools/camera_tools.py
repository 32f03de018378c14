"""Framing the action: a camera placed so that chosen bodies stay in view over a
frame range, looking along a given direction.

The target is the centre of the bodies' bounding boxes over the range; the
camera backs away from it along the direction just far enough that every
corner of every chosen body's box, at every frame, projects inside the image
with the margin left free. The result is then checked with the same test the
reviews bind their visible sets with (`timeline.visibility.in_view`); a
frame where a body would still leave the image is refused by name, never
clamped away. The poses are what the window shows at each frame
(`timeline.shown`): the baked film, else the key state that holds, else rest.
"""
from __future__ import annotations

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Camera
from studio.scene.kinematics import pose_world, tracks_world
from studio.scene.pose import Pose
from studio.timeline.film import load_film_tracks
from studio.timeline.shown import held_state
from studio.timeline.storyboard import list_states
from studio.timeline.visibility import body_box_points, in_view

from studio.tools.context import ToolContext, ToolOutcome
from studio.tools.errors import ToolRefused
from studio.tools.scene_tools import camera_entry, put_camera

DEFAULT_DIRECTION = (-4.0, 4.0, -1.2)     # the default camera's: from front-right, a little above
NEAR_M = 0.05
MAX_FRAMES = 20_000


def frame_range(project, film, states, given) -> tuple[int, int]:
    """The frames to keep the bodies in view over: as given, else the film's, else the keys'."""
    if given:
        return int(given[0]), int(given[1])
    if film is not None and film.n_frames:
        return film.frame_start, film.frame_end
    if states:
        return states[0].frame, states[-1].frame
    return project.frame_start, project.frame_start


def world_points(scene, project_dir, bodies: list[str], film, states, frames: list[int]) -> dict[str, np.ndarray]:
    """Per body, its box corners and centre in the world at each frame, (F, 9, 3): the film's frames
    through the kinematics at once, the others from the key that holds (each key once)."""
    boxes = body_box_points(scene, project_dir)
    n = len(frames)
    mats = {b: np.empty((n, 4, 4)) for b in bodies}
    baked = [i for i, f in enumerate(frames) if film is not None and film.n_frames and
             film.frame_start <= f <= film.frame_end]
    if baked:
        part = film.slice(frames[baked[0]], frames[baked[-1]])
        world = tracks_world(scene, part)
        for b in bodies:
            mats[b][baked] = world[b][[frames[i] - part.frame_start for i in baked]]
    held: dict[str, list[int]] = {}
    on_film = set(baked)
    for i, f in enumerate(frames):
        if i not in on_film:
            s = held_state(states, f)
            held.setdefault(s.id if s else "", []).append(i)
    by_id = {s.id: s for s in states}
    for sid, idx in held.items():
        pose = by_id[sid].pose.completed(scene) if sid else Pose.rest(scene)
        world = pose_world(scene, pose)
        for b in bodies:
            mats[b][idx] = world[b]
    return {b: np.einsum("fij,pj->fpi", mats[b][:, :3, :3], boxes[b]) + mats[b][:, None, :3, 3] for b in bodies}


def fit_distance(points: np.ndarray, target: np.ndarray, forward: np.ndarray, camera: Camera,
                 margin: float) -> float:
    """How far behind `target` along `forward` the camera must stand for every point to fall inside
    the image, `margin` of it left free on each side (exact for a fixed direction and target)."""
    from studio.scene.transforms import look_at
    basis = look_at(target - forward, target)[:3, :3]       # right, up, back as columns
    rel = points - target
    x, y, ahead = rel @ basis[:, 0], rel @ basis[:, 1], rel @ forward
    w, h = camera.resolution
    sensor_w = camera.sensor_mm if w >= h else camera.sensor_mm * w / h
    sensor_h = sensor_w * h / w
    kx, ky = (0.5 - margin) * sensor_w / camera.lens_mm, (0.5 - margin) * sensor_h / camera.lens_mm
    need = np.maximum(np.abs(x) / kx, np.abs(y) / ky) - ahead
    need = np.maximum(need, NEAR_M - ahead)
    return float(need.max())


def frame_action(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    bodies = list(dict.fromkeys(a["bodies"]))
    for i, b in enumerate(bodies):
        if b not in scene.body_names:
            raise ToolRefused(f"frame_action.bodies[{i}]: no body named {b!r}")
    states = list_states(box.project)
    try:
        film = load_film_tracks(box.project)
    except ValueError:
        film = None
    first, last = frame_range(box.project, film, states, a.get("frames"))
    if last < first:
        raise ToolRefused(f"frame_action.frames: last frame {last} is before first frame {first}")
    if last - first + 1 > MAX_FRAMES:
        raise ToolRefused(f"frame_action.frames: {last - first + 1} frames; at most {MAX_FRAMES}")
    forward = np.asarray(a.get("direction", DEFAULT_DIRECTION), float)
    if np.linalg.norm(forward) < 1e-9:
        raise ToolRefused("frame_action.direction: must not be zero")
    forward = forward / np.linalg.norm(forward)
    if abs(forward[2]) > 0.999:
        raise ToolRefused("frame_action.direction: straight up or down has no horizon; tilt it")
    margin = float(a.get("margin", 0.1))
    probe = Camera(a["name"], lens_mm=float(a.get("lens_mm", 35.0)), sensor_mm=float(a.get("sensor_mm", 36.0)),
                   resolution=list(a.get("resolution", [640, 360])))
    frames = list(range(first, last + 1))
    pts = world_points(scene, box.project.path, bodies, film, states, frames)
    every = np.concatenate([p.reshape(-1, 3) for p in pts.values()])
    target = (every.min(axis=0) + every.max(axis=0)) / 2
    distance = fit_distance(every, target, forward, probe, margin)
    position = target - forward * distance
    cam = Camera(probe.name, [float(v) for v in position], [float(v) for v in target], probe.lens_mm,
                 probe.sensor_mm, probe.resolution)
    out_of_view = [(frames[i], b) for b, p in pts.items()
                   for i in np.nonzero(~in_view(cam, p.reshape(-1, 3)).reshape(p.shape[:2]).all(axis=1))[0]]
    if out_of_view:
        f, b = out_of_view[0]
        raise ToolRefused(f"frame_action: {b} leaves the image at frame {f} even {distance:.2f} m away "
                          f"({len(out_of_view)} body-frames out of view); choose another direction")
    entry = camera_entry({"name": cam.name, "position": cam.position, "target": cam.target,
                          "lens_mm": cam.lens_mm, "sensor_mm": cam.sensor_mm, "resolution": cam.resolution})
    return put_camera(box, "frame_action", a, scene, entry, f"frame {', '.join(bodies)} in {cam.name}",
                      {"camera": cam.name, "position": cam.position, "target": cam.target,
                       "frames": [first, last], "in_view": f"{len(bodies)} bodies whole in view on {len(frames)} frames"})


TOOLS = {"frame_action": frame_action}
