"""Baking never hides a joint past its limit: the overshoot is kept, JointLimits names it, the scorer counts it."""
from __future__ import annotations

import numpy as np
import pytest
from timeline_scenes import author_arm

from studio.checks.run import verify_film
from studio.cli import main
from studio.examples.baseline import single_pass
from studio.store.project import Project
from studio.timeline import film
from studio.timeline.bake import ROUNDING, bake_segment
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.storyboard import get_state


def _overshooting(project, scene, amplitude: float = 2.2):
    """A tool's elbow track from rest (0) to bent (1.2) that swings past the elbow's upper limit 2.5."""
    a, b = get_state(project, "rest"), get_state(project, "bent")
    tracks = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
    t = np.linspace(0.0, 1.0, tracks.n_frames)
    tracks.joints["elbow"] = 1.2 * t + amplitude * np.sin(np.pi * t)
    return tracks


def test_an_overshoot_is_kept_and_fails_joint_limits_with_its_frames(tmp_project):
    scene = author_arm(tmp_project)
    tool = _overshooting(tmp_project, scene)
    stored = bake_segment(tmp_project, "rest..bent", tool, "swing")
    np.testing.assert_allclose(stored.joints["elbow"], tool.joints["elbow"], atol=1e-12)   # nothing clamped
    assert stored.joints["elbow"].max() > 2.8
    past = [int(f) for f, v in zip(stored.frames, stored.joints["elbow"]) if v > 2.5]
    assert len(past) > 5
    reports = {r.name: r for r in verify_film(tmp_project)}
    jl = reports["JointLimits"]
    assert jl.verdict == "fail"
    (ev,) = jl.evidence
    assert (ev["joint"], ev["bound"], ev["limit"], ev["frames"]) == ("elbow", "upper", 2.5, [past[0], past[-1]])
    assert ev["value"] == pytest.approx(float(stored.joints["elbow"].max()))
    assert jl.metrics["joint_violation_rate"] == pytest.approx(len(past) / (2 * stored.n_frames))


def test_only_a_rounding_hair_past_a_limit_is_set_onto_it(tmp_project):
    scene = author_arm(tmp_project)
    a, b = get_state(tmp_project, "rest"), get_state(tmp_project, "bent")
    tool = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
    tool.joints["elbow"][3] = -0.5 * ROUNDING          # a hair under the lower limit 0
    tool.joints["elbow"][4] = -3.0 * ROUNDING          # more than a hair: kept
    stored = bake_segment(tmp_project, "rest..bent", tool, "interpolate")
    assert stored.joints["elbow"][3] == 0.0
    assert stored.joints["elbow"][4] == pytest.approx(-3.0 * ROUNDING)
    jl = {r.name: r for r in verify_film(tmp_project)}["JointLimits"]
    assert jl.verdict == "fail" and jl.evidence[0]["frames"] == [1005, 1005]


def test_score_shows_the_joint_violations_of_an_overshooting_baseline(tmp_path, capsys):
    """A film whose tool swings past a limit, and its single-pass baseline: the scorer tells them apart."""
    path = tmp_path / "swing"
    with Project.create(path) as p:
        scene = author_arm(p)
        bake_segment(p, "rest..bent", _overshooting(p, scene), "swing")
        tracks = film.load_film_tracks(p)
        frames_out = int(np.sum(tracks.joints["elbow"] > 2.5))
        joint_frames = 2 * tracks.n_frames
    baseline = single_pass(path, tmp_path / "swing-single-pass")
    capsys.readouterr()
    assert main(["score", str(path), str(baseline)]) == 0
    film_row, baseline_row = (line.split() for line in capsys.readouterr().out.splitlines()[1:3])
    assert film_row[0].endswith("/swing") and baseline_row[0].endswith("/swing-single-pass")
    assert film_row[4] == f"{100 * frames_out / joint_frames:.1f}%" != "0.0%" and film_row[5] == "FAIL"
    assert baseline_row[4] == "0.0%"        # straight from the first state to the last: inside the limits
