"""A read-only project (a mounted share, a reviewer's copy) opens for reading:
every command that only reads works on it, with what the project holds, and
every command that writes says the project is read-only (exit 2). Nothing is
written into it: no -wal or -shm file, no folder, no log."""
from __future__ import annotations

import json

from faults_files import one_line, read_only_mount, snapshot, studio, write_gltf
from jobs_scenes import film_project
from studio.store.project import Project


def make_share(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    with Project.create(share / "film", name="reviewed film") as p:
        film_project(p, n_frames=6)
    return share


def test_reading_commands_work_and_writing_ones_refuse_on_a_read_only_mount(tmp_path):
    share = make_share(tmp_path)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"states": [], "events": []}))
    mesh = write_gltf(tmp_path / "src")
    before = snapshot(share)
    with read_only_mount(share) as ro:
        film = ro / "film"
        info = studio("info", film)
        assert info.returncode == 0, info.stderr
        assert "project  reviewed film" in info.stdout and "arm" in info.stdout and "elbow" in info.stdout
        status = studio("board", "status", film)
        assert status.returncode == 0 and status.stdout.split()[0] == "a" and "segment" not in status.stderr
        verify = studio("verify", film, "--json", tmp_path / "reports.json")
        assert verify.returncode in (0, 1) and "Traceback" not in verify.stderr
        assert "the project is read-only: the reports are shown, not stored" in verify.stdout
        assert {r["name"] for r in json.loads((tmp_path / "reports.json").read_text())["reports"]} >= {
            "AnimationWellFormed", "JointLimits", "NoPenetration", "EventsSatisfied"}
        jobs = studio("jobs", film, "list")
        assert jobs.returncode == 0 and jobs.stderr == ""
        for args in (["board", "approve", film, "a"], ["board", "reject", film, "b", "--note", "too far"],
                     ["board", "plan", film, plan], ["render", film, "--preview"],
                     ["scene", "import", film, mesh, "--name", "crate"]):
            out = studio(*args)
            assert out.returncode == 2, (args, out.stderr)
            assert "read-only" in one_line(out.stderr), args
    assert snapshot(share) == before            # not a byte, not a -wal, not a log


def test_a_read_only_view_of_a_project_being_written_reads_its_latest_writes(tmp_path):
    share = make_share(tmp_path)
    with Project.open(share / "film") as writer:     # an open studio: its last write is still in the WAL
        writer.set_meta("name", "renamed while open")
        assert (share / "film" / "studio.db-wal").stat().st_size > 0
        with read_only_mount(share) as ro:
            info = studio("info", ro / "film")
            assert info.returncode == 0, info.stderr
            assert "project  renamed while open" in info.stdout
