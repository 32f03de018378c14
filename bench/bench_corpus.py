"""Benchmark: `studio verify` on a varied corpus of animated glTF films, each beside a simple exact verifier.

The corpus (bench/corpus_films.py, and the example films exported by bench/corpus_examples.py) is
written to a temporary folder; per film, one after the other as a user would run them:
`studio verify FILM.glb` with an empty verifier cache (cold) and again (warm), each in its own process,
and the simple exact verifier of bench/simple_verifier.py (no code shared with studio/checks: numpy and
Qhull) twice, also in its own processes, with its own queries timed on python-fcl beside it. Printed
per film: bodies, frames, seconds cold and warm for both, the ratios (studio over simple), each
process's peak resident memory, and the agreement of the verdicts: penetrating (frame, pair) and
floating (frame, body), in both / only in the studio / only in the simple verifier. The headline is the
worst film's ratio; goals: warm <= 0.2x, cold <= 1x, process start < 0.1 s.

Run: .venv/bin/python bench/bench_corpus.py [NAME ...] [--no-examples] [--keep DIR] [--before TREE] [--simple-once]
--simple-once: the simple verifier once per film (no second run, no python-fcl pass; fcl prints nan).
--before TREE: also `studio verify` cold and warm with the code of TREE (a source tree of another
revision, e.g. `git worktree add --detach /tmp/before main`), film by film beside this tree's, against
the same simple verifier runs; printed first, and whether its reports (status, evidence, metrics) are
identical to this tree's.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


# Each process is started from a small python of its own, which forks, waits and writes the process's
# rusage: a process forked from this bench would count this bench's own memory (the films it made) as
# its peak, since Linux carries the parent's resident size into the child's maximum.
MEASURE = ("import os, sys, json, time\nt = time.perf_counter()\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[2], sys.argv[2:])\n"
           "_, status, ru = os.wait4(pid, 0)\nopen(sys.argv[1], 'w').write(json.dumps({'code': "
           "os.waitstatus_to_exitcode(status), 'maxrss': ru.ru_maxrss, 'cpu': ru.ru_utime + ru.ru_stime, "
           "'wall': time.perf_counter() - t}))")


# The studio runs its verifiers with one BLAS thread (its products are small, where a second thread
# spends more CPU handing work over than it saves); the simple verifier's products are as small, so it
# runs with one too, or its CPU seconds would carry the threads' cost and flatter the ratios.
SIMPLE_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def run(cmd, env=None):
    """(wall seconds, peak resident MB, exit code, stderr, cpu seconds) of one process."""
    with tempfile.TemporaryDirectory() as tmp:
        got = Path(tmp) / "rusage.json"
        p = subprocess.run([sys.executable, "-S", "-c", MEASURE, str(got), *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=env, text=True)
        r = json.loads(got.read_text()) if got.exists() else {"code": p.returncode, "maxrss": 0, "cpu": 0.0,
                                                                "wall": float("nan")}
    return r["wall"], r["maxrss"] / 1024, r["code"], p.stderr, r["cpu"]


LAUNCH = ("import sys, runpy; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in "
          "getattr(f, '__module__', '')]; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'studio'; "
          "runpy.run_module('studio.cli', run_name='__main__')")


def same_reports(a: Path, b: Path) -> bool:
    """Whether two `studio verify --json` files hold the same reports (status, evidence, metrics)."""
    def strip(path):
        return [{k: v for k, v in r.items() if k != "seconds"} for r in json.loads(path.read_text())["reports"]]
    return strip(a) == strip(b)


def studio_verdicts(path: Path):
    doc = json.loads(path.read_text())
    by = {r["name"]: r for r in doc["reports"]}
    pen = {(e["frame"] - 1, frozenset((e["a"], e["b"]))) for e in by["NoPenetration"]["evidence"]}
    flo = {(e["frame"] - 1, e["body"]) for e in by["Supported"]["evidence"]}
    return pen, flo


def simple_verdicts(path: Path):
    doc = json.loads(path.read_text())
    return ({(f, frozenset((a, b))) for f, a, b in doc["penetration"]}, {(f, b) for f, b in doc["floating"]}, doc)


def agree(a: set, b: set) -> str:
    return f"{len(a & b)}/{len(a - b)}/{len(b - a)}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", help="films to run (default: all)")
    ap.add_argument("--no-examples", action="store_true", help="leave out the five example films")
    ap.add_argument("--keep", type=Path, help="write the films here and keep them")
    ap.add_argument("--simple-once", action="store_true",
                    help="run the simple verifier once (not twice, and without its python-fcl pass): long films")
    ap.add_argument("--before", type=Path, help="also verify with the code of this source tree, beside this one")
    args = ap.parse_args(argv)
    import corpus_films
    films = dict(corpus_films.FILMS)
    if not args.no_examples:
        import corpus_examples
        films.update(corpus_examples.FILMS)
    if args.names:
        films = {n: films[n] for n in args.names}
    tmp = tempfile.TemporaryDirectory()
    folder = args.keep or Path(tmp.name)
    folder.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    load = os.getloadavg()
    starts = [run([py, "-m", "studio.cli", "verify", str(folder / "absent.glb")]) for _ in range(5)]
    start, start_cpu = min(r[0] for r in starts), min(r[4] for r in starts)
    rows = []
    print("seconds are cpu seconds of the process (user + system; wall in brackets: the machine is shared)")
    print(f"{'film':24} {'bodies':>6} {'frames':>6} | {'studio cold':>17} {'warm':>15} | {'simple':>15} {'fcl':>5} | "
          f"{'cold x':>6} {'warm x':>6} | {'MB studio':>9} {'simple':>6} | {'pen both/studio/simple':>22} "
          f"{'floating':>14}")
    before_rows = []
    for name, make in films.items():
        film = make()
        glb, truth = film.write(folder)
        if args.before:
            env = dict(os.environ, KEYPOSE_CACHE=str(folder / f"cache-before-{name}"))
            bout = folder / f"{name}.before.json"
            launch = [py, "-c", LAUNCH, str(args.before.resolve()), "verify", str(glb), "--json", str(bout)]
            before_rows.append((run(launch, env), run(launch, env), bout))
            subprocess.run(["rm", "-rf", str(folder / f"cache-before-{name}")])
        env = dict(os.environ, KEYPOSE_CACHE=str(folder / f"cache-{name}"))
        out = folder / f"{name}.studio.json"
        cold = run([py, "-m", "studio.cli", "verify", str(glb), "--json", str(out)], env)
        warm = run([py, "-m", "studio.cli", "verify", str(glb), "--json", str(out)], env)
        sout = folder / f"{name}.simple.json"
        s1 = run([py, str(HERE / "simple_verifier.py"), str(truth), str(sout)], SIMPLE_ENV)
        s2 = s1 if args.simple_once else run([py, str(HERE / "simple_verifier.py"), str(truth), str(sout)],
                                             SIMPLE_ENV)
        fout = folder / f"{name}.fcl.json"
        if not args.simple_once:
            run([py, str(HERE / "simple_verifier.py"), str(truth), str(fout), "--fcl"], SIMPLE_ENV)
        fcl = json.loads(fout.read_text()).get("fcl_seconds", float("nan")) if fout.exists() else float("nan")
        if not out.exists() or s1[2] != 0:
            print(f"{name}: failed: studio exit {cold[2]} {cold[3].strip()[-300:]} simple exit {s1[2]} {s1[3][-300:]}")
            continue
        pen, flo = studio_verdicts(out)
        spen, sflo, sdoc = simple_verdicts(sout)
        simple = min(s1, s2, key=lambda r: r[4])
        row = dict(name=name, bodies=len(film.bodies), frames=film.frames, cold=cold[4], warm=warm[4],
                   simple=simple[4], cold_wall=cold[0], warm_wall=warm[0], simple_wall=simple[0], fcl=fcl,
                   cold_x=cold[4] / simple[4], warm_x=warm[4] / simple[4], mb=max(cold[1], warm[1]),
                   smb=max(s1[1], s2[1]), pen=agree(pen, spen), flo=agree(flo, sflo),
                   same=pen == spen and flo == sflo)
        if args.before:
            bc, bw, bout = before_rows[-1]
            row["before"] = dict(cold=bc[4], warm=bw[4], cold_wall=bc[0], warm_wall=bw[0], mb=max(bc[1], bw[1]),
                                 same=bout.exists() and same_reports(bout, out))
            print(f"{'  before: ' + name:24} {'':6} {'':6} | {bc[4]:7.2f} ({bc[0]:6.2f}) {bw[4]:6.2f} ({bw[0]:6.2f}) | "
                  f"{'':15} {'':5} | {bc[4] / simple[4]:6.2f} {bw[4] / simple[4]:6.2f} | {row['before']['mb']:9.0f} "
                  f"{'':6} | reports {'identical' if row['before']['same'] else 'DIFFER'} to this tree's", flush=True)
        rows.append(row)
        print(f"{name:24} {row['bodies']:6} {row['frames']:6} | {row['cold']:7.2f} ({row['cold_wall']:6.2f}) "
              f"{row['warm']:6.2f} ({row['warm_wall']:6.2f}) | {row['simple']:6.2f} ({row['simple_wall']:6.2f}) "
              f"{fcl:5.2f} | {row['cold_x']:6.2f} {row['warm_x']:6.2f} | {row['mb']:9.0f} "
              f"{row['smb']:6.0f} | {row['pen']:>22} {row['flo']:>14}", flush=True)
        if sdoc.get("within_micrometre") or sdoc.get("too_many_pieces"):
            print(f"{'':24} simple verifier: {sdoc['within_micrometre']} pieces of surface left within a "
                  f"micrometre of tau, {sdoc['too_many_pieces']} part pairs given up (too many pieces)", flush=True)
        for f in folder.glob(f"cache-{name}"):
            subprocess.run(["rm", "-rf", str(f)])
    if not rows:
        return 1
    worst_w = max(rows, key=lambda r: r["warm_x"])
    worst_c = max(rows, key=lambda r: r["cold_x"])
    print(f"\nheadline: worst warm ratio {worst_w['warm_x']:.2f}x ({worst_w['name']}), worst cold ratio "
          f"{worst_c['cold_x']:.2f}x ({worst_c['name']}); goals warm <= 0.2x, cold <= 1x")
    print(f"process start (studio verify on a missing file, best of 5): {start:.3f} s wall, {start_cpu:.3f} s cpu; "
          "goal < 0.1 s")
    if args.before:
        print(f"before ({args.before}): reports identical to this tree's on "
              f"{sum(r['before']['same'] for r in rows)} of {len(rows)} films; worst warm ratio "
              f"{max(r['before']['warm'] / r['simple'] for r in rows):.2f}x, worst cold "
              f"{max(r['before']['cold'] / r['simple'] for r in rows):.2f}x")
    print(f"verdicts identical on {sum(r['same'] for r in rows)} of {len(rows)} films "
          "(pen: penetrating (frame, pair); floating: (frame, body); both/only studio/only simple)")
    print(f"machine load (1, 5, 15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
