"""Bad input and broken runs give failed jobs with clear messages, nothing
half-written where a finished output would be, and no stray Blender."""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import av
import pytest

from jobs_scenes import film_project
from studio.jobs import queue, spec as specs
from studio.jobs.contract import present_outputs
from studio.jobs.deliver import name_destination
from studio.jobs.dispatch import recover_jobs
from studio.jobs.local import JobWatch, run_job
from studio.store.project import Project

pytestmark = pytest.mark.blender
ROOT = Path(__file__).resolve().parents[1]


def workers_for(folder: Path) -> list[int]:
    """Pids of live processes whose command line mentions this job folder."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes()
            except OSError:
                continue
            if str(folder).encode() in cmd:
                pids.append(int(d.name))
    return pids


def finished_files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and (p.parent.name in ("frames", "out", "stills")) and not p.name.startswith(".")}


def slow_film(project, frames: int = 10):
    """A film job slow enough to interrupt: Cycles at 160x90."""
    film_project(project, n_frames=frames, resolution=(160, 90))
    return queue.submit(project, "film", lambda d: specs.video_spec(project, d, "film", engine="CYCLES", samples=24))


def test_a_spec_naming_a_missing_mesh_fails_clearly(tmp_project):
    film_project(tmp_project, n_frames=4)
    job = queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d))
    folder = queue.job_dir(tmp_project, job.id)
    (folder / job.spec["meshes"]["arm"]).unlink()
    job = run_job(tmp_project, job.id)
    assert job.state == "failed"
    assert "spec meshes.arm: mesh file" in job.error and "is missing" in job.error
    assert finished_files(folder) == set() and job.outputs == {}
    assert not (tmp_project.path / "renders" / "preview.mp4").exists()


def test_a_corrupt_blend_fails_the_verify_job_clearly(tmp_project, tmp_path):
    bad = tmp_path / "broken.blend"
    bad.write_bytes(b"BLENDER-v500" + os.urandom(2000))     # a .blend header over garbage
    job = queue.submit(tmp_project, "verify", lambda d: specs.verify_spec(bad, [1001]))
    job = run_job(tmp_project, job.id)
    assert job.state == "failed"
    assert str(bad) in job.error and "cannot open" in job.error
    assert not (queue.job_dir(tmp_project, job.id) / "out" / "inspect.json").exists()


def test_an_unwritable_output_folder_fails_the_job_and_leaves_nothing(tmp_project, tmp_path):
    film_project(tmp_project, n_frames=4)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the export folder should be")
    name_destination(blocker / "film.blend")            # as `studio export --blend` does with the user's path
    job = queue.submit(tmp_project, "export_blend",
                       lambda d: specs.blend_spec(tmp_project, d, str(blocker / "film.blend")))
    job = run_job(tmp_project, job.id)
    assert job.state == "failed" and str(blocker) in job.error and "cannot write" in job.error
    assert blocker.read_text() == "a file where the export folder should be"
    # and a job folder the worker cannot write into: it says which folder
    job2 = queue.submit(tmp_project, "export_blend", lambda d: specs.blend_spec(tmp_project, d, str(tmp_path / "x.blend")))
    (queue.job_dir(tmp_project, job2.id) / "out").write_text("in the way")
    job2 = run_job(tmp_project, job2.id)
    assert job2.state == "failed" and "spec job folder: cannot write into" in job2.error
    assert not (tmp_path / "x.blend").exists()


def test_blender_killed_mid_render_fails_then_resume_renders_only_missing_frames(tmp_project):
    job = slow_film(tmp_project, frames=10)
    folder = queue.job_dir(tmp_project, job.id)
    seen = []

    def crash_after_three(job_id, event):
        if event.get("stage") == "frame":
            seen.append(event["frame"])
            if len(seen) == 3:
                os.killpg(queue.get_job(tmp_project, job_id).pid, signal.SIGKILL)   # Blender dies mid-render

    job = run_job(tmp_project, job.id, JobWatch(on_event=crash_after_three))
    assert job.state == "failed" and "killed (signal 9)" in job.error, job.error
    done = sorted(job.outputs)
    assert 3 <= len(done) < 10 and all(p.startswith("frames/") for p in done)
    assert finished_files(folder) == set(done)          # no half-written frame under a final name
    assert not (folder / "out" / "film.mp4").exists() and not (tmp_project.path / "renders" / "film.mp4").exists()
    assert workers_for(folder) == []

    rendered = []
    queue.requeue(tmp_project, job.id)
    job = run_job(tmp_project, job.id, JobWatch(on_event=lambda j, e: e.get("stage") == "frame" and rendered.append(e["frame"])))
    assert job.state == "succeeded" and job.attempts == 2
    assert sorted(rendered) == [f for f in range(1001, 1011) if f"frames/{f:06d}.png" not in done]
    with av.open(str(tmp_project.path / "renders" / "film.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == 10


def test_cancel_terminates_the_worker_and_leaves_no_process(tmp_project):
    job = slow_film(tmp_project, frames=10)
    folder = queue.job_dir(tmp_project, job.id)
    first = threading.Event()
    watch = JobWatch(on_event=lambda j, e: e.get("stage") == "frame" and first.set())
    result = {}
    def run():
        with Project.open(tmp_project.path) as p:   # a runner thread has its own connection
            result["job"] = run_job(p, job.id, watch)

    t = threading.Thread(target=run)
    t.start()
    assert first.wait(60)
    t0 = time.monotonic()
    watch.cancel(job.id)
    t.join(30)
    assert not t.is_alive() and time.monotonic() - t0 < 10
    job = result["job"]
    assert job.state == "cancelled" and 1 <= len(job.outputs) < 11
    assert workers_for(folder) == []
    assert not (folder / "out" / "film.mp4").exists()


def wait_until_rendering(project) -> queue.Job:
    """The project's first job once it is running and has published a frame."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        jobs = queue.list_jobs(project)
        if jobs and jobs[0].state == "running" and jobs[0].outputs:
            return jobs[0]
        time.sleep(0.2)
    pytest.fail("the render never got going")


