"""Rendering and export through the real Blender worker, checked by real clients:
PyAV reads the MP4s, a fresh Blender process reopens the .blend."""
from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest

from jobs_scenes import approved_film, sink_base_into_floor
from studio.checks.run import verify_film
from studio.cli import main
from studio.jobs import queue
from studio.scene.kinematics import tracks_world
from studio.store.project import Project, sha256_file
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import list_states

pytestmark = pytest.mark.blender
ROOT = Path(__file__).resolve().parents[1]
BLENDER_PY = ROOT / ".venv-blender" / "bin" / "python"


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    path = tmp_path_factory.mktemp("film") / "proj"
    with Project.create(path) as p:
        scene, tracks, _ = approved_film(p, n_frames=8, resolution=(64, 36), two_cameras=True)
    return path, scene, tracks


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def read_video(path: Path):
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
        return s.codec_context.name, float(s.average_rate), s.width, s.height, frames


def test_stills_through_each_camera_are_recorded_on_their_states(film):
    path, scene, _ = film
    assert main(["render", str(path), "--stills", "--quiet"]) == 0     # each state through its shot's camera
    stills = path / "renders" / "stills"
    assert sorted(p.name for p in stills.iterdir()) == ["a_main.png", "b_side.png"]
    assert main(["render", str(path), "--stills", "--camera", "main", "--camera", "side", "--quiet"]) == 0
    names = sorted(p.name for p in stills.iterdir())
    assert names == ["a_main.png", "a_side.png", "b_main.png", "b_side.png"]
    assert all(png_size(stills / n) == (64, 36) for n in names)
    assert len({sha256_file(stills / n) for n in names}) == 4    # two poses, two cameras: four pictures
    with Project.open(path) as p:
        by_id = {s.id: s for s in list_states(p)}
        # each state keeps the still of its own shot: a is shot from main, b from side
        assert by_id["a"].still == sha256_file(stills / "a_main.png") + ".png"
        assert by_id["b"].still == sha256_file(stills / "b_side.png") + ".png"
        assert p.asset_path(by_id["b"].still).read_bytes() == (stills / "b_side.png").read_bytes()
        own, every = [j for j in queue.list_jobs(p) if j.kind == "still"]
        assert (own.state, len(own.outputs)) == ("succeeded", 2)
        assert every.state == "succeeded" and every.progress == 1.0 and len(every.outputs) == 4


def test_cycles_still_on_request(film):
    path, _, _ = film
    assert main(["render", str(path), "--stills", "--state", "a", "--camera", "main", "--engine", "cycles",
                 "--samples", "4", "--resolution", "96x54", "--quiet"]) == 0
    with Project.open(path) as p:
        job = queue.list_jobs(p)[-1]
        log = (queue.job_dir(p, job.id) / "log.txt").read_text()
    assert '"engine": "CYCLES"' in log      # what Blender's scene was set to, as the worker read it back
    assert png_size(path / "renders" / "stills" / "a_main.png") == (96, 54)


def test_preview_is_an_h264_mp4_with_the_projects_frames_rate_and_size(film):
    path, _, _ = film
    assert main(["render", str(path), "--preview", "--quiet"]) == 0
    codec, fps, w, h, frames = read_video(path / "renders" / "preview.mp4")
    assert (codec, fps, w, h, len(frames)) == ("h264", 24.0, 64, 36, 8)
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).mean() > 1.0   # the arm moved


def test_a_preview_of_an_in_out_range_holds_only_those_frames(film):
    path, _, _ = film
    assert main(["render", str(path), "--preview", "--frames", "1003..1005", "--quiet"]) == 0
    codec, fps, w, h, frames = read_video(path / "renders" / "preview.mp4")
    assert (codec, w, h, len(frames)) == ("h264", 64, 36, 3)
    with Project.open(path) as p:
        job = queue.list_jobs(p)[-1]
        assert sorted(job.outputs) == ["frames/001003.png", "frames/001004.png", "frames/001005.png",
                                       "out/preview.mp4"]


