"""Benchmark: verifying with the between-frames checks against per-frame verifying, same run.

On copies of the five example films (projects/doorway, marble_run, dog_paper, crates, shelving):
each film's scene, meshes, tracks, plan and states are read once, then every verifier runs on
it, alternately with the between-frames checks (NoPenetration's sweep and the events' search
between frames) and without them (the same verifiers with both replaced by nothing: per-frame
verifying as before they existed), ROUNDS times each; the medians and their ratio are printed per
film, for all of them together (goal: no more than 1.3x) and as the geometric mean of the films'
ratios (the sum is led by the slowest film). The first run of each, which prepares the
shapes both share, is not counted. Also the sweep's own seconds (median), its probes (exact pair
queries between frames), the ratio of the process's CPU seconds (medians; steadier than the wall
clock on a loaded machine), and the machine's load.
Run: .venv/bin/python bench/bench_between.py [ROUNDS] [NAME ...] [--against REF]
--against REF: the same bench on REF's code (a temporary detached worktree of it, or REF itself where it is
a folder of the code, such as a `git archive` of a commit) beside this tree's,
film by film in turn in one run (each in its own process, REF first), both tables printed.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

from studio.checks import events, penetration  # noqa: E402
from studio.checks.run import run_checks, storyboard_states, tool_attachments  # noqa: E402
from studio.scene.io import load_scene  # noqa: E402
from studio.scene.meshes import scene_meshes  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.film import load_film_tracks  # noqa: E402

FILMS = ["doorway", "marble_run", "dog_paper", "crates", "shelving"]
ROOT = Path(__file__).resolve().parent.parent / "projects"


@contextmanager
def per_frame_only():
    """The verifiers as they were before the between-frames checks: no sweep, no search between frames."""
    saved = penetration.sweep, events.first_contact, events.first_near
    assert saved[0] is timed_sweep
    penetration.sweep = lambda film: ([], {"frame_pairs_with_penetration": 0, "frame_pairs_unsettled": 0})
    events.first_contact = lambda *a, **k: None
    events.first_near = lambda *a, **k: None
    try:
        yield
    finally:
        penetration.sweep, events.first_contact, events.first_near = saved


def inputs(name: str, tmp: Path):
    src = ROOT / name
    dst = tmp / name
    shutil.copytree(src, dst)
    with Project.open(dst) as project:
        scene = load_scene(project)
        tracks = load_film_tracks(project)
        plan = project.get_doc("plan")
        states = [(f, p.completed(scene), i) for f, p, i in storyboard_states(project)]
        return dict(scene=scene, meshes=scene_meshes(scene, project.path), tracks=tracks, plan=plan,
                    states=states, attachments=tool_attachments(project))


SWEPT = [0.0]


def timed_sweep(film):
    t0 = time.perf_counter()
    try:
        return SWEEP(film)
    finally:
        SWEPT[0] += time.perf_counter() - t0


SWEEP = penetration.sweep
penetration.sweep = timed_sweep


CPU = [0.0]


def run(film: dict) -> tuple[float, dict]:
    t0, c0 = time.perf_counter(), time.process_time()
    reports = run_checks(film["scene"], film["meshes"], film["tracks"], plan=film["plan"], states=film["states"],
                         attachments=film["attachments"])
    seconds = time.perf_counter() - t0
    CPU[0] = time.process_time() - c0
    return seconds, {r.name: r for r in reports}


def against(ref: str, argv: list[str]) -> None:
    """This bench on REF's code and on this tree's, film by film in turn, in one run."""
    import subprocess
    root = Path(__file__).resolve().parent.parent
    rounds = [a for a in argv if a.isdigit()][:1] or ["5"]
    names = [a for a in argv if not a.isdigit()] or FILMS
    rows: dict[str, list[str]] = {"ref": [], "here": []}
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(ref).is_dir()           # a tree of code already on disk (a `git archive` of a commit)
        tree = Path(ref).resolve() if given else Path(tmp) / "ref"
        if not given:
            subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
        try:
            revs = {k: subprocess.run(["git", "-C", str(t), "rev-parse", "--short", "HEAD"], capture_output=True,
                                      text=True).stdout.strip() or "a tree" for k, t in (("ref", tree), ("here", root))}
            for name in names:
                for key, t in (("ref", tree), ("here", root)):
                    out = subprocess.run([sys.executable, str(t / "bench" / "bench_between.py"), *rounds, name],
                                         cwd=t, env=dict(os.environ, PYTHONPATH=str(t)), capture_output=True,
                                         text=True)
                    if out.returncode:
                        raise SystemExit(f"{key} on {name}: {out.stderr.strip().splitlines()[-1:]}")
                    lines = out.stdout.splitlines()
                    rows[key] += ([lines[1]] if not rows[key] else []) + [ln for ln in lines if ln.startswith(name)]
        finally:
            if not given:
                subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)])
    for key, label in (("ref", f"{ref} ({revs['ref']})"), ("here", f"this tree ({revs['here']})")):
        print(f"-- {label}")
        print("\n".join(rows[key]))
        got = [ln.split() for ln in rows[key][1:]]
        a, b = sum(float(g[2]) for g in got), sum(float(g[3]) for g in got)
        print(f"{'all':<12} {'':>6} {a:>12.3f} {b:>10.3f} {b / a:>6.2f}  (goal <= 1.30); per film "
              f"{statistics.geometric_mean([float(g[3]) / float(g[2]) for g in got]):.2f} (geometric mean)")
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main(argv: list[str]) -> None:
    if "--against" in argv:
        i = argv.index("--against")
        return against(argv[i + 1], argv[:i] + argv[i + 2:])
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 5
    names = [a for a in argv if not a.isdigit()] or FILMS
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; {rounds} rounds")
    print(f"{'film':<12} {'frames':>6} {'per-frame s':>12} {'between s':>10} {'ratio':>6} {'sweep s':>8} "
          f"{'probes':>7} {'cpu ratio':>9}  verdicts (per frame / between)")
    total_a, total_b, ratios, cpu_a, cpu_b = 0.0, 0.0, [], 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            film = inputs(name, Path(tmp))
            with per_frame_only():
                run(film)                                     # prepares the shapes both share
            _, first = run(film)
            a, b, swept, ca, cb = [], [], [], [], []
            for _ in range(rounds):
                with per_frame_only():
                    sa, ra = run(film)
                a.append(sa)
                ca.append(CPU[0])
                SWEPT[0] = 0.0
                sb, rb = run(film)
                b.append(sb)
                cb.append(CPU[0])
                swept.append(SWEPT[0])
            ma, mb = statistics.median(a), statistics.median(b)
            total_a += ma
            total_b += mb
            cpu_a += statistics.median(ca)
            cpu_b += statistics.median(cb)
            ratios.append(mb / ma)
            pen = rb["NoPenetration"]
            sweep = pen.metrics.get("sweep", {})

            def verdicts(r):
                return "/".join(r[n].verdict for n in ("NoPenetration", "EventsSatisfied"))
            assert "error" not in verdicts(ra) + verdicts(rb), (name, verdicts(ra), verdicts(rb))
            print(f"{name:<12} {film['tracks'].n_frames:>6} {ma:>12.3f} {mb:>10.3f} {mb / ma:>6.2f} "
                  f"{statistics.median(swept):>8.3f} {sweep.get('probes', 0):>7} "
                  f"{statistics.median(cb) / statistics.median(ca):>9.2f}  {verdicts(ra)} / {verdicts(rb)}")
    print(f"{'all':<12} {'':>6} {total_a:>12.3f} {total_b:>10.3f} {total_b / total_a:>6.2f} {'':>8} {'':>7} "
          f"{cpu_b / cpu_a:>9.2f}  (goal <= 1.30)")
    print(f"{'per film':<12} {'':>6} {'':>12} {'':>10} {statistics.geometric_mean(ratios):>6.2f}  "
          f"(geometric mean of the ratios, worst {max(ratios):.2f}: the sum is led by the slowest film)")
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main(sys.argv[1:])
