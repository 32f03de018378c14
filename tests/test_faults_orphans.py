"""No orphans: a Blender worker whose studio is killed (SIGKILL, no chance to
clean up) ends itself within 2 s, its finished frames stay on disk, and the
next studio resumes the job rendering only what is missing."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import av
import pytest

from faults_files import STUDIO, studio
from jobs_scenes import film_project
from studio.jobs import queue
from studio.jobs.contract import present_outputs

pytestmark = pytest.mark.blender


def rendering_job(project, timeout: float = 90) -> queue.Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = queue.list_jobs(project)
        if jobs and jobs[0].state == "running" and len(jobs[0].outputs) >= 2:
            return jobs[0]
        time.sleep(0.05)
    pytest.fail("the render never got going")


def test_a_worker_stops_within_2_s_of_its_studio_being_killed_and_resume_finishes(tmp_project):
    film_project(tmp_project, n_frames=40, resolution=(160, 90))
    path = tmp_project.path
    cli = subprocess.Popen([STUDIO, "render", path, "--film", "--engine", "cycles", "--samples", "24", "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        job = rendering_job(tmp_project)
        assert queue.worker_alive(job.pid)
        os.kill(cli.pid, signal.SIGKILL)              # the studio dies with no chance to stop its worker
        killed = time.monotonic()
        cli.wait()
        while queue.worker_alive(job.pid) and time.monotonic() - killed < 10:
            time.sleep(0.01)
        stopped_after = time.monotonic() - killed
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    print(f"worker {job.pid} stopped {stopped_after:.2f} s after its studio was killed")
    assert stopped_after < 2.0
    folder = queue.job_dir(tmp_project, job.id)
    have, missing = present_outputs(folder, job.spec["expected"], {})
    frames = sorted(k for k in have if k.startswith("frames/"))
    assert len(frames) >= 2 and missing                   # finished frames kept, the rest still to do
    time.sleep(1.0)
    assert present_outputs(folder, job.spec["expected"], {})[0].keys() == have.keys()   # nothing rendered on

    listed = studio("jobs", path, "list")
    assert listed.returncode == 0 and f"marked interrupted (their studio had stopped): {job.id}" in listed.stdout
    resumed = studio("jobs", path, "resume", job.id)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.count(": frame ") == 40 - len(frames)
    with av.open(str(path / "renders" / "film.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == 40