def test_export_blend_reopens_with_the_scene_and_pose_at_every_storyboard_frame(film, tmp_path):
    path, scene, tracks = film
    blend, video = tmp_path / "deliver" / "film.blend", tmp_path / "deliver" / "film.mp4"
    assert main(["export", str(path), "--blend", str(blend), "--video", str(video), "--quiet"]) == 0
    assert not (tmp_path / "deliver" / "delivery-report.json").exists()   # checks passed: no exceptions
    codec, fps, w, h, frames = read_video(video)
    assert (codec, fps, w, h, len(frames)) == ("h264", 24.0, 64, 36, 8)

    frames_to_check = [s.frame for s in list_states(Project.open(path))] + [1004]
    out = subprocess.run([str(BLENDER_PY), str(ROOT / "studio/blender/inspect_blend.py"), str(blend),
                          *map(str, frames_to_check)], capture_output=True, text=True, timeout=120)
    line = next(x for x in out.stdout.splitlines() if x.startswith("KEYPOSE-JSON "))
    got = json.loads(line[len("KEYPOSE-JSON "):])
    assert (got["frame_start"], got["frame_end"], got["fps"]) == (1001, 1008, 24.0)
    objs = got["objects"]
    assert {n for n, o in objs.items() if o["type"] == "MESH"} == {"floor", "base", "arm"}
    assert objs["arm"]["parent"] == "joint:elbow" and objs["joint:elbow"]["parent"] == "base"
    assert objs["base"]["parent"] is None
    assert got["joints"]["elbow"]["type"] == "revolute"
    assert got["joints"]["elbow"]["axis"] == [0.0, -1.0, 0.0]
    assert (got["joints"]["elbow"]["lower"], got["joints"]["elbow"]["upper"]) == (-0.5, 2.0)
    assert objs["side"]["lens_mm"] == pytest.approx(50.0)
    # shots: wide (state a) is seen through main, profile (state b, frame 1008) through side; the film cuts there
    assert [(s["frame"], s["name"], s["camera"]) for s in got["shots"]] == [(1001, "wide", "main"),
                                                                             (1008, "profile", "side")]
    assert [got["frames"][str(f)]["camera"] for f in (1001, 1004, 1008)] == ["main", "main", "side"]
    world = tracks_world(scene, tracks)
    for f in frames_to_check:
        i = f - 1001
        assert got["frames"][str(f)]["joints"]["elbow"] == pytest.approx(tracks.joints["elbow"][i], abs=1e-4)
        for body in ("floor", "base", "arm"):
            m, want = np.asarray(got["frames"][str(f)]["world"][body]), world[body][i]
            assert np.abs(m[:3, 3] - want[:3, 3]).max() < 1e-4, (f, body)
            r = m[:3, :3].T @ want[:3, :3]
            angle = np.arctan2(0.5 * np.linalg.norm([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]),
                               (np.trace(r) - 1) / 2)
            assert angle < 1e-4, (f, body, angle)


def test_export_with_exceptions_writes_a_delivery_report(film, tmp_path, capsys):
    """The base sunk into the floor (found by the real verifiers) and state b rejected after the bake."""
    path, scene, _ = film
    with Project.open(path) as p:
        sink_base_into_floor(p, scene, frames=(4,))
        verify_film(p)
        record_review(p, "b", "reject", "the arm ends too high", "ben", scene)
    blend = tmp_path / "film.blend"
    assert main(["export", str(path), "--blend", str(blend), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "NoPenetration: fail" in err and "state b: rejected by ben" in err and not blend.exists()
    assert main(["export", str(path), "--blend", str(blend), "--with-exceptions", "--quiet"]) == 0
    assert blend.read_bytes()[:7] == b"BLENDER"
    report = json.loads((tmp_path / "delivery-report.json").read_text())
    assert report["reasons"][1:] == ["NoPenetration: fail"] and report["reasons"][0].startswith("state b: rejected")
    assert [(s["state"], s["status"]) for s in report["unapproved_states"]] == [("b", "rejected")]
    (ev,) = report["failing_checks"][0]["evidence"]
    assert (ev["frame"], ev["a"], ev["b"], ev["depth_m"]) == (1005, "base", "floor", pytest.approx(0.015))
    sig = report["signals"]                 # three figures side by side, never one blended number
    assert sig["completion"] == {"required_checks_pass": False, "text": "required checks fail: NoPenetration: fail"}
    assert 0 <= sig["progress"]["value"] < 1 and sig["coverage"]["film_frames_checked"] == sig["coverage"]["film_frames"]
    md = (tmp_path / "delivery-report.md").read_text()
    assert "NoPenetration" in md and "**b** (rejected)" in md
    assert "- Completion: no (required checks fail: NoPenetration: fail)" in md and "- Progress: " in md
