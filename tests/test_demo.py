"""`studio demo`: the whole pipeline on an example, headless, as the main job runs it."""
from __future__ import annotations

import av
import pytest

from studio.cli import main
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.timeline.reviews import latest_review


@pytest.mark.blender
def test_demo_makes_the_marble_run_film_and_exports_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)           # a relative --out, as `make run` gives it
    code = main(["demo", "marble_run", "--out", "out", "--resolution", "64x36"])
    out = capsys.readouterr().out
    assert code == 0, out
    for stage in ("scene", "plan", "storyboard", "stills", "review", "motion", "verify film", "render film", "export"):
        assert f"\n{stage:<14} " in out
    assert "required pass" in out
    project = tmp_path / "out" / "marble_run"
    with Project.open(project) as p:
        tracks = load_film_tracks(p)
        assert latest_review(p, "in_cup").verdict == "approve"
    with av.open(str(project / "renders" / "marble_run.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == tracks.n_frames == 120
    assert (project / "exports" / "marble_run.blend").stat().st_size > 100_000


def test_demo_told_to_approve_nothing_stops_before_motion_and_says_why(tmp_path, capsys):
    code = main(["demo", "marble_run", "--out", str(tmp_path), "--approve", "none", "--no-render"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "motion needs every key state approved" in err
    for state in ("released", "lower_ramp", "in_cup"):
        assert state in err
    with Project.open(tmp_path / "marble_run") as p:
        assert load_film_tracks(p) is None


def test_demo_refuses_an_unknown_example(tmp_path, capsys):
    assert main(["demo", "kiln", "--out", str(tmp_path)]) == 2
    assert "no example named 'kiln'" in capsys.readouterr().err
