"""Sandbox start-up: what running agent code behind the wall costs, against the wall before and none.

Two pieces of agent code, a trivial script and a small build123d part (a
plate with a hole, exported as STL), are each run N times, the variants
alternating in one run of this script:

  walled     this checkout's `run_code`: bubblewrap, the seccomp filter, a
             fresh session keyring, the tmpfs job folder copied out, the task
             group, rlimits, the job log;
  before     the same `run_code` of another revision (default `main`, taken
             with `git archive` into a temporary folder), for today's figures;
  bare       the same code run unsandboxed by the same Python in the same kind
             of job folder (`python -I -B agent_code.py`).

Every variant runs in a fresh helper process (as `studio agent run-code`
does) and is timed inside it, around the run alone. Medians and the ratios
are printed; the goal for the part is at most 1.1x the bare run.
Run: .venv/bin/python bench/bench_sandbox.py [N] [--against REF]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

CODES = {
    "trivial script": "print(sum(range(1000)))\n",
    "build123d part": ("from build123d import Box, Cylinder, Mode, export_stl\n"
                       "plate = Box(0.2, 0.1, 0.01) - Cylinder(0.02, 0.01)\n"
                       "export_stl(plate, 'part.stl')\n"),
}
WALLED = """
import sys, time
sys.path.insert(0, sys.argv[1])
from studio.sandbox.run import run_code
code, job = open(sys.argv[2]).read(), sys.argv[3]
t0 = time.perf_counter()
run = run_code(code, job, time_limit=120)
took = time.perf_counter() - t0
assert run.ok, run.failure()
print(took)
"""


def walled(source: Path, code_file: Path, job: Path) -> float:
    r = subprocess.run([sys.executable, "-c", WALLED, str(source), str(code_file), str(job)], capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(source)})
    if r.returncode != 0:
        sys.exit(f"bench_sandbox: a walled run failed: {r.stderr[-1500:]}")
    return float(r.stdout.split()[-1])


def bare(code: str, job: Path) -> float:
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


def checkout(ref: str, into: Path) -> Path:
    """The `studio` package of revision `ref`, unpacked into `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "studio"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main(n: int, against: str) -> None:
    sys.path.insert(0, str(ROOT))
    from studio.sandbox.bubblewrap import wall_problem
    problem = wall_problem()
    if problem:
        sys.exit(f"bench_sandbox: {problem}; nothing to measure")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        tmp = Path(tmp)
        (tmp / "before").mkdir()
        before_src = checkout(against, tmp / "before")
        print(f"sandbox start-up, {n} runs each, alternating (median seconds; python {sys.version.split()[0]}; "
              f"walled = this checkout {head}, before = {against})")
        for label, code in CODES.items():
            code_file = tmp / f"{label}.py"
            code_file.write_text(code)
            walled(ROOT, code_file, tmp / f"warm-{label}-w")          # warm the page cache for each
            walled(before_src, code_file, tmp / f"warm-{label}-o")
            bare(code, tmp / f"warm-{label}-b")
            now, old, none = [], [], []
            for i in range(n):
                now.append(walled(ROOT, code_file, tmp / f"{label}-{i}-walled"))
                old.append(walled(before_src, code_file, tmp / f"{label}-{i}-before"))
                none.append(bare(code, tmp / f"{label}-{i}-bare"))
            w, o, b = statistics.median(now), statistics.median(old), statistics.median(none)
            print(f"  {label:<15} walled {w:7.3f} s   before {o:7.3f} s   bare {b:7.3f} s   "
                  f"walled/bare {w / b:.2f}x   before/bare {o / b:.2f}x   walled/before {w / o:.2f}x"
                  + ("   [goal <= 1.1x bare]" if "part" in label else ""))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=7)
    ap.add_argument("--against", default="main", help="the revision whose run_code gives today's figures")
    args = ap.parse_args()
    main(args.n, args.against)
