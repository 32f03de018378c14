"""The three signals, side by side: completion, progress and coverage, on a small
film made through the tool layer and checked by the real verifiers."""
from __future__ import annotations

import calls_scenes
from studio.tools.box import ToolBox
from studio.checks.run import verify_film
from studio.checks.signals import signals
from studio.cli import main


def made(project, upto: int | None = None):
    box = ToolBox(project, actor="replay")
    for c in calls_scenes.calls()[:upto]:
        box.call(c["tool"], c["arguments"])


def test_signals_follow_the_film_from_unverified_to_complete(tmp_project, capsys):
    made(tmp_project)
    s = signals(tmp_project)
    assert not s.complete and s.completion == "the film has not been verified"
    assert s.coverage.film_frames == 25 and s.coverage.film_checked == 0
    assert s.coverage.states == 3 and s.coverage.states_checked == 3
    assert 0 < s.progress < 1
    verify_film(tmp_project)
    s = signals(tmp_project)
    assert s.complete and s.completion == "required checks pass"
    assert s.coverage.film_checked == 25 and {"NoPenetration", "JointLimits"} <= set(s.coverage.film_checks)
    assert any(u.startswith("occlusion") for u in s.coverage.uncertified)
    d = s.to_dict()
    assert set(d) == {"completion", "progress", "coverage"}          # three figures, never one blended number
    assert main(["info", str(tmp_project.path)]) == 0
    out = capsys.readouterr().out
    assert "completion yes: required checks pass" in out and "coverage film 25/25 frames" in out


def test_a_state_edited_after_its_checks_is_named_as_not_certified(tmp_project):
    made(tmp_project, upto=12)                 # the scene, plan, states, and their checks
    ToolBox(tmp_project, actor="person").call("set_state", {"state": "slid", "roots": {
        "crate_a": [0.3, -0.3, 0.15, 1, 0, 0, 0]}})
    s = signals(tmp_project)
    assert s.coverage.states_checked == 2
    assert "states whose checks are missing or stale: slid" in s.coverage.uncertified
    assert s.completion == "no film baked" and not s.complete
