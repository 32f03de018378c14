"""Installer figures: package size, and the frozen app's cold start against the development studio.

Needs a built package (installers/build.sh); without one it says so and exits 0.
Runs side by side, alternating, on a copy of a project: `--version` (process
start to exit) and `open PROJECT` under a private Xvfb (launch to the
"Keypose Studio" window being mapped). Prints medians and the ratio frozen/dev.
    .venv/bin/python bench/bench_installer.py [--runs 3] [--project PATH]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "installer"


def newest_deb() -> Path | None:
    debs = sorted(OUT.glob("keypose-studio_*_amd64.deb"), key=lambda p: p.stat().st_mtime)
    return debs[-1] if debs else None


def time_version(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run([*cmd, "--version"], env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def time_window(cmd: list[str], project: Path, display: str, env: dict, timeout: float = 60.0) -> float:
    """Seconds from launch until a 'Keypose Studio' top-level window is mapped."""
    env = {**env, "DISPLAY": display}
    t0 = time.perf_counter()
    proc = subprocess.Popen([*cmd, "open", str(project)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        while time.perf_counter() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd[0]} open exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
            tree = subprocess.run(["xwininfo", "-display", display, "-root", "-tree"],
                                  capture_output=True, text=True).stdout
            if '"Keypose Studio' in tree:
                return time.perf_counter() - t0
            time.sleep(0.05)
        raise RuntimeError(f"no window within {timeout} s")
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--project", type=Path, help="a project to open (default: the shipped example)")
    args = ap.parse_args()
    deb = newest_deb()
    if deb is None:
        print("bench_installer: no package in build/installer; run `make installer` first (skipped)")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="keypose-bench-"))
    xvfb = None
    try:
        subprocess.run(["dpkg", "-x", str(deb), str(tmp / "root")], check=True)
        frozen = [str(tmp / "root" / "opt" / "keypose-studio" / "app" / "keypose-studio")]
        dev = [str(ROOT / ".venv" / "bin" / "studio")]
        src = args.project or next((tmp / "root" / "opt" / "keypose-studio" / "projects").glob("*/"))
        project = tmp / "project"
        shutil.copytree(src, project, ignore=shutil.ignore_patterns("jobs", "studio.db-wal", "studio.db-shm"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KEYPOSE_", "LD_LIBRARY_PATH"))}
        env.update(HOME=str(tmp / "home"), KEYPOSE_SETTINGS=str(tmp / "home" / "settings.json"))
        display = f":{150 + os.getpid() % 50}"
        xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):     # wait until the display answers
            if subprocess.run(["xwininfo", "-display", display, "-root"], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        first = time_version(frozen, env)        # the first run after unpacking: files not yet cached
        figures = {"version": ([], []), "window": ([], [])}
        for _ in range(args.runs):
            for i, cmd in enumerate((frozen, dev)):
                figures["version"][i].append(time_version(cmd, env))
                figures["window"][i].append(time_window(cmd, project, display, env))
        size_mb = deb.stat().st_size / 2**20
        installed = subprocess.run(["dpkg-deb", "-f", str(deb), "Installed-Size"], capture_output=True, text=True)
        print(f"package            {deb.name}: {size_mb:.0f} MB, {int(installed.stdout) / 1024:.0f} MB installed")
        print(f"frozen --version   first run after unpack {first:.2f} s")
        for name, (f, d) in figures.items():
            mf, md = statistics.median(f), statistics.median(d)
            print(f"{name:<18} frozen {mf:.2f} s   dev (.venv) {md:.2f} s   ratio frozen/dev {mf / md:.2f}  "
                  f"(median of {len(f)}, project {src.name})")
        return 0
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
