"""The Ray farm runner against a real Ray head on loopback: a short film rendered
through the Jobs REST API with frames fanned out to `blender` tasks, and a job
stopped mid-render. The head runs in its own process group, which the
finalizer ends (then any process left under its temp folder, by pid)."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import av
import pytest

from jobs_scenes import film_project
from ray_head import loopback_head, processes_mentioning
from studio.jobs import queue, spec as specs
from studio.jobs.farm import run_farm_job
from studio.jobs.local import JobWatch
from studio.store.project import Project

pytestmark = [pytest.mark.ray, pytest.mark.blender]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def farm():
    with loopback_head(slots=2) as (client, temp):
        yield client
    assert processes_mentioning(temp) == []


def test_film_renders_through_the_farm(farm, tmp_project):
    film_project(tmp_project, n_frames=6, resolution=(64, 36))
    job = queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d))
    events = []
    job = run_farm_job(tmp_project, job.id, farm, JobWatch(on_event=lambda j, e: events.append(e)), chunk=3)
    assert job.state == "succeeded", job.error
    assert job.runner.startswith("ray:") and job.submission_id.startswith(f"keypose-{job.id}-1-")
    status = farm.status(job.submission_id)
    assert status["status"] == "SUCCEEDED"
    assert sorted(e["frame"] for e in events if e["stage"] == "frame") == list(range(1001, 1007))
    folder = queue.job_dir(tmp_project, job.id)
    assert {p.name for p in folder.glob("done-chunk-*.json")} == {"done-chunk-0.json", "done-chunk-1.json"}
    with av.open(str(tmp_project.path / "renders" / "preview.mp4")) as c:
        s = c.streams.video[0]
        assert (float(s.average_rate), s.width, s.height) == (24.0, 64, 36)
        assert sum(1 for _ in c.decode(video=0)) == 6
    assert '"stage": "frame"' in farm.logs(job.submission_id)


def test_stopping_a_farm_job_cancels_it_and_leaves_no_blender(farm, tmp_project):
    film_project(tmp_project, n_frames=16, resolution=(160, 90))
    job = queue.submit(tmp_project, "film",
                       lambda d: specs.video_spec(tmp_project, d, "film", engine="CYCLES", samples=24))
    folder = queue.job_dir(tmp_project, job.id)
    first = threading.Event()
    watch = JobWatch(on_event=lambda j, e: e.get("stage") == "frame" and first.set())
    result = {}

    def run():
        with Project.open(tmp_project.path) as p:
            result["job"] = run_farm_job(p, job.id, farm, watch, chunk=2)

    t = threading.Thread(target=run)
    t.start()
    assert first.wait(240), "no frame came back from the farm"
    watch.cancel(job.id)
    t.join(60)
    assert not t.is_alive()
    job = result["job"]
    assert job.state == "cancelled" and 0 < len(job.outputs) < 17
    assert farm.status(job.submission_id)["status"] == "STOPPED"
    deadline = time.monotonic() + 15
    while processes_mentioning(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert processes_mentioning(str(folder)) == []      # no Blender left rendering this job
    assert not (folder / "out" / "film.mp4").exists()
