"""`studio verify` on a generated corpus of malformed and hostile .glb files: every one exits 2 naming the file
and the fault, within 10 s and 1 GB of address space, and no traceback reaches the user."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glb_corpus import CASES, write_corpus

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 10
LIMIT_BYTES = 1 << 30

# Imports the studio once, then verifies each file in a forked child under an address-space limit and an
# alarm, as `studio verify FILE` would run it; prints one JSON line per file.
RUNNER = r"""
import json, os, resource, signal, sys, time
from studio.cli import build_parser, main
build_parser()          # the sub-commands' modules load once, before the forks
limit, seconds = int(sys.argv[1]), int(sys.argv[2])
for path in sys.argv[3:]:
    out, err = path + ".out", path + ".err"
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        signal.alarm(seconds)
        fo, fe = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fo, 1)
        os.dup2(fe, 2)
        code = 99
        try:
            code = main(["verify", path])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps({"path": path, "status": status, "seconds": time.perf_counter() - t0,
                      "maxrss_kb": usage.ru_maxrss}), flush=True)
"""


def env(cache: Path) -> dict:
    """The runner's environment, with a verifier cache of this run's own (never one shared between runs)."""
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                KEYPOSE_CACHE=str(cache))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    cases = write_corpus(folder)
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(LIMIT_BYTES), str(LIMIT_S),
                           *[str(p) for _, _, p in cases]],
                          capture_output=True, text=True, env=env(folder / "cache"),
                          timeout=60 + 3 * LIMIT_S * len(cases))
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = {Path(r["path"]).stem: r for r in map(json.loads, proc.stdout.splitlines())}
    return [(name, words, path, runs[name]) for name, words, path in cases]


def test_the_corpus_is_large_and_names_every_issue_case():
    names = {c[0] for c in CASES}
    assert len(CASES) >= 80 and len(names) == len(CASES)
    reported = {"nested_200k", "nodes_string", "nodes_dict", "children_string", "buffer_view_string", "fps_1e308",
                "time_inf", "count_4e9_no_view", "time_1e9", "chain_5000", "time_200k", "diamond_40", "time_nan",
                "count_negative", "zero_area"}
    assert reported <= names


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_each_hostile_file_is_bad_input_named_with_its_fault(corpus, name):
    _, words, path, run = next(c for c in corpus if c[0] == name)
    err = Path(f"{path}.err").read_text()
    out = Path(f"{path}.out").read_text()
    assert os.WIFEXITED(run["status"]), f"{name}: killed by signal {os.WTERMSIG(run['status'])} (hang or limit)"
    assert os.WEXITSTATUS(run["status"]) == 2, f"{name}: exit {os.WEXITSTATUS(run['status'])}: {err}{out}"
    assert "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"studio: {path}: "), err
    for w in words:
        assert w in lines[0], f"{name}: {w!r} missing from {lines[0]!r}"
    assert run["seconds"] < LIMIT_S
    assert run["maxrss_kb"] * 1024 < LIMIT_BYTES


def test_the_installed_command_refuses_a_hostile_file_in_one_line(tmp_path):
    """The real `studio` entry point, not the in-process runner: one line on stderr, exit 2."""
    name, words, make = next(c for c in CASES if c[0] == "diamond_40")
    path = tmp_path / f"{name}.glb"
    path.write_bytes(make())
    proc = subprocess.run([sys.executable, "-m", "studio.cli", "verify", str(path)], capture_output=True, text=True,
                          env=env(tmp_path / "cache"), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and str(path) in proc.stderr and "already a child" in proc.stderr
