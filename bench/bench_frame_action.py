"""Framing the action: the `frame_action` tool on the doorway film (a copy of
projects/doorway), keeping the robot and the panel whole in view over every baked
frame, as Scene › Camera › Frame the action calls it on the window's thread.

The tool reads the bodies' boxes at every frame with the kinematics run over the
whole film at once (`tracks_world`) and tests every corner with one `in_view`
call per body; baseline, side by side: the same points by `pose_world` frame by
frame, tested frame by frame (what a first version did). Both must give the same
points. Prints seconds for each, the ratio, and the tool call's own time.
Run: .venv/bin/python bench/bench_frame_action.py [ROUNDS]
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from studio.scene.io import load_scene
from studio.scene.kinematics import pose_world
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.timeline.shown import pose_at
from studio.timeline.storyboard import list_states
from studio.timeline.visibility import body_box_points
from studio.tools.box import ToolBox
from studio.tools.camera_tools import world_points

ROOT = Path(__file__).resolve().parents[1]
BODIES = ["panel", "pelvis", "torso", "head"]


def per_frame(scene, project_dir, bodies, film, states, frames):
    boxes = body_box_points(scene, project_dir)
    out = {b: [] for b in bodies}
    for f in frames:
        world = pose_world(scene, pose_at(scene, film, states, f))
        for b in bodies:
            out[b].append(boxes[b] @ world[b][:3, :3].T + world[b][:3, 3])
    return {b: np.asarray(v) for b, v in out.items()}


def main(rounds: int = 3) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "doorway"
        shutil.copytree(ROOT / "projects" / "doorway", path, ignore=shutil.ignore_patterns("jobs"))
        with Project.open(path) as project:
            scene, film, states = load_scene(project), load_film_tracks(project), list_states(project)
            frames = list(range(film.frame_start, film.frame_end + 1))
            bodies = [b for b in BODIES if b in scene.body_names]
            body_box_points(scene, project.path)          # meshes read once, for both
            fast = slow = float("inf")
            for _ in range(rounds):
                t = time.perf_counter()
                a = world_points(scene, project.path, bodies, film, states, frames)
                fast = min(fast, time.perf_counter() - t)
                t = time.perf_counter()
                b = per_frame(scene, project.path, bodies, film, states, frames)
                slow = min(slow, time.perf_counter() - t)
            assert all(np.allclose(a[k], b[k], atol=1e-9) for k in bodies), "the two disagree"
            box = ToolBox(project, actor="person")
            t = time.perf_counter()
            out = box.call("frame_action", {"name": "cam_bench", "bodies": bodies})
            cold = time.perf_counter() - t
            t = time.perf_counter()                 # the window's second framing: the tool layer loaded
            box.call("frame_action", {"name": "cam_bench_2", "bodies": bodies})
            call = time.perf_counter() - t
    load = os.getloadavg()[0]
    print(f"doorway film, {len(frames)} frames, {len(bodies)} bodies (load {load:.2f})")
    print(f"  box points over the film, whole-film kinematics: {fast * 1000:8.1f} ms")
    print(f"  the same, frame by frame (baseline):             {slow * 1000:8.1f} ms   ratio {slow / fast:5.1f}x")
    print(f"  frame_action tool call, first in the process:    {cold * 1000:8.1f} ms   {out.result['in_view']}")
    print(f"  frame_action tool call, the tool layer loaded:   {call * 1000:8.1f} ms   (goal: under 500 ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
