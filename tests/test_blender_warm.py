"""The warm worker: one Blender process serving several still specs in turn."""
from __future__ import annotations

import pytest

from jobs_scenes import film_project
from studio.jobs import queue, spec as specs
from studio.jobs.contract import check_done
from studio.jobs.warm import WarmWorker

pytestmark = pytest.mark.blender


def test_one_worker_serves_stills_in_turn_and_survives_a_bad_spec(tmp_project, tmp_path):
    film_project(tmp_project, n_frames=4, two_cameras=True)
    jobs = [queue.submit(tmp_project, "still", lambda d, s=s: specs.still_spec(tmp_project, d, [s], ["side"]))
            for s in ("a", "b")]
    with WarmWorker() as worker:
        pid = worker.pid
        first = worker.run(queue.job_dir(tmp_project, jobs[0].id) / "spec.json")
        missing = worker.run(tmp_path / "nowhere" / "spec.json")
        second = worker.run(queue.job_dir(tmp_project, jobs[1].id) / "spec.json")
        assert worker.pid == pid and worker.proc.poll() is None
    assert worker.proc.wait(timeout=10) == 0
    assert missing[-1]["stage"] == "error" and "the job spec is missing" in missing[-1]["message"]
    for job, events in zip(jobs, (first, second)):
        assert events[-1]["stage"] == "done"
        folder = queue.job_dir(tmp_project, job.id)
        verdict = check_done(folder, job.spec, 0, events[-1]["outputs"])
        assert verdict.ok and list(verdict.outputs) == job.spec["expected"]
    assert set(first[-1]["outputs"].values()).isdisjoint(second[-1]["outputs"].values())   # two poses
