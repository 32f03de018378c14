"""Repairs of baked motion: proposals per second and time to a passing film,
each candidate re-baked and re-verified on the touched segments plus a margin
(the studio's way) against re-baking and re-verifying the whole film per
candidate (the baseline), side by side on fresh copies of the same projects.

Films: a long one (SEGMENTS interpolated segments of a crate through a
doorway and CRATES other crates circling clear of it; one segment's path
clips a jamb), the single-pass baseline of a three-state passage flown
straight through the wall (examples/baseline.py, built through the tool layer
with signed reviews as tests/motion_films.py does), and copies of the
committed single-pass baselines named in BASELINES (default: crates,
dog_paper, marble_run, doorway). Each is taken through the batch loop
(`--until-pass --approve-verified`, at most ROUNDS rounds) in both modes; a
film that does not pass within them says so ("passes no").
Run: .venv/bin/python bench/bench_repair_motion.py [SEGMENTS] [CRATES] [BASELINES] [ROUNDS]
     e.g. bench/bench_repair_motion.py 20 8 crates,doorway 12
"""
from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))
sys.path.insert(0, str(ROOT / "tests"))

import motion_films as mf  # noqa: E402

from studio.repair.film_loop import repair_film  # noqa: E402
from studio.repair.motion_repair import propose_film  # noqa: E402
from studio.repair.motion_trial import FilmTrial  # noqa: E402
from studio.tools.box import ToolBox  # noqa: E402
from studio.examples.baseline import single_pass  # noqa: E402
from studio.store.project import Project  # noqa: E402


def long_film(path: Path, segments: int, crates: int) -> Path:
    project = Project.create(path, name="long", fps=24, frame_start=1001)
    box = ToolBox(project, actor=mf.REVIEWER)
    mf._body(box, "floor", [12, 12, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    mf._body(box, "jamb_l", [0.1, 1.2, 2.0], [0, 0.9, 1.0, 1, 0, 0, 0], kind="static")
    mf._body(box, "jamb_r", [0.1, 1.2, 2.0], [0, -0.9, 1.0, 1, 0, 0, 0], kind="static")
    mf._body(box, "crate", [0.2, 0.2, 0.2], [-1, 0, 1.0, 1, 0, 0, 0], flags=["self_propelled"])
    for i in range(crates):
        mf._body(box, f"drone_{i}", [0.15, 0.15, 0.15], [3, 0, 1, 1, 0, 0, 0], flags=["self_propelled"])
    mf._camera(box)
    frames = [1001 + 24 * k for k in range(segments + 1)]
    bad = segments // 2
    plan = mf.plan([(f"k{k}", f) for k, f in enumerate(frames)], ["crate"], [],
                   [{"segment": f"k{k}..k{k + 1}", "tool": "interpolate", "params": {}} for k in range(segments)])
    plan["shots"][0]["end"] = frames[-1]
    box.call("set_plan", {"plan": plan})
    for k, f in enumerate(frames):
        y = 0.25 if k in (bad, bad + 1) else 0.0
        roots = {"crate": [-1 if k % 2 == 0 else 1, y, 1.0, 1, 0, 0, 0]}
        for i in range(crates):
            a = 2 * math.pi * (k + i / max(crates, 1)) / 6
            roots[f"drone_{i}"] = [3 + 1.5 * math.cos(a), 3 * (i - crates / 2) / max(crates, 1), 1.0 + 0.3 * (i % 3),
                                   1, 0, 0, 0]
        mf._key(box, f"k{k}", f, roots)
    for k in range(segments):
        box.call("author_segment", {"segment": f"k{k}..k{k + 1}"})
    project.close()
    return path


def baseline_film(path: Path) -> Path:
    mf.doorway_source(path.parent / "passage").close()
    return single_pass(path.parent / "passage", path)


def committed_baseline(name: str, path: Path) -> Path:
    """A copy of the committed single-pass baseline of an example."""
    shutil.copytree(ROOT / "projects" / f"{name}-single-pass", path)
    return path


def _copy(src: Path, dst: Path) -> None:
    """A copy of the project, with reviewer keys of its own (copies share the project's id, and a
    signer remembers how far it signed each project's log)."""
    shutil.copytree(src, dst)
    os.environ["XDG_CONFIG_HOME"] = str(dst.parent / f"config-{dst.name}")


def proposals_per_second(src: Path, work: Path, whole: bool) -> tuple[float, float, int, int, float]:
    """Proposals and candidates verified per second once the film is verified (that first
    verification, the same in both modes, is timed apart)."""
    dst = work / ("whole" if whole else "interval")
    _copy(src, dst)
    with Project.open(dst) as project:
        t0 = time.perf_counter()
        trial = FilmTrial(project, whole=whole)
        t1 = time.perf_counter()
        made = propose_film(project, store=False, trial=trial)
        dt = time.perf_counter() - t1
    return len(made.proposals) / dt, made.tried / dt, len(made.proposals), made.tried, t1 - t0


def time_to_pass(src: Path, work: Path, whole: bool, rounds: int) -> tuple[float, int, int, bool]:
    dst = work / ("pass-whole" if whole else "pass-interval")
    _copy(src, dst)
    with Project.open(dst) as project:
        t0 = time.perf_counter()
        result = repair_film(project, until_pass=True, approve_verified=True, max_rounds=rounds, whole=whole)
        dt = time.perf_counter() - t0
    return dt, len(result.rounds), result.applied, result.passing


def main() -> None:
    segments = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    crates = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    baselines = sys.argv[3].split(",") if len(sys.argv) > 3 else ["crates", "dog_paper", "marble_run", "doorway"]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")      # reviewer keys of this run only
        films = {f"long ({segments} segments, {crates + 1} moving bodies)": long_film(tmp / "long", segments, crates),
                 "single-pass baseline (passage)": baseline_film(tmp / "base" / "baseline")}
        for name in baselines:
            films[f"single-pass baseline ({name}, committed)"] = committed_baseline(name, tmp / name / "base")
        print(f"{'film':<44} {'mode':<9} {'verify s':>8} {'proposals':>9} {'tried':>6} {'prop/s':>8} "
              f"{'tried/s':>8} {'to pass s':>10} {'rounds':>6} {'applied':>7} {'passes':>6}")
        for number, (name, src) in enumerate(films.items()):
            figures = {}
            for whole in (False, True):
                mode = "whole" if whole else "interval"
                work = tmp / "runs" / f"film-{number}" / mode
                work.mkdir(parents=True)
                pps, tps, n, tried, setup = proposals_per_second(src, work, whole)
                secs, done, applied, passing = time_to_pass(src, work, whole, rounds)
                figures[mode] = (pps, secs)
                print(f"{name:<44} {mode:<9} {setup:>8.2f} {n:>9} {tried:>6} {pps:>8.2f} {tps:>8.2f} {secs:>10.2f} "
                      f"{done:>6} {applied:>7} {'yes' if passing else 'no':>6}", flush=True)
            print(f"{'':<44} ratio     proposals/s x{figures['interval'][0] / max(figures['whole'][0], 1e-9):.1f}, "
                  f"time to pass x{figures['whole'][1] / max(figures['interval'][1], 1e-9):.1f} "
                  f"(interval over whole film)", flush=True)


if __name__ == "__main__":
    main()
