"""Benchmark: the doorway film's `studio verify` and one film repair round, main's code beside this branch's.

A second worktree of `main` is checked out (detached, in a temporary folder) and both trees are run by
the same Python environment, one after the other, each on its own fresh copies of the projects:
`studio verify projects/doorway` with an empty verifier cache (cold) and again (warm), and one offline
film repair round (`studio agent repair COPY --film --offline`) on a copy of projects/doorway-single-pass,
cold. Printed per step: cpu and wall seconds of each process, its exit code, the verdicts it printed,
and this branch over main.

Run: .venv/bin/python bench/bench_doorway_before_after.py [--main REF]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(cmd, env, cwd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.stdout.close()
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), out


def verdicts(out: str) -> str:
    """The check table's verdict column, or the repair's last lines."""
    rows = [line.split() for line in out.splitlines() if line[:1].isupper() and len(line.split()) >= 3]
    table = [f"{r[0]}={r[1]}" for r in rows if r[1] in ("pass", "fail", "not_applicable", "error")]
    return " ".join(table) if table else " | ".join(out.strip().splitlines()[-2:])[:160]


LAUNCH = ("import sys, runpy; "
          "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]; "
          "sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'studio'; "
          "runpy.run_module(sys.argv.pop(1), run_name='__main__')")


def steps(tree: Path, tmp: Path, label: str):
    """The three steps with the studio of `tree` (the environment's editable install set aside)."""
    env = dict(os.environ, KEYPOSE_CACHE=str(tmp / f"cache-{label}"))
    py = [sys.executable, "-c", LAUNCH, str(tree)]
    probe = LAUNCH.replace("runpy.run_module(sys.argv.pop(1), run_name='__main__')", "import studio; print(studio.__file__)")
    which = subprocess.run([sys.executable, "-c", probe, str(tree)], env=env, capture_output=True,
                           text=True).stdout.strip()
    assert which.startswith(str(tree)), f"{label}: studio imported from {which}, not {tree}"
    film = tmp / f"doorway-{label}"
    shutil.copytree(ROOT / "projects" / "doorway", film)
    out = {}
    out["verify, cold"] = run(py + ["studio.cli", "verify", str(film)], env, tmp)
    out["verify, warm"] = run(py + ["studio.cli", "verify", str(film)], env, tmp)
    copy = tmp / f"doorway-single-pass-{label}"
    shutil.copytree(ROOT / "projects" / "doorway-single-pass", copy)
    out["film repair round (offline), cold"] = run(
        py + ["studio.cli", "agent", "repair", str(copy), "--film", "--offline"],
        dict(env, KEYPOSE_CACHE=str(tmp / f"cache-repair-{label}")), tmp)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--main", default="main", help="the reference to compare against (default: main)")
    args = ap.parse_args(argv)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        before = tmp / "main-tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.main], check=True)
        try:
            rev = subprocess.run(["git", "-C", str(before), "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
            here = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True).stdout.strip()
            a = steps(before, tmp, "main")
            b = steps(ROOT, tmp, "branch")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)])
    print(f"doorway: {args.main} ({rev}) beside this tree ({here}); cpu seconds (wall in brackets), exit code")
    print(f"{'step':38} {'main':>22} {'this tree':>22} {'cpu ratio':>10}")
    for step in a:
        wa, ca, ea, oa = a[step]
        wb, cb, eb, ob = b[step]
        print(f"{step:38} {ca:8.2f} ({wa:7.2f}) [{ea}] {cb:8.2f} ({wb:7.2f}) [{eb}] {cb / ca:9.2f}x")
        print(f"    main:      {verdicts(oa)}")
        print(f"    this tree: {verdicts(ob)}")
    print(f"machine load (1, 5, 15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
