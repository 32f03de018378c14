"""Deliverables others can read: the preview, the exported film and .blend and
the delivery reports follow the user's umask (0644 with the usual 022), and
the project's database keeps the mode it has."""
from __future__ import annotations

import os
import stat
import subprocess

import pytest

from faults_files import STUDIO
from jobs_scenes import film_project
from studio.store.project import Project

pytestmark = pytest.mark.blender


def run_with_umask(mask: int, *args) -> subprocess.CompletedProcess:
    return subprocess.run([STUDIO, *map(str, args)], capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: os.umask(mask))


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640)])
def test_deliverables_follow_the_umask_and_the_database_keeps_its_mode(tmp_path, mask, expected):
    with Project.create(tmp_path / "film") as project:
        film_project(project, n_frames=4)
    db = tmp_path / "film" / "studio.db"
    os.chmod(db, 0o600)                                      # the owner chose to keep the database private
    out = tmp_path / "delivery"
    preview = run_with_umask(mask, "render", tmp_path / "film", "--preview", "--quiet")
    assert preview.returncode == 0, preview.stderr
    export = run_with_umask(mask, "export", tmp_path / "film", "--video", out / "film.mp4",
                            "--blend", out / "film.blend", "--with-exceptions", "--quiet")
    assert export.returncode == 0, export.stderr
    assert "exported WITH EXCEPTIONS" in export.stdout
    delivered = [tmp_path / "film" / "renders" / "preview.mp4", out / "film.mp4", out / "film.blend",
                 out / "delivery-report.json", out / "delivery-report.md"]
    assert {p.name: oct(mode(p)) for p in delivered} == {p.name: oct(expected) for p in delivered}
    assert mode(db) == 0o600
