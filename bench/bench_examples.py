"""Each example film replayed from its calls file to a baked film (no rendering), against the
same film made by direct calls of the studio's functions, side by side; and both films' figures
beside the single-pass baseline's.

Replay: `studio.examples.pipeline.replay_stages` (the code path of `studio agent replay`: schema
check, project checks, a command and an audit row per call), split into scene, plan, key states
(posed and verified), reviews, motion. Direct: the replayed scene saved in one go, then
save_plan, put_state, verify_state, record_review and the generic bake, no tool layer. Both must
end with the same film hash. The first replay in the process also builds (or reads from the
mesh cache) every CAD mesh; the figures side by side are a second replay and the direct run,
both with the meshes in memory. Then the single-pass baseline (one interpolation from the first key
state to the last) and the verdicts of the method's film and the baseline's.
Goal: under 30 s per example on one core.
Run: .venv/bin/python bench/bench_examples.py [NAME ...]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from studio.tools.calls import replay  # noqa: E402
from studio.checks.report import required_checks_pass  # noqa: E402
from studio.checks.run import verify_film, verify_state  # noqa: E402
from studio.checks.score import rates  # noqa: E402
from studio.examples import calls_file, example_names  # noqa: E402
from studio.examples.baseline import single_pass  # noqa: E402
from studio.examples.pipeline import STAGES, by_stage, example_calls, new_example_project  # noqa: E402
from studio.scene.io import load_scene, save_scene  # noqa: E402
from studio.scene.pose import Pose  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.author import author_and_bake  # noqa: E402
from studio.timeline.film import film_hash  # noqa: E402
from studio.timeline.plan import plan_segments, save_plan  # noqa: E402
from studio.timeline.reviews import record_review  # noqa: E402
from studio.timeline.storyboard import State, list_states, put_state  # noqa: E402


def _figures(reports) -> str:
    r = rates(reports)
    held = next((x.metrics.get("held", 0) for x in reports if x.name == "EventsSatisfied"), 0)
    total = next((x.metrics.get("events", 0) for x in reports if x.name == "EventsSatisfied"), 0)
    pct = lambda v: "n/a" if v is None else f"{100 * v:5.1f}%"          # noqa: E731
    return (f"required {'pass' if required_checks_pass(reports) else 'FAIL'}  penetration "
            f"{pct(r['penetration_rate'])}  floating {pct(r['floating_rate'])}  events {held}/{total}")


def replayed(name: str, out: Path) -> tuple[dict[str, float], str | None]:
    part = by_stage(example_calls(name), str(calls_file(name)))
    seconds = {}
    with new_example_project(name, out) as project:
        for st in STAGES:
            t0 = time.perf_counter()
            replay(project, part[st], str(calls_file(name)))
            seconds[st] = time.perf_counter() - t0
        return seconds, film_hash(project)


def direct(source: Path, out: Path) -> tuple[float, str | None]:
    """The replayed project's scene, plan and key states made again by direct function calls."""
    with Project.open(source) as src:
        scene, plan = load_scene(src), src.get_doc("plan")
        states = [(s.id, s.frame, s.pose.to_dict(), s.shot, s.description) for s in list_states(src)]
    t0 = time.perf_counter()
    with new_example_project(source.name, out) as project:
        save_scene(project, scene, actor="bench")
        save_plan(project, plan, scene, actor="bench")
        for sid, frame, pose, shot, text in states:
            put_state(project, scene, State(sid, frame, Pose.from_dict(pose, scene), shot, text), actor="bench")
        for sid, *_ in states:
            verify_state(project, sid)
            record_review(project, sid, "approve", "", "bench", scene)
        for seg in plan_segments(plan):
            author_and_bake(project, seg, "bench", scene=scene)
        return time.perf_counter() - t0, film_hash(project)


def run(name: str, tmp: Path) -> None:
    cold, _ = replayed(name, tmp / f"{name}-cold")
    seconds, replay_hash = replayed(name, tmp / name)
    total = sum(seconds.values())
    direct_s, direct_hash = direct(tmp / name, tmp / f"{name}-direct")
    with Project.open(tmp / name) as project:
        reports = verify_film(project)
    t0 = time.perf_counter()
    single_pass(tmp / name, tmp / f"{name}-single-pass")
    t_single = time.perf_counter() - t0
    with Project.open(tmp / f"{name}-single-pass") as base:
        base_reports = verify_film(base)
    frames = next(r.metrics["frames"] for r in reports if r.name == "AnimationWellFormed")
    print(f"\n{name}: {len(example_calls(name))} calls, {frames} frames")
    for st, sec in seconds.items():
        print(f"  replay {st:<12} {sec:8.3f} s")
    print(f"  first replay (meshes built or read)  {sum(cold.values()):8.3f} s  "
          f"(goal < 30 s)  {'ok' if sum(cold.values()) < 30 else 'OVER'}")
    print(f"  replay to a baked film  {total:8.3f} s  (meshes in memory)")
    print(f"  direct function calls   {direct_s:8.3f} s  same film: {replay_hash == direct_hash}")
    print(f"  replay / direct: {total / max(direct_s, 1e-9):.2f}x")
    print(f"  {'method':<12} {_figures(reports)}")
    print(f"  {'single pass':<12} {_figures(base_reports)}  ({t_single:.3f} s to make)")


def main(names: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or example_names():
            run(name, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
