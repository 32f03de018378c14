"""The example films under projects/: what a studio would check before showing them.

Each film's required checks pass when verified afresh; its single-pass
baseline scores worse; its MP4 has the film's frames, rate and size; and its
exported .blend opens in a fresh Blender process with every body, joint and
storyboard pose in place. Nothing here writes to projects/.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import av
import pytest

from studio.checks.score import SCORED, check_film, rates
from studio.jobs.blend_check import compare
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.timeline.gate import board_status
from studio.timeline.storyboard import list_states

ROOT = Path(__file__).resolve().parents[1]
BLENDER_PY = ROOT / ".venv-blender" / "bin" / "python"
FILMS = ("doorway", "marble_run", "dog_paper", "crates", "shelving", "g1_delivery", "person_door")


def _readonly_film(name: str):
    path = ROOT / "projects" / name
    before = (path / "studio.db").read_bytes()
    with Project.open(path) as p:
        scene, tracks, states = load_scene(p), load_film_tracks(p), list_states(p)
        statuses = board_status(p, scene)
        camera = scene.cameras[0].resolution
        fps = p.fps
    return path, before, scene, tracks, states, statuses, camera, fps


@pytest.mark.parametrize("name", FILMS)
def test_film_passes_required_checks_and_beats_its_single_pass_baseline(name):
    path, before, scene, tracks, states, statuses, _, _ = _readonly_film(name)
    assert len(states) >= 3
    assert all(s.ok and s.status == "approved" for s in statuses), [(s.state_id, s.reasons) for s in statuses]
    film = rates(check_film(path, SCORED))
    base = rates(check_film(ROOT / "projects" / f"{name}-single-pass", SCORED))
    assert film["required_pass"], film
    assert film["penetration_rate"] == 0.0
    assert film["frames"] == tracks.n_frames == base["frames"]
    assert not base["required_pass"]
    assert (base["penetration_rate"] + base["floating_rate"]) > (film["penetration_rate"] + film["floating_rate"])
    assert (path / "studio.db").read_bytes() == before


@pytest.mark.parametrize("name", FILMS)
def test_film_video_has_every_frame_at_the_projects_rate_and_size(name):
    path, _, _, tracks, _, _, (w, h), fps = _readonly_film(name)
    with av.open(str(path / "renders" / f"{name}.mp4")) as c:
        stream = c.streams.video[0]
        n = sum(1 for _ in c.decode(video=0))
        assert (stream.codec_context.name, stream.codec_context.width, stream.codec_context.height) == ("h264", w, h)
        assert float(stream.average_rate) == fps
    assert n == tracks.n_frames


@pytest.mark.blender
@pytest.mark.parametrize("name", FILMS)
def test_exported_blend_opens_in_a_fresh_blender_with_the_storyboard_poses(name):
    path, _, scene, tracks, states, _, _, _ = _readonly_film(name)
    frames = [s.frame for s in states]
    out = subprocess.run([str(BLENDER_PY), str(ROOT / "studio/blender/inspect_blend.py"),
                          str(path / "exports" / f"{name}.blend"), *map(str, frames)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("KEYPOSE-JSON "))
    got = json.loads(line[len("KEYPOSE-JSON "):])
    assert (got["frame_start"], got["frame_end"]) == (tracks.frame_start, tracks.frame_end)
    problems, worst = compare(scene, tracks, got, frames)
    assert problems == []
    assert worst["max_position_error_m"] < 1e-4 and worst["max_rotation_error_rad"] < 1e-4


def test_score_table_sets_the_films_beside_their_single_pass_baselines(capsys):
    from studio.cli import main
    films = [str(ROOT / "projects" / n) for n in FILMS] + [str(ROOT / "projects" / f"{n}-single-pass") for n in FILMS]
    assert main(["score", *films]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0].rsplit("/", 1)[-1]: line.split() for line in lines[1:1 + 2 * len(FILMS)]}
    assert all(rows[n][-1] == "pass" for n in FILMS)
    assert any(rows[f"{n}-single-pass"][-1] == "FAIL" for n in FILMS)
    film_mean = next(line for line in lines if line.startswith(f"mean of {len(FILMS)} films")).split()
    base_mean = next(line for line in lines if line.startswith(f"mean of {len(FILMS)} single-pass")).split()
    assert film_mean[4] == "0.0%"                                  # penetration across the films
    assert float(base_mean[-3].rstrip("%")) > float(film_mean[-3].rstrip("%"))


@pytest.mark.parametrize("name", FILMS)
def test_export_gate_is_open_for_each_film_as_verified(name):
    from studio.jobs.export_gate import film_gate
    with Project.open(ROOT / "projects" / name) as p:
        gate = film_gate(p)
    assert gate.ok, gate.reasons


@pytest.mark.blender
def test_studio_export_delivers_a_verified_film_without_exceptions(tmp_path):
    import shutil
    from studio.cli import main
    copy = tmp_path / "marble_run"
    shutil.copytree(ROOT / "projects" / "marble_run", copy, ignore=shutil.ignore_patterns("jobs"))
    out = tmp_path / "delivery"
    assert main(["export", str(copy), "--blend", str(out / "marble.blend"), "--video", str(out / "marble.mp4"),
                 "--resolution", "64x36", "--quiet"]) == 0
    assert not (out / "delivery-report.json").exists()
    with av.open(str(out / "marble.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == 120
    assert (out / "marble.blend").stat().st_size > 100_000
