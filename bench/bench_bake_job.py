"""Bake job speed: what running motion authoring as a background job costs.

A chain of N approved arm states (N-1 segments) is baked by interpolation
twice, side by side: as a bake job (a subprocess of the studio's Python,
gate checked for every segment first, progress lines, bake.json, done
contract) and, as the baseline, in-process with bake_segment on each segment.
The ratio is the job's overhead (process start, imports, the gate pass).
Run: .venv/bin/python bench/bench_bake_job.py [N]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from timeline_scenes import author_arm, check_state  # noqa: E402

from studio.jobs import queue  # noqa: E402
from studio.jobs.bake_spec import bake_spec  # noqa: E402
from studio.jobs.local import run_job  # noqa: E402
from studio.scene.io import load_scene  # noqa: E402
from studio.scene.pose import Pose  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.bake import bake_segment  # noqa: E402
from studio.timeline.motion.easing import interpolate_poses  # noqa: E402
from studio.timeline.reviews import record_review  # noqa: E402
from studio.timeline.storyboard import State, get_state, put_state  # noqa: E402


def chain(path: Path, n: int) -> tuple[Project, list[str]]:
    project = Project.create(path, name="bench")
    scene = author_arm(project)
    ids = ["back"]
    for i in range(n - 3):
        pose = Pose.rest(scene)
        pose.joints["elbow"] = 0.3 + 0.8 * (i % 2)
        put_state(project, scene, State(f"k{i}", 1049 + 12 * i, pose, "close"))
        check_state(project, f"k{i}")
        record_review(project, f"k{i}", "approve", "", "bench", scene)
        ids.append(f"k{i}")
    return project, ["rest..bent", "bent..back"] + [f"{a}..{b}" for a, b in zip(ids, ids[1:])]


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        job_project, segments = chain(Path(tmp) / "job", n)
        t = time.perf_counter()
        job = queue.submit(job_project, "bake", lambda d: bake_spec(job_project, d, segments))
        job = run_job(job_project, job.id, None, {})
        job_s = time.perf_counter() - t
        assert job.state == "succeeded", job.error
        base_project, _ = chain(Path(tmp) / "base", n)
        t = time.perf_counter()
        for seg in segments:
            a, b = (get_state(base_project, s) for s in seg.split(".."))
            scene = load_scene(base_project)
            bake_segment(base_project, seg, interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)]),
                         "interpolate", scene=scene)
        base_s = time.perf_counter() - t
    print(f"segments baked:          {len(segments)}")
    print(f"bake job (subprocess):   {job_s:.2f} s  ({len(segments) / job_s:.1f} segments/s)")
    print(f"in-process bake_segment: {base_s:.2f} s  ({len(segments) / base_s:.1f} segments/s)")
    print(f"ratio job / in-process:  {job_s / base_s:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
