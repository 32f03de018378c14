"""The film's look and what it costs: Workbench previews of the doorway at 640x360
with the studio look (shadows from the key light and cavity) against today's flat
look, per frame, alternated and best of two; and one Cycles final frame of the
doorway at 1280x720 with the studio look (key, fill and rim lights, denoising)
against the same frame without them, on one core (the worker's CPU threads set to 1).
Goal: the studio preview costs at most 1.5x the flat one per frame.

On the farm: the same Cycles final frames (the studio look, 1280x720, modest
samples) rendered as one local job on one core, then through a Ray head on
loopback (two `blender` slots, one frame per chunk, one thread per Blender),
each timed as a whole job; frames per minute for both and their ratio, with the
machine's load before and after (the machine is shared: other work slows both).

Run: .venv/bin/python bench/bench_look.py [--frames 24] [--no-cycles] [--farm-frames 4] [--farm-samples 8]
     (only the farm figure: --farm-only)
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_render import make_project  # noqa: E402
from ray_head import loopback_head  # noqa: E402
from studio.jobs import queue, spec as specs  # noqa: E402
from studio.jobs.local import JobWatch, run_job  # noqa: E402


def preview_frame_seconds(project, look: str, res=(640, 360)) -> float:
    """Seconds per frame of the frame stage (first frame written to last)."""
    stamps: list[float] = []

    def on_event(_job_id, e):
        if e.get("stage") == "frame":
            stamps.append(time.perf_counter())

    def build(d):
        spec = specs.video_spec(project, d, resolution=res)
        spec["look"] = look
        return spec
    job = run_job(project, queue.submit(project, "preview", build).id, JobWatch(on_event=on_event))
    assert job.state == "succeeded", job.error
    return (stamps[-1] - stamps[0]) / (len(stamps) - 1)


def cycles_frame_seconds(project, look: str, res=(1280, 720), samples: int = 16) -> float:
    def build(d):
        spec = specs.video_spec(project, d, "film", engine="CYCLES", resolution=res, samples=samples,
                                frame_range=(1001, 1001))
        spec["look"] = look
        spec["threads"] = 1
        return spec
    t = time.perf_counter()
    job = run_job(project, queue.submit(project, "film", build).id)
    assert job.state == "succeeded", job.error
    return time.perf_counter() - t


def film_frames_job(project, first: int, n: int, samples: int, res=(1280, 720)) -> int:
    """A queued Cycles film job of frames first..first+n-1, the studio look, one thread per Blender."""
    def build(d):
        spec = specs.video_spec(project, d, "film", engine="CYCLES", resolution=res, samples=samples,
                                frame_range=(first, first + n - 1))
        spec["look"] = "studio"
        spec["threads"] = 1
        return spec
    return queue.submit(project, "film", build).id


def farm_figures(project, n: int, samples: int) -> None:
    """The same n Cycles frames: one local job on one core, then through the farm on loopback."""
    from studio.jobs.farm import run_farm_job
    load0 = os.getloadavg()
    t = time.perf_counter()
    job = run_job(project, film_frames_job(project, 1001, n, samples))
    assert job.state == "succeeded", job.error
    local = time.perf_counter() - t
    with loopback_head(slots=2, prefix="kpbench") as (farm, _):
        load1 = os.getloadavg()
        t = time.perf_counter()
        job = run_farm_job(project, film_frames_job(project, 1001, n, samples), farm, chunk=1)
        assert job.state == "succeeded", job.error
        remote = time.perf_counter() - t
    load2 = os.getloadavg()
    per_min_local, per_min_farm = 60 * n / local, 60 * n / remote
    print(f"Cycles final frames, doorway 1280x720, studio look, {samples} samples, {n} frames, whole job: "
          f"one core (local runner, 1 thread) {local:.1f} s = {per_min_local:.2f} frames/min; Ray farm on loopback "
          f"(2 blender slots, 1 frame per chunk, 1 thread each) {remote:.1f} s = {per_min_farm:.2f} frames/min; "
          f"farm/one-core ratio {per_min_farm / per_min_local:.2f}x")
    print(f"machine: {os.cpu_count()} cores; load average (1 min) {load0[0]:.1f} before, {load1[0]:.1f} with the "
          f"head up, {load2[0]:.1f} after (the cores are shared; every figure moves with the load)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--no-cycles", action="store_true")
    ap.add_argument("--farm-frames", type=int, default=4)
    ap.add_argument("--farm-samples", type=int, default=8)
    ap.add_argument("--farm-only", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-look-") as tmp:
        project = make_project(Path(tmp), max(args.frames, args.farm_frames))
        if args.farm_only:
            farm_figures(project, args.farm_frames, args.farm_samples)
            project.close()
            return 0
        best = {"flat": 1e9, "studio": 1e9}
        for _round in range(2):
            for look in ("flat", "studio"):
                best[look] = min(best[look], preview_frame_seconds(project, look))
        flat, studio = best["flat"], best["studio"]
        print(f"Workbench preview, doorway 640x360, {args.frames} frames (best of 2): flat {flat * 1000:.0f} ms/frame "
              f"({1 / flat:.1f} frames/s); studio look (shadows + cavity) {studio * 1000:.0f} ms/frame "
              f"({1 / studio:.1f} frames/s); ratio {studio / flat:.2f}x  [goal <= 1.5x]")
        if not args.no_cycles:
            c_flat = cycles_frame_seconds(project, "flat")
            c_studio = cycles_frame_seconds(project, "studio")
            print(f"Cycles final frame, doorway 1280x720, 16 samples, one thread, whole job: key light only "
                  f"{c_flat:.1f} s; studio look (key, fill, rim, denoised) {c_studio:.1f} s (ratio "
                  f"{c_studio / c_flat:.2f}x; {60 / c_studio:.1f} frames/min on one core)")
            farm_figures(project, args.farm_frames, args.farm_samples)
        project.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
