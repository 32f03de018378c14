"""The marble run example end to end, replayed from its calls file: scene, plan, key states
through their checks, the gate, motion by the planar tool the plan names (one run), and the
film's required checks."""
from __future__ import annotations

import numpy as np
import pytest

from studio.checks.report import required_checks_pass
from studio.checks.run import verify_film
from studio.examples.pipeline import example_plan
from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.timeline.commands import CommandStack
from studio.timeline.film import list_segments, load_film_tracks, segment_id
from studio.timeline.gate import GateError
from studio.timeline.motion import Segment, motion_tool
from studio.timeline.plan import plan_segments, validate_plan
from studio.timeline.segment_commands import AuthorSegment
from studio.timeline.storyboard import State, list_states

from example_films import example_scene, finish, state_reports, storyboard

MARBLE_RADIUS, CUP_X, CUP_INNER, CUP_HEIGHT, CUP_BASE = 0.012, 0.33, 0.046, 0.05, 0.004


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    """The project after plan, states, state checks, approvals, motion and film checks."""
    project = storyboard("marble_run", tmp_path_factory.mktemp("marble") / "marble_run")
    reports_before = state_reports(project)
    with pytest.raises(GateError) as refused:            # nothing approved yet: the gate refuses
        CommandStack().run(AuthorSegment(project, "released..lower_ramp", "ana"))
    finish("marble_run", project)
    baked = [s["segment"] for s in list_segments(project)]
    reports = verify_film(project)
    yield {"project": project, "state_reports": reports_before, "refused": refused.value,
           "baked": baked, "reports": {r.name: r for r in reports}, "report_list": reports}
    project.close()


def test_scene_round_trips_and_plan_validates(tmp_path):
    scene = example_scene("marble_run", tmp_path / "m")
    again = Scene.from_json(scene.to_json())
    assert again.to_dict() == scene.to_dict()
    assert {"marble", "cup", "ramp_1", "ramp_2", "ramp_3"} <= set(scene.body_names)
    assert all(scene.body(n).geometry.source == "cad" for n in scene.body_names)
    plan = example_plan("marble_run")
    validate_plan(plan, scene)
    assert [s["frame"] for s in plan["states"]] == [1001, 1086, 1120]
    assert plan_segments(plan) == ["released..lower_ramp", "lower_ramp..in_cup"]


def test_simulation_repeats_exactly(tmp_path):
    scene = example_scene("marble_run", tmp_path / "m")
    plan = example_plan("marble_run")
    release = Pose.rest(scene).completed(scene)
    seg = Segment(segment_id("released", "in_cup"), scene, State("released", 1001, release),
                  State("in_cup", 1120, release), plan, 24, tmp_path)
    params = dict(plan["motion"][0]["params"], max_difference=1e9)
    a, b = (motion_tool("planar").author(seg, params).tracks for _ in range(2))
    np.testing.assert_array_equal(a.roots["marble"], b.roots["marble"])
    assert a.frame_start == 1001 and a.frame_end == 1120


def test_key_states_pass_their_checks(film):
    assert set(film["state_reports"]) == {"released", "lower_ramp", "in_cup"}
    for sid, reports in film["state_reports"].items():
        assert required_checks_pass(reports), (sid, [(r.name, r.verdict, r.evidence[:2]) for r in reports])


def test_gate_refused_motion_before_approval(film):
    reasons = dict(film["refused"].reasons)
    assert reasons["released"].startswith("unreviewed")
    assert film["baked"] == ["released..lower_ramp", "lower_ramp..in_cup"]
    assert [s["tool"] for s in list_segments(film["project"])] == ["planar", "planar"]
    assert [s["segment"] for s in list_segments(film["project"])] == film["baked"]


def test_baked_film_hits_states_and_passes_required_checks(film):
    project = film["project"]
    tracks = load_film_tracks(project)
    assert (tracks.frame_start, tracks.frame_end) == (1001, 1120)
    for s in list_states(project):
        np.testing.assert_array_equal(tracks.roots["marble"][s.frame - 1001], s.pose.roots["marble"])
    assert required_checks_pass(film["report_list"]), \
        [(r.name, r.verdict, r.evidence[:2]) for r in film["report_list"]]
    assert film["reports"]["EventsSatisfied"].metrics["held"] == 4
    assert film["reports"]["NoPenetration"].metrics["max_depth_m"] <= 0.001
    assert film["reports"]["Supported"].metrics["floating_rate"] < 0.08    # only the drops between ramps


def test_marble_ends_at_rest_in_the_cup(film):
    tracks = load_film_tracks(film["project"])
    m = tracks.roots["marble"][:, :3]
    lo, hi = [CUP_X - CUP_INNER, -CUP_INNER, 0.0], [CUP_X + CUP_INNER, CUP_INNER, CUP_HEIGHT]
    assert np.all(m[-1] >= lo) and np.all(m[-1] <= hi)
    resting_z = CUP_BASE + MARBLE_RADIUS
    assert m[-1, 2] == pytest.approx(resting_z, abs=1e-3)                  # on the cup's base
    assert np.abs(np.diff(m[-10:], axis=0)).max() < 1e-4                    # still for the last frames
    assert np.all(m[:, 1] == 0.0)                                            # stays in the run's plane
    assert m[0, 2] - m[-1, 2] > 0.35                                         # came down from the top ramp
    on_lower = m[1086 - 1001]
    assert -0.25 < on_lower[0] < 0.25 and 0.12 < on_lower[2] < 0.16          # over the lowest ramp
