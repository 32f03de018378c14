"""Regenerate projects/<name> for every example film, and its single-pass baseline.

Each example's calls file (resources/examples/<name>/calls.jsonl) is replayed
through the same pipeline as `studio demo` (scene, plan, storyboard verified
and rendered, approvals, motion through the gate, every frame verified, the
film rendered, .blend exported); the baseline beside it is scored in the same
table by `studio score projects/*`.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from studio.commands.demo import TextProgress
from studio.examples import example_names
from studio.examples.baseline import single_pass
from studio.examples.pipeline import run_pipeline

ROOT = Path(__file__).resolve().parents[1]


def main(names: list[str]) -> int:
    for name in names or example_names():
        out, base = ROOT / "projects" / name, ROOT / "projects" / f"{name}-single-pass"
        for folder in (out, base):
            if folder.exists():
                shutil.rmtree(folder)
        summary = run_pipeline(name, out, approve="all", state=TextProgress())
        for s in summary.stages:
            print(f"{name:<12} {s.name:<14} {s.seconds:7.2f} s  {s.result}")
        if not summary.required_pass:
            print(f"{name}: the film's required checks fail", file=sys.stderr)
            return 1
        single_pass(out, base)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