def test_a_studio_restart_marks_the_running_job_interrupted_and_resume_finishes_it(tmp_project):
    film_project(tmp_project, n_frames=10, resolution=(160, 90))
    path = tmp_project.path
    cli = subprocess.Popen([str(ROOT / ".venv/bin/studio"), "render", str(path), "--film", "--engine", "cycles",
                            "--samples", "24", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        wait_until_rendering(tmp_project)
        os.kill(cli.pid, signal.SIGKILL)        # the studio dies; its Blender worker notices and stops
        cli.wait()
    finally:
        if cli.poll() is None:
            cli.kill()
    job = queue.list_jobs(tmp_project)[0]
    assert recover_jobs(tmp_project) == [job.id]
    time.sleep(0.2)
    assert not queue.worker_alive(job.pid) and workers_for(queue.job_dir(tmp_project, job.id)) == []
    job = queue.get_job(tmp_project, job.id)
    assert job.state == "interrupted"
    # what survived on disk (a frame published after the studio died is kept though never recorded)
    have, _ = present_outputs(queue.job_dir(tmp_project, job.id), job.spec["expected"], job.outputs)
    kept = {k for k in have if k.startswith("frames/")}
    assert {k for k in job.outputs if k.startswith("frames/")} <= kept
    out = subprocess.run([str(ROOT / ".venv/bin/studio"), "jobs", str(path), "resume", str(job.id)],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count(": frame ") == 10 - len(kept)
    assert queue.get_job(tmp_project, job.id).state == "succeeded"
    with av.open(str(path / "renders" / "film.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == 10


def test_studio_jobs_cancel_stops_a_render_running_in_another_studio(tmp_project):
    film_project(tmp_project, n_frames=120, resolution=(160, 90))   # long enough to outlast a second studio starting
    path = tmp_project.path
    cli = subprocess.Popen([str(ROOT / ".venv/bin/studio"), "render", str(path), "--film", "--engine", "cycles",
                            "--samples", "24", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        job = wait_until_rendering(tmp_project)
        out = subprocess.run([str(ROOT / ".venv/bin/studio"), "jobs", str(path), "cancel", str(job.id)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and f"job {job.id}: cancelled" in out.stdout
        _, err = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 1 and "cancelled" in err
    job = queue.get_job(tmp_project, job.id)
    assert job.state == "cancelled" and not queue.worker_alive(job.pid)
    assert workers_for(queue.job_dir(tmp_project, job.id)) == []
    assert not (path / "renders" / "film.mp4").exists()
