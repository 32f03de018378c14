"""Render speed of the Blender worker on the doorway scene (CAD meshes), 640x360 Workbench.

Figures, each beside its baseline, run side by side:
- storyboard still: a warm worker (one long-lived worker process taking one
  spec after another; the time is the request's round trip) against a cold
  job (a fresh worker process per still, as the job queue runs it);
- preview video: frames per second of the frame stage (first to last frame
  written), and of the whole job with start-up and H.264 encoding, against
  the same frames rendered as separate warm stills;
- the worker's peak memory (largest resident set of any worker process).
Targets (DESIGN.md): warm still <= 2 s, preview >= 10 frames/s, peak <= 1.5 GB.

Run: .venv/bin/python bench/bench_render.py [--frames 48]
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from studio.examples.pipeline import replay_stages  # noqa: E402
from studio.jobs import queue, spec as specs  # noqa: E402
from studio.jobs.local import JobWatch, run_job  # noqa: E402
from studio.jobs.warm import WarmWorker  # noqa: E402
from studio.scene.io import load_scene  # noqa: E402
from studio.scene.pose import Pose, Tracks  # noqa: E402
from studio.timeline.film import save_segment  # noqa: E402
from studio.timeline.storyboard import State, put_state  # noqa: E402


def make_project(folder: Path, n_frames: int):
    project = replay_stages("doorway", folder / "doorway", ("scene",))     # the scene from its calls file
    scene = load_scene(project)
    rest = Pose.rest(scene)
    put_state(project, scene, State("rest", 1001, rest, shot="cam_main"))
    poses = []
    for i in range(n_frames):     # the panel slides along x: every frame differs
        p = rest.copy()
        p.roots["panel"][0] += 0.01 * i
        poses.append(p)
    save_segment(project, "rest..end", Tracks.from_poses(1001, poses), tool="bench", bounds_hash="bench")
    return project


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--stills", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        project = make_project(Path(tmp), args.frames)
        res = (640, 360)

        # --- stills: cold jobs (baseline) and a warm worker, alternating
        cold, warm = [], []
        with WarmWorker() as worker:
            first = None
            for i in range(args.stills + 1):
                job = queue.submit(project, "still", lambda d: specs.still_spec(project, d, ["rest"], ["cam_main"],
                                                                                 resolution=res))
                spec_path = queue.job_dir(project, job.id) / "spec.json"
                t = time.perf_counter()
                events = worker.run(spec_path)
                dt = time.perf_counter() - t
                assert events[-1]["stage"] == "done", events[-1]
                if i == 0:
                    first = dt          # the worker's first request warms bpy's caches
                else:
                    warm.append(dt)
                if i < 3:
                    job = queue.submit(project, "still", lambda d: specs.still_spec(
                        project, d, ["rest"], ["cam_main"], resolution=res))
                    t = time.perf_counter()
                    job = run_job(project, job.id)
                    cold.append(time.perf_counter() - t)
                    assert job.state == "succeeded", job.error

        # --- preview video
        stamps = {}

        def on_event(job_id, e):
            if e.get("stage") == "frame":
                stamps.setdefault("first", time.perf_counter())
                stamps["last"] = time.perf_counter()
                stamps["n"] = stamps.get("n", 0) + 1
            elif e.get("stage") == "build" and "engine" in e:
                stamps["built"] = time.perf_counter()

        job = queue.submit(project, "preview", lambda d: specs.video_spec(project, d, resolution=res))
        t = time.perf_counter()
        job = run_job(project, job.id, JobWatch(on_event=on_event))
        total = time.perf_counter() - t
        assert job.state == "succeeded", job.error
        n = stamps["n"]
        frame_fps = (n - 1) / (stamps["last"] - stamps["first"])
        stage_fps = n / (stamps["last"] - stamps["built"])
        job_fps = n / total
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        project.close()

    warm_med, cold_med = statistics.median(warm), statistics.median(cold)
    print(f"doorway scene, {res[0]}x{res[1]} Workbench, {n} preview frames")
    print(f"still, warm worker (request round trip): median {warm_med:.3f} s over {len(warm)} "
          f"(first request {first:.3f} s)   target <= 2 s   {'OK' if warm_med <= 2 else 'MISSED'}")
    print(f"still, cold job (fresh worker process):   median {cold_med:.3f} s over {len(cold)}")
    print(f"  ratio cold / warm: {cold_med / warm_med:.1f}x")
    print(f"preview frames/s, frame to frame:         {frame_fps:.1f}   target >= 10   "
          f"{'OK' if frame_fps >= 10 else 'MISSED'}")
    print(f"preview frames/s, scene built to last frame: {stage_fps:.1f}")
    print(f"preview frames/s, whole job (start, build, render, H.264): {job_fps:.1f} ({total:.2f} s)")
    print(f"  ratio preview frame rate / warm stills per second: {frame_fps * warm_med:.1f}x")
    print(f"worker peak memory (max RSS of any worker): {peak_mb:.0f} MB   target <= 1536 MB   "
          f"{'OK' if peak_mb <= 1536 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
