"""The marble run and dog examples, stage by stage, beside their single-pass baselines.

For each example: seconds to build the project (CAD meshes), pose the key
states, verify them, author the motion between the approved states, and
verify every frame; then, side by side, the single-pass baseline
(studio.examples.baseline: one interpolation from the first key state to the
last) — its authoring time, and both films' required verdicts, penetration,
floating and event figures, with the ratio of authoring times.
Run: .venv/bin/python bench/bench_examples.py [marble_run] [dog_paper]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from studio.checks.report import required_checks_pass  # noqa: E402
from studio.checks.run import verify_film, verify_state  # noqa: E402
from studio.checks.score import rates  # noqa: E402
from studio.examples.baseline import single_pass  # noqa: E402
from studio.examples.pipeline import modules  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.reviews import record_review  # noqa: E402
from studio.timeline.storyboard import list_states  # noqa: E402


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def _figures(reports) -> str:
    r = rates(reports)
    held = next((x.metrics.get("held", 0) for x in reports if x.name == "EventsSatisfied"), 0)
    total = next((x.metrics.get("events", 0) for x in reports if x.name == "EventsSatisfied"), 0)
    pct = lambda v: "n/a" if v is None else f"{100 * v:5.1f}%"          # noqa: E731
    return (f"required {'pass' if required_checks_pass(reports) else 'FAIL'}  penetration "
            f"{pct(r['penetration_rate'])}  floating {pct(r['floating_rate'])}  events {held}/{total}")


def run(name: str, tmp: Path) -> None:
    scene_mod, story = modules(name)
    project, t_create = _timed(scene_mod.create, tmp / name)
    story.author_plan(project)
    _, t_states = _timed(story.author_states, project)
    t0 = time.perf_counter()
    for s in list_states(project):
        verify_state(project, s.id)
        record_review(project, s.id, "approve", reviewer="batch")
    t_verify_states = time.perf_counter() - t0
    _, t_motion = _timed(story.author_motion, project)
    reports, t_verify = _timed(verify_film, project)
    project.close()
    _, t_single = _timed(single_pass, tmp / name, tmp / f"{name}-single-pass")
    with Project.open(tmp / f"{name}-single-pass") as base:
        base_reports = verify_film(base)
    frames = next(r.metrics["frames"] for r in reports if r.name == "AnimationWellFormed")
    print(f"\n{name}: {frames} frames")
    for label, sec in (("build project", t_create), ("pose states", t_states), ("verify+approve states",
                       t_verify_states), ("author motion", t_motion), ("verify film", t_verify)):
        print(f"  {label:<22} {sec:8.3f} s")
    print(f"  {'method':<12} motion {t_motion:7.3f} s  {_figures(reports)}")
    print(f"  {'single pass':<12} motion {t_single:7.3f} s  {_figures(base_reports)}")
    print(f"  authoring time ratio (method / single pass): {t_motion / max(t_single, 1e-9):.1f}x")


def main(names: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or ["marble_run", "dog_paper"]:
            run(name, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
