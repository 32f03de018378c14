"""The shelving example end to end without rendering, replayed from its calls file: a legged
robot walks to a table, grips a box by its sides with both hands, turns, carries it to a shelf
and sets it down, its camera following. Required checks pass; both palms stay on the box from
the grasp to the release; the following camera moves by the robot's displacement; the exported
.blend keys the camera so."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from example_films import replayed
from studio.examples.pipeline import QuietState, _run_job, example_plan
from studio.jobs import spec as specs
from studio.scene.io import load_scene
from studio.scene.kinematics import frame_world, tracks_world
from studio.store.settings import load_settings
from studio.timeline.film import list_segments
from studio.timeline.reviews import list_reviews, state_cameras
from studio.timeline.storyboard import get_state
from studio.timeline.visibility import visible_bodies

ROOT = Path(__file__).resolve().parents[1]
BLENDER_PY = ROOT / ".venv-blender" / "bin" / "python"
STATES = ["start", "arrive", "reach", "lift", "turn", "shelf", "set_down", "release", "back", "rest"]


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    yield from replayed(tmp_path_factory, "shelving")


def test_required_checks_pass_and_every_state_was_approved(film):
    summary, project, tracks = film
    assert summary.required_pass, [(r.name, r.verdict, r.evidence[:2]) for r in summary.film_reports]
    assert summary.approved == STATES
    reports = {r.name: r for r in summary.film_reports}
    assert reports["NoPenetration"].metrics["max_depth_m"] <= 0.005
    assert reports["EventsSatisfied"].metrics["held"] == reports["EventsSatisfied"].metrics["events"] == 6
    assert (tracks.frame_start, tracks.frame_end) == (1001, 1429)
    assert [s["tool"] for s in list_segments(project)] == ["walk", "grasp", "carry", "carry", "carry", "place",
                                                           "release", "walk", "interpolate"]


def test_both_palms_hold_the_box_from_the_grasp_to_the_release(film):
    _, project, tracks = film
    scene = load_scene(project)
    world = tracks_world(scene, tracks)
    grip, release = get_state(project, "reach").frame, get_state(project, "set_down").frame
    held = slice(grip - tracks.frame_start, release - tracks.frame_start + 1)
    for palm, side in (("gripper_l", "grip_left"), ("gripper_r", "grip_right")):
        gap = np.linalg.norm(frame_world(scene, world, palm)[held, :3, 3] - frame_world(scene, world, side)[held, :3, 3],
                             axis=1)
        assert gap.max() < 0.01, palm                 # on the box's side face all the while it is held
        last = frame_world(scene, world, palm)[-1, :3, 3] - frame_world(scene, world, side)[-1, :3, 3]
        assert np.linalg.norm(last) > 0.05, palm      # and off it at the end
    box = tracks.roots["box"]
    assert box[0, 2] == pytest.approx(0.62 + 0.12, abs=1e-6)          # on the table top
    assert box[-1, 2] == pytest.approx(0.72 + 0.12, abs=1e-6)         # on the shelf top
    assert np.linalg.norm(box[-1, :2] - box[0, :2]) > 1.4             # carried across the room
    pelvis = tracks.roots["pelvis"]
    yaw = lambda q: np.degrees(2 * np.arctan2(q[6], q[3]))            # noqa: E731  (a yaw-only root)
    assert yaw(pelvis[0]) == pytest.approx(0, abs=1e-6) and yaw(pelvis[-1]) == pytest.approx(90, abs=1e-6)


def test_the_camera_follows_the_robot(film):
    _, project, tracks = film
    scene = load_scene(project)
    cam = scene.camera("cam_follow")
    assert cam.follow == "pelvis"
    path = specs.camera_paths(scene, tracks)["cam_follow"]           # what the Blender worker keys
    a, b = get_state(project, "arrive").frame - 1001, get_state(project, "shelf").frame - 1001
    moved = tracks.roots["pelvis"][b, :3] - tracks.roots["pelvis"][a, :3]
    assert np.linalg.norm(moved) > 1.0
    np.testing.assert_allclose(np.subtract(path["position"][b], path["position"][a]), moved, atol=1e-9)
    np.testing.assert_allclose(np.subtract(path["target"][b], path["target"][a]), moved, atol=1e-9)
    plan = example_plan("shelving")
    reviewed = {r.state_id: r.visible for r in list_reviews(project)}
    for sid in ("start", "shelf", "rest"):                            # the robot and the box in view throughout
        st = get_state(project, sid)
        seen = visible_bodies(scene, st.pose, state_cameras(scene, plan, st), project.path)
        assert {"pelvis", "torso", "box", "hand_l", "hand_r"} <= set(seen), sid
        assert reviewed[sid] == seen                                  # the review bound what the placed camera saw


@pytest.mark.blender
def test_the_exported_blend_keys_the_following_camera(film):
    _, project, tracks = film
    blend = project.path / "exports" / "shelving.blend"
    _run_job(project, "export_blend", lambda d: specs.blend_spec(project, d, str(blend), None, (64, 36)),
             load_settings(), QuietState())
    frames = [1001, 1321]
    out = subprocess.run([str(BLENDER_PY), str(ROOT / "studio/blender/inspect_blend.py"), str(blend),
                          *map(str, frames)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(next(x for x in out.stdout.splitlines() if x.startswith("KEYPOSE-JSON "))[13:])
    cam = [np.array(got["frames"][str(f)]["cameras"]["cam_follow"]) for f in frames]
    pelvis = [tracks.roots["pelvis"][f - 1001, :3] for f in frames]
    offset = load_scene(project).camera("cam_follow").position
    for c, p in zip(cam, pelvis):
        np.testing.assert_allclose(c, p + offset, atol=1e-4)
