"""Sandbox start-up: what running agent code behind bubblewrap costs.

Two pieces of agent code, a trivial script and a small build123d part (a
plate with a hole, exported as STL), are each run N times, alternating: as
the studio runs agent code (`run_code`: bubblewrap, task group, rlimits, the
job-folder watch, the job log) and, as the baseline, the same code run
unsandboxed by the same Python in the same kind of job folder
(`python -I -B agent_code.py`). Medians and the ratio are printed; the goal
for the part is under 1.5x.
Run: .venv/bin/python bench/bench_sandbox.py [N]
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from studio.sandbox.bubblewrap import wall_problem  # noqa: E402
from studio.sandbox.run import run_code  # noqa: E402

CODES = {
    "trivial script": "print(sum(range(1000)))\n",
    "build123d part": ("from build123d import Box, Cylinder, Mode, export_stl\n"
                       "plate = Box(0.2, 0.1, 0.01) - Cylinder(0.02, 0.01)\n"
                       "export_stl(plate, 'part.stl')\n"),
}


def sandboxed(code: str, job: Path) -> float:
    t0 = time.perf_counter()
    run = run_code(code, job, time_limit=120)
    took = time.perf_counter() - t0
    assert run.ok, run.failure()
    return took


def unsandboxed(code: str, job: Path) -> float:
    job.mkdir(parents=True)
    (job / "agent_code.py").write_text(code)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(job), "TMPDIR": str(job), "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-I", "-B", "agent_code.py"], cwd=job, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True)
    took = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    return took


def main(n: int) -> None:
    problem = wall_problem()
    if problem:
        sys.exit(f"bench_sandbox: {problem}; nothing to measure")
    print(f"sandbox start-up, {n} runs each, alternating (median seconds; python {sys.version.split()[0]})")
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        for label, code in CODES.items():
            sandboxed(code, Path(tmp) / f"warm-{label}-a")        # warm the page cache for both
            unsandboxed(code, Path(tmp) / f"warm-{label}-b")
            walled, bare = [], []
            for i in range(n):
                walled.append(sandboxed(code, Path(tmp) / f"{label}-{i}-walled"))
                bare.append(unsandboxed(code, Path(tmp) / f"{label}-{i}-bare"))
            w, b = statistics.median(walled), statistics.median(bare)
            print(f"  {label:<15} sandboxed {w:7.3f} s   unsandboxed {b:7.3f} s   "
                  f"overhead {w - b:+.3f} s   ratio {w / b:.2f}x"
                  + ("   [goal < 1.5x]" if "part" in label else ""))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
