"""The film's look and what it costs: Workbench previews of the doorway at 640x360
with the studio look (shadows from the key light and cavity) against today's flat
look, per frame, alternated and best of two; and one Cycles final frame of the
doorway at 1280x720 with the studio look (key, fill and rim lights, denoising)
against the same frame without them, on one core (the worker's CPU threads set to 1).
Goal: the studio preview costs at most 1.5x the flat one per frame.

Run: .venv/bin/python bench/bench_look.py [--frames 24] [--no-cycles]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_render import make_project  # noqa: E402
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--no-cycles", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-look-") as tmp:
        project = make_project(Path(tmp), args.frames)
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
        project.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
