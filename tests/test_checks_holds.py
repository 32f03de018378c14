"""Holds kept at every frame and between frames: a carried box that slips out of the hand fails
EventsSatisfied naming the frames, the effector and the drift; one held within its tolerance
passes; a drift that peaks between two frames is found at the time it peaks. Films made through
the tool layer; the slip itself is measured here by forward kinematics of the baked tracks."""
from __future__ import annotations

import numpy as np
import pytest
from hold_films import carry_film

from studio.checks.holds import holds_of
from studio.checks.report import failing_required, required_checks_pass
from studio.checks.run import verify_film
from studio.cli import main
from studio.scene.io import load_scene
from studio.scene.kinematics import frame_world, tracks_world
from studio.scene.transforms import invert
from studio.timeline.film import load_film_tracks
from studio.tools.box import ToolBox


def _baked(path, **kw):
    project = carry_film(path, **kw)
    out = ToolBox(project, actor="Ada").call("author_segment", {"segment": "lifted..moved"})
    return project, out.result["notes"]


def _slip(project) -> np.ndarray:
    """(F,) how far the gripper is from where it held the box at the first frame, in the box's frame."""
    scene, tracks = load_scene(project), load_film_tracks(project)
    world = tracks_world(scene, tracks)
    grip = frame_world(scene, world, "gripper")[:, :, 3]
    box = world["box"]
    held = invert(box[0]) @ grip[0]
    return np.linalg.norm(grip[:, :3] - (box @ held)[:, :3], axis=1)


def test_a_carried_box_that_slips_30_mm_over_ten_frames_fails_events_naming_the_hold(tmp_path, capsys):
    project, notes = _baked(tmp_path / "slips", frames=11, slip=0.03)
    assert "the second state has it 30.0 mm from there" in notes[-1]        # the tool said so
    slip = _slip(project)
    assert slip[0] == pytest.approx(0.0, abs=1e-9) and slip[-1] == pytest.approx(0.03, abs=1e-4)
    reports = {r.name: r for r in verify_film(project)}
    events = reports["EventsSatisfied"]
    assert events.verdict == "fail" and not required_checks_pass(list(reports.values()))
    assert "EventsSatisfied" in "; ".join(failing_required(list(reports.values())))
    (ev,) = events.evidence
    assert (ev["kind"], ev["effector"], ev["body"]) == ("hold", "gripper", "box")
    assert ev["drift_m"] == pytest.approx(0.03, abs=2e-4) and ev["tolerance_m"] == 0.01
    beyond = np.nonzero(slip > 0.01)[0] + 1001                  # the frames the slip is past 1 cm
    assert ev["window"][1] == 1011 and ev["window"][0] <= beyond[0]
    assert "gripper drifts 30.0 mm from its grip on box" in ev["reason"]
    for name in ("NoPenetration", "JointLimits", "AnimationWellFormed"):
        assert reports[name].verdict == "pass"
    path = project.path
    project.close()
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "required checks failing: EventsSatisfied" in out


def test_a_carried_box_held_within_its_tolerance_passes(tmp_path):
    project, _ = _baked(tmp_path / "held", frames=11, slip=0.005)
    assert _slip(project).max() == pytest.approx(0.005, abs=1e-4)
    reports = {r.name: r for r in verify_film(project)}
    events = reports["EventsSatisfied"]
    assert events.verdict == "pass", events.evidence
    assert events.metrics["holds"] == 1
    assert list(events.metrics["hold_drift_m"].values())[0] == pytest.approx(0.005, abs=1e-4)
    assert required_checks_pass(list(reports.values()))


def test_a_drift_that_peaks_between_two_frames_is_found_when_it_peaks(tmp_path):
    # the box rides rigidly on the gripper at every frame, but a swing of 2.4 rad in 5 frames moves the
    # gripper on an arc while the box's root goes straight between frames (as a renderer draws it)
    project, _ = _baked(tmp_path / "fast", frames=6, swing=(-1.2, 1.2))
    assert _slip(project).max() < 1e-6                       # nothing to see at the frames themselves
    events = {r.name: r for r in verify_film(project)}["EventsSatisfied"]
    assert events.verdict == "fail"
    (ev,) = events.evidence
    assert ev["frame"] != int(ev["frame"]) and 1001 < ev["frame"] < 1006
    assert ev["drift_m"] > 0.01
    slow, _ = _baked(tmp_path / "slow", frames=48, swing=(-1.2, 1.2))
    assert {r.name: r for r in verify_film(slow)}["EventsSatisfied"].verdict == "pass"


def test_a_hold_runs_from_its_grasp_to_its_release_with_each_segments_tolerance():
    records = [{"frame": "palm", "body": "crate", "start": 10, "end": 10, "tolerance": 0.01},     # grasp
               {"frame": "palm", "body": "crate", "start": 10, "end": 20, "tolerance": 0.01},     # carry
               {"frame": "palm", "body": "crate", "start": 20, "end": 30, "tolerance": 0.04},     # place, loosened
               {"frame": "palm", "body": "crate", "start": 30, "end": 30, "clear": 40},           # release
               {"frame": "palm", "body": "crate", "start": 50, "end": 50, "tolerance": 0.005},    # grasped again,
               {"frame": "palm", "body": "crate", "start": 70, "end": 70, "clear": 80},           # other tools between,
               {"frame": "thumb", "body": "crate", "start": 10, "end": 20}]                       # released
    holds = holds_of(records)
    assert [(h.effector, h.first, h.last) for h in holds] == [("palm", 10, 30), ("thumb", 10, 20), ("palm", 50, 70)]
    palm = holds[0]
    assert palm.tolerance[15] == 0.01 and palm.tolerance[25] == 0.04 and palm.tolerance[20] == 0.04
    assert palm.tolerance[30] == 0.04                        # where two segments meet, the larger
    again = holds[2]
    assert again.tolerance[50] == 0.005 and again.tolerance[60] == 0.01 and again.tolerance[70] == 0.01
    rides = holds_of([{"frame": "hips", "body": "crate", "start": 10, "end": 20, "ride": True},
                      {"frame": "hips", "body": "crate", "start": 20, "end": 30, "ride": True},
                      {"frame": "hips", "body": "crate", "start": 40, "end": 50, "ride": True}])
    assert [(h.id, h.last) for h in rides] == [("ride_hips_crate_10", 30), ("ride_hips_crate_40", 50)]
