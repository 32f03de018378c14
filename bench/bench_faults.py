"""Faults during a preview render: the studio killed (SIGKILL) at a random frame, then resumed.

A copy of the doorway film is rendered as a 640x360 Workbench preview with
`studio render --preview`, first without interruption (the baseline), then
RUNS times with the studio killed at a random frame and the job resumed with
`studio jobs resume` in a new studio. Every run must end with a complete,
correct MP4: the same number of frames as the baseline, and each decoded
frame's checksum equal to the baseline's (the frame PNGs too). Printed per
run: the kill frame, how long the orphaned worker took to stop, the frames
kept, the resume time (checksums are of pixels: Blender stamps each PNG with
its render date, so the files' bytes differ between any two renders); then the resume time against the full render (ratio)
and the whole cost of an interrupted render (up to the kill + resume) against it.

Run: .venv/bin/python bench/bench_faults.py [--runs 10] [--seed 17] [--project projects/doorway]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import av  # noqa: E402
from PIL import Image  # noqa: E402

from studio.jobs import queue  # noqa: E402
from studio.store.project import Project  # noqa: E402

STUDIO = str(ROOT / ".venv" / "bin" / "studio")
RENDER = ["render", "--preview", "--resolution", "640x360", "--quiet"]


def decoded_checksums(mp4: Path) -> list[str]:
    """sha256 of every decoded frame's RGB pixels, in order."""
    with av.open(str(mp4)) as c:
        return [hashlib.sha256(f.to_ndarray(format="rgb24").tobytes()).hexdigest() for f in c.decode(video=0)]


def png_checksums(folder: Path) -> dict[str, str]:
    """sha256 of every frame PNG's pixels (Blender stamps each file with its render date and time)."""
    out = {}
    for p in sorted(folder.glob("[0-9]*.png")):
        with Image.open(p) as im:
            out[p.name] = hashlib.sha256(im.convert("RGB").tobytes()).hexdigest()
    return out


def newest_job(path: Path) -> queue.Job | None:
    with Project.open(path) as p:
        jobs = queue.list_jobs(p)
    return jobs[-1] if jobs else None


def wait_for_frames(frames_dir: Path, n: int, proc: subprocess.Popen, timeout: float = 600) -> bool:
    """Until `n` finished frames are in `frames_dir` (False if the render ended first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if frames_dir.is_dir() and sum(1 for _ in frames_dir.glob("[0-9]*.png")) >= n:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def worker_gone_after(pid: int | None, since: float, limit: float = 30) -> float:
    while pid and queue.worker_alive(pid) and time.monotonic() - since < limit:
        time.sleep(0.005)
    return time.monotonic() - since


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    out = subprocess.run([STUDIO, *cmd], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"studio {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--project", type=Path, default=ROOT / "projects" / "doorway")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
        path = Path(tmp) / "film"
        shutil.copytree(args.project, path, ignore=shutil.ignore_patterns("jobs", "studio.db-*"))

        # --- baseline: one uninterrupted render
        t = time.perf_counter()
        run([RENDER[0], str(path), *RENDER[1:]])
        full = time.perf_counter() - t
        base = newest_job(path)
        n = len([e for e in base.spec["expected"] if e.startswith("frames/")])
        base_frames = png_checksums(path / "jobs" / str(base.id) / "frames")
        base_mp4 = decoded_checksums(path / "renders" / "preview.mp4")
        assert len(base_mp4) == n == len(base_frames), (len(base_mp4), n, len(base_frames))
        shutil.rmtree(path / "jobs" / str(base.id) / "frames")
        print(f"{args.project.name}: preview 640x360 Workbench, {n} frames; uninterrupted render {full:.1f} s "
              f"({n / full:.1f} frames/s, whole command)")
        print(f"{'run':>3} {'kill at':>8} {'worker stopped':>15} {'kept':>5} {'resume s':>9} {'resumed':>8} "
              f"{'frames':>7}  checksums")

        resumes, totals, stops, bad, last_id = [], [], [], 0, base.id
        for i in range(1, args.runs + 1):
            kill_at = rng.randint(1, n - 1)
            (path / "renders" / "preview.mp4").unlink()
            t = time.perf_counter()
            studio = subprocess.Popen([STUDIO, RENDER[0], str(path), *RENDER[1:]], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
            job = None
            while job is None or job.id == last_id:        # this run's job, once it is queued
                time.sleep(0.05)
                job = newest_job(path)
            last_id = job.id
            frames_dir = path / "jobs" / str(job.id) / "frames"
            if not wait_for_frames(frames_dir, kill_at, studio):
                raise SystemExit(f"run {i}: the render ended before frame {kill_at}")
            os.kill(studio.pid, signal.SIGKILL)
            killed = time.monotonic()
            before = time.perf_counter() - t
            studio.wait()
            stopped = worker_gone_after(newest_job(path).pid, killed)
            kept = sum(1 for _ in frames_dir.glob("[0-9]*.png"))
            t = time.perf_counter()
            out = run(["jobs", str(path), "resume", str(job.id)])
            resume = time.perf_counter() - t
            rendered = out.stdout.count(": frame ")
            mp4 = decoded_checksums(path / "renders" / "preview.mp4")
            frames_ok = png_checksums(frames_dir) == base_frames
            ok = len(mp4) == n and mp4 == base_mp4 and frames_ok and rendered == n - kept
            bad += not ok
            resumes.append(resume)
            totals.append(before + resume)
            stops.append(stopped)
            print(f"{i:>3} {kill_at:>8} {stopped:>13.2f} s {kept:>5} {resume:>9.1f} {rendered:>8} {len(mp4):>7}  "
                  f"{'equal to the uninterrupted run' if ok else 'DIFFER'}")
            shutil.rmtree(frames_dir)

    print(f"runs ending with a complete, correct MP4: {args.runs - bad} of {args.runs}")
    print(f"orphaned worker stopped after the studio's SIGKILL: median {statistics.median(stops):.2f} s, "
          f"max {max(stops):.2f} s   target < 2 s   {'OK' if max(stops) < 2 else 'MISSED'}")
    print(f"resume: median {statistics.median(resumes):.1f} s   ratio resume / full render: "
          f"{statistics.median(resumes) / full:.2f} (median), {min(resumes) / full:.2f}..{max(resumes) / full:.2f}")
    print(f"interrupted render, start to kill + resume: median {statistics.median(totals):.1f} s   "
          f"ratio / full render: {statistics.median(totals) / full:.2f}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
