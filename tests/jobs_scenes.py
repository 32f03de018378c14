"""Small scenes for the job and Blender tests: a floor, a base that slides and
an arm on a hinge, one or two cameras, baked tracks and storyboard states."""
from __future__ import annotations

import math

import numpy as np

from studio.scene.io import save_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks
from studio.timeline.film import save_segment
from studio.timeline.plan import save_plan
from studio.timeline.storyboard import State, put_state


def hinge_scene(resolution=(64, 36), two_cameras: bool = False) -> Scene:
    cams = [{"name": "main", "position": [2.5, -3.0, 1.6], "target": [0.3, 0, 0.5], "lens_mm": 35,
             "resolution": list(resolution)}]
    if two_cameras:
        cams.append({"name": "side", "position": [0.2, -4.0, 0.6], "target": [0.2, 0, 0.5], "lens_mm": 50,
                     "resolution": list(resolution)})
    return Scene.from_dict({
        "name": "hinge",
        "materials": [{"name": "grey", "color": [0.6, 0.6, 0.6, 1]}, {"name": "red", "color": [0.8, 0.1, 0.1, 1]}],
        "bodies": [
            {"name": "floor", "kind": "ground", "material": "grey", "geometry": {"source": "box", "size": [4, 4, 0.02]}},
            {"name": "base", "material": "grey", "geometry": {"source": "box", "size": [0.3, 0.3, 0.4]}},
            {"name": "arm", "kind": "link", "material": "red",
             "geometry": {"source": "box", "size": [0.6, 0.08, 0.08], "offset": {"position": [0.3, 0, 0]}}},
        ],
        "joints": [{"name": "elbow", "type": "revolute", "parent": "base", "child": "arm",
                    "origin": {"position": [0, 0, 0.25], "rotation": [1, 0, 0, 0]},
                    "axis": [0, -1, 0], "lower": -0.5, "upper": 2.0}],
        "cameras": cams,
        "rest": {"base": [0, 0, 0.2, 1, 0, 0, 0], "floor": [0, 0, -0.01, 1, 0, 0, 0]},
    })


def pose_at(i: int, n: int) -> Pose:
    t = i / max(n - 1, 1)
    yaw = 0.4 * t
    return Pose({"base": [0.5 * t, 0.1 * t, 0.2, math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)],
                 "floor": [0, 0, -0.01, 1, 0, 0, 0]},
                {"elbow": 1.2 * t})


def film_project(project, n_frames: int = 6, resolution=(64, 36), two_cameras: bool = False):
    """Save the scene, two states at the ends and one baked segment between them. With two
    cameras the plan has two shots, named for what they show: `wide` (through camera `main`)
    up to the last frame, `profile` (through camera `side`) on it."""
    scene = hinge_scene(resolution, two_cameras)
    save_scene(project, scene)
    start = project.frame_start
    end = start + n_frames - 1
    poses = [pose_at(i, n_frames) for i in range(n_frames)]
    tracks = Tracks.from_poses(start, poses)
    put_state(project, scene, State("a", start, poses[0], shot="wide"))
    put_state(project, scene, State("b", end, poses[-1], shot="profile" if two_cameras else "wide"))
    if two_cameras:
        save_plan(project, {"shots": [{"id": "wide", "camera": "main", "start": start, "end": end - 1},
                                      {"id": "profile", "camera": "side", "start": end, "end": end}],
                            "states": [{"id": "a", "frame": start, "shot": "wide"},
                                       {"id": "b", "frame": end, "shot": "profile"}]}, scene)
    save_segment(project, "a..b", tracks, tool="test", bounds_hash="x")
    return scene, tracks


def near(a, b, tol=1e-4) -> bool:
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), atol=tol))


def approved_film(project, n_frames: int = 6, resolution=(64, 36), two_cameras: bool = False):
    """`film_project` taken through the real gate: both states verified and approved, the
    segment baked through `bake_segment`, the film verified; returns (scene, tracks, reports)."""
    from studio.checks.run import verify_film, verify_state
    from studio.timeline.bake import bake_segment
    from studio.timeline.reviews import record_review
    scene, tracks = film_project(project, n_frames, resolution, two_cameras)
    for sid in ("a", "b"):
        verify_state(project, sid)
        record_review(project, sid, "approve", "reads well", "ana", scene)
    tracks = bake_segment(project, "a..b", tracks, "test", scene=scene)
    return scene, tracks, verify_film(project)


def sink_base_into_floor(project, scene, frames=(2, 3)):
    """Re-bake the segment with the base sunk 15 mm into the floor at some frames: a real penetration."""
    from studio.timeline.bake import bake_segment
    from studio.timeline.film import load_film_tracks
    tracks = load_film_tracks(project)
    for i in frames:
        tracks.roots["base"][i, 2] = 0.185
    return bake_segment(project, "a..b", tracks, "test", scene=scene)
