"""A full disk is a message. A render that fills its disk ends as failed with
"disk full: N MB needed in FOLDER", keeps its whole frames for resume and is
never left running; while the disk is full, reading commands work and writing
ones say so; a render or export that cannot fit is refused before it starts;
an export with exceptions reports what it delivered and what failed."""
from __future__ import annotations

import json
import re

import av
import pytest
from PIL import Image

from faults_files import fill, one_line, small_disk, studio
from jobs_scenes import film_project
from studio.jobs import queue, spec as specs
from studio.jobs.contract import present_outputs
from studio.jobs.local import JobWatch, run_job
from studio.store.project import Project

pytestmark = pytest.mark.blender
DISK_FULL = re.compile(r"^disk full: (\d+) MB needed in (\S+) \((\d+) MB free\)")


def test_a_disk_filling_during_a_render_fails_the_job_keeps_its_frames_and_resume_finishes(tmp_path):
    with small_disk(tmp_path / "disk", 64) as disk:
        project = Project.create(disk / "film")
        try:
            film_project(project, n_frames=40, resolution=(640, 360))
            job = queue.submit(project, "preview", lambda d: specs.video_spec(project, d))
            folder = queue.job_dir(project, job.id)
            frames: list[int] = []

            def fill_after_five(job_id, event):
                if event.get("stage") == "frame":
                    frames.append(event["frame"])
                    if len(frames) == 5:
                        fill(disk)

            job = run_job(project, job.id, JobWatch(on_event=fill_after_five))
            assert job.state == "failed"
            m = DISK_FULL.match(job.error)
            assert m and m[2] == str(folder) and int(m[1]) > 0, job.error
            assert "outputs kept for resume" in job.error
            assert [j.state for j in queue.list_jobs(project)] == ["failed"]       # nothing left running
            kept = sorted(job.outputs)
            assert 5 <= len(kept) < 40 and all(k.startswith("frames/") for k in kept)
            have, _ = present_outputs(folder, job.spec["expected"], job.outputs)
            assert set(have) == set(kept)
            for rel in kept:                                   # every kept frame is a whole picture
                with Image.open(folder / rel) as im:
                    im.load()
                    assert im.size == (640, 360)
            assert not (project.path / "renders" / "preview.mp4").exists()

            filler = fill(disk)                                # the reserve was released: fill it again
            listed = studio("jobs", project.path, "list")
            assert listed.returncode == 0 and "failed" in listed.stdout and "disk full" in listed.stdout
            assert studio("board", "status", project.path).returncode == 0
            approve = studio("board", "approve", project.path, "a")
            assert approve.returncode == 3 and one_line(approve.stderr).startswith("studio: disk full: ")
            render = studio("render", project.path, "--preview")
            assert render.returncode == 3 and "disk full" in render.stderr and "Traceback" not in render.stderr

            filler.unlink()                                    # space returns: resume renders what is missing
            resumed = studio("jobs", project.path, "resume", job.id)
            assert resumed.returncode == 0, resumed.stderr
            assert resumed.stdout.count(": frame ") == 40 - len(kept)
            with av.open(str(project.path / "renders" / "preview.mp4")) as c:
                assert sum(1 for _ in c.decode(video=0)) == 40
        finally:
            project.close()


def test_an_export_that_cannot_fit_is_refused_before_it_starts_and_the_delivery_reports_it(tmp_path):
    with Project.create(tmp_path / "film") as project:
        film_project(project, n_frames=4)
    out = tmp_path / "out"
    with small_disk(tmp_path / "stick", 2) as stick:
        fill(stick, leave=1 << 20)
        blend_only = studio("export", tmp_path / "film", "--blend", stick / "film.blend", "--with-exceptions")
        assert blend_only.returncode == 3, blend_only.stderr
        assert f"disk full: " in blend_only.stderr and f"MB needed in {stick}" in blend_only.stderr
        assert "nothing was started" in blend_only.stderr and "Traceback" not in blend_only.stderr
        assert not (stick / "film.blend").exists() and not list(stick.glob(".film.blend*"))

        both = studio("export", tmp_path / "film", "--video", out / "film.mp4", "--blend", stick / "film.blend",
                      "--with-exceptions")
        assert both.returncode == 3
        assert "exported WITH EXCEPTIONS" in both.stdout and f"failed: {stick / 'film.blend'}" in both.stdout
    report = json.loads((out / "delivery-report.json").read_text())
    assert report["outputs"] == [str(out / "film.mp4")]
    [failed] = report["failed_exports"]
    assert failed["output"] == str(stick / "film.blend") and DISK_FULL.search(failed["error"].split(": ", 1)[1])
    assert "Failed exports:" in (out / "delivery-report.md").read_text()
    with av.open(str(out / "film.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == 4
