"""Benchmark: `studio scene build` on the doorway project, cold (no mesh cache) against warm (cache hit).

Each run is a fresh `studio` process, as a person would run it. Prints the
median of N runs of each, side by side, and the ratio cold / warm.
Usage: .venv/bin/python bench/scene_build.py [N]
"""
from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from studio.examples.pipeline import replay_stages


def run(exe: Path, project: Path) -> tuple[float, float]:
    """(process wall seconds, seconds the build itself reports)."""
    t0 = time.perf_counter()
    out = subprocess.run([str(exe), "scene", "build", str(project)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    last = out.stdout.strip().splitlines()[-1]
    return wall, float(re.search(r"([\d.]+) s$", last).group(1))


def main(n: int = 3) -> None:
    exe = Path(sys.executable).with_name("studio")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "doorway"
        replay_stages("doorway", project, ("scene",)).close()
        cold, warm = [], []
        for _ in range(n):
            shutil.rmtree(project / "assets" / "meshes")
            cold.append(run(exe, project))
            warm.append(run(exe, project))
    med = lambda runs, i: statistics.median(r[i] for r in runs)  # noqa: E731
    print(f"scene build, doorway (23 bodies, 22,406 triangles), median of {n} fresh processes")
    print(f"{'':20}{'process':>10}{'build':>10}")
    print(f"{'cold (no cache)':20}{med(cold, 0):9.2f}s{med(cold, 1):9.2f}s")
    print(f"{'warm (cache hit)':20}{med(warm, 0):9.2f}s{med(warm, 1):9.2f}s")
    print(f"{'ratio cold/warm':20}{med(cold, 0) / med(warm, 0):9.1f}x{med(cold, 1) / med(warm, 1):9.1f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
