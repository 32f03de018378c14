"""Every shot through its own camera, in a real Blender: the stills, the preview, the
film and the .blend of the two-shot film of `shot_scenes` (made through the tool
layer, as a person would make it), told apart by the colour each camera sees and
by the .blend's markers."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from studio.cli import main
from studio.jobs import queue
from studio.store.project import Project, sha256_file
from studio.timeline.storyboard import list_states
from studio.tools.box import ToolBox
from shot_scenes import APPROACH, REVERSE, film_calls

pytestmark = pytest.mark.blender
ROOT = Path(__file__).resolve().parents[1]
BLENDER_PY = ROOT / ".venv-blender" / "bin" / "python"


@pytest.fixture(scope="module")
def two_shots(tmp_path_factory):
    path = tmp_path_factory.mktemp("shots") / "crossing"
    with Project.create(path) as p:
        box = ToolBox(p, actor="person")
        for c in film_calls():
            box.call(c["tool"], c["arguments"])
    assert main(["bake", str(path), "--quiet"]) == 0
    assert main(["verify", str(path)]) == 0
    return path


def seen_through(rgb: np.ndarray) -> str:
    """Which backdrop fills a picture: 'cam_north' (red) or 'cam_south' (blue)."""
    r, b = (float(rgb[..., i].astype(float).mean()) for i in (0, 2))
    assert abs(r - b) > 25, f"neither backdrop fills the picture (mean red {r:.0f}, blue {b:.0f})"
    return "cam_north" if r > b else "cam_south"


def crate_pixels(rgb: np.ndarray) -> int:
    """Yellow pixels: the crate, which only cam_north can see."""
    x = rgb.astype(int)
    return int(((x[..., 0] > 120) & (x[..., 1] > 100) & (x[..., 2] < 80)).sum())


def read_video(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def test_each_state_still_is_seen_through_its_shots_camera(two_shots):
    assert main(["render", str(two_shots), "--stills", "--quiet"]) == 0
    stills = two_shots / "renders" / "stills"
    assert sorted(p.name for p in stills.iterdir()) == ["end_cam_south.png", "start_cam_north.png"]
    start = np.asarray(Image.open(stills / "start_cam_north.png").convert("RGB"))
    end = np.asarray(Image.open(stills / "end_cam_south.png").convert("RGB"))
    assert (seen_through(start), seen_through(end)) == ("cam_north", "cam_south")
    assert crate_pixels(start) > 20 and crate_pixels(end) == 0
    with Project.open(two_shots) as p:
        by_id = {s.id: s for s in list_states(p)}
        assert by_id["end"].still == sha256_file(stills / "end_cam_south.png") + ".png"


def test_the_preview_cuts_to_the_reverse_shots_camera_at_its_first_frame(two_shots):
    assert main(["render", str(two_shots), "--preview", "--quiet"]) == 0
    with Project.open(two_shots) as p:
        job = queue.list_jobs(p)[-1]
        assert [(s["frame"], s["name"], s["camera"]) for s in job.spec["shots"]] == \
            [(1001, "approach", "cam_north"), (1007, "reverse", "cam_south")]
        frames = {f: np.asarray(Image.open(queue.job_dir(p, job.id) / f"frames/{f:06d}.png").convert("RGB"))
                  for f in (*APPROACH, *REVERSE)}
    assert [seen_through(frames[f]) for f in APPROACH] == ["cam_north"] * 6
    assert [seen_through(frames[f]) for f in REVERSE] == ["cam_south"] * 6
    assert all(crate_pixels(frames[f]) > 20 for f in APPROACH)
    assert all(crate_pixels(frames[f]) == 0 for f in REVERSE)
    video = read_video(two_shots / "renders" / "preview.mp4")        # what a person plays
    assert [seen_through(v) for v in video] == ["cam_north"] * 6 + ["cam_south"] * 6


def test_the_exported_blend_binds_each_shots_camera_to_a_marker_named_for_it(two_shots, tmp_path):
    blend, video = tmp_path / "out" / "crossing.blend", tmp_path / "out" / "crossing.mp4"
    assert main(["export", str(two_shots), "--blend", str(blend), "--video", str(video), "--quiet"]) == 0
    assert [seen_through(v) for v in read_video(video)] == ["cam_north"] * 6 + ["cam_south"] * 6
    frames = [1001, 1006, 1007, 1012]
    out = subprocess.run([str(BLENDER_PY), str(ROOT / "studio/blender/inspect_blend.py"), str(blend),
                          *map(str, frames)], capture_output=True, text=True, timeout=300)
    line = next(x for x in out.stdout.splitlines() if x.startswith("KEYPOSE-JSON "))
    got = json.loads(line[len("KEYPOSE-JSON "):])
    assert got["shots"] == [{"frame": 1001, "camera": "cam_north", "name": "approach"},
                            {"frame": 1007, "camera": "cam_south", "name": "reverse"}]
    assert [got["frames"][str(f)]["camera"] for f in frames] == ["cam_north", "cam_north", "cam_south", "cam_south"]


def test_the_windows_shot_camera_view_uses_the_shot_holding_the_playhead(two_shots):
    from studio.ui.session import Session
    s = Session.open(two_shots)
    try:
        assert [s.shot_at(f) for f in (1001, 1006, 1007, 1012)] == ["approach", "approach", "reverse", "reverse"]
        assert [s.camera_at(f).name for f in (1001, 1006, 1007, 1012)] == \
            ["cam_north", "cam_north", "cam_south", "cam_south"]
    finally:
        s.close()
