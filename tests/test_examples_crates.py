"""The crates example end to end without rendering, replayed from its calls file: a rigid-body
film made only by the simulate tool (a ball rolled along a shelf knocks three crates off it),
states sampled from its one run, required checks passing, every crate at rest on the floor."""
from __future__ import annotations

import numpy as np
import pytest

from example_films import replayed
from studio.examples.pipeline import example_plan
from studio.timeline.author import authored
from studio.timeline.film import list_segments
from studio.timeline.storyboard import list_states


CRATES = ["crate_1", "crate_2", "crate_3"]
CRATE = 0.16                                   # a crate's edge, metres
FLOOR = ([-0.6, 0.7, 0.0], [0.6, 1.8, 0.2])     # on the floor past the shelf's end (1.4 m long, centred)


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    yield from replayed(tmp_path_factory, "crates")


def test_required_checks_pass_and_every_state_was_approved(film):
    summary, project, _ = film
    assert summary.required_pass, [(r.name, r.verdict, r.evidence[:2]) for r in summary.film_reports]
    assert summary.approved == ["rolling", "falling", "at_rest"]
    reports = {r.name: r for r in summary.film_reports}
    assert reports["NoPenetration"].metrics["max_depth_m"] <= 0.005
    assert reports["EventsSatisfied"].metrics["held"] == 7


def test_the_motion_is_the_simulate_tools_one_run(film):
    _, project, tracks = film
    assert [s["tool"] for s in list_segments(project)] == ["simulate", "simulate"]
    simulated = example_plan("crates")["motion"][0]["params"]["bodies"]
    assert set(simulated) == {"ball", *CRATES}
    for s in list_states(project):
        for body in simulated:
            np.testing.assert_array_equal(tracks.roots[body][s.frame - tracks.frame_start], s.pose.roots[body])
    notes = authored(project, "falling..at_rest")["notes"][0]
    assert "ends 0.0000" in notes and "passes 0.0000" in notes


def test_the_crates_rest_on_the_floor_past_the_shelf(film):
    _, _, tracks = film
    lo, hi = FLOOR
    for c in CRATES:
        end = tracks.roots[c][-12:, :3]
        assert np.all(end[-1] >= lo) and np.all(end[-1] <= hi), c
        assert end[-1, 2] == pytest.approx(CRATE / 2, abs=0.01)        # lying on a face
        assert np.max(np.linalg.norm(end - end[-1], axis=1)) < 2e-3               # still for half a second
        assert tracks.roots[c][0, 2] > 0.7                                         # they started on the shelf
