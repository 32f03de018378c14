"""Single-pass baselines (the studio's own `examples/baseline.py` on a film
built here, and the marble run's committed one, copied) taken through
`studio agent repair --film --until-pass` to a film whose required checks
pass, the rounds and proposals reported."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
from motion_films import doorway_source

from studio.checks.report import failing_required
from studio.checks.run import verify_film
from studio.cli import main
from studio.examples.baseline import single_pass
from studio.repair.film_failures import failing_runs
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.reviews import list_reviews, reviewer_kinds

ROOT = Path(__file__).resolve().parents[1]


def test_a_single_pass_baseline_through_a_wall_is_repaired_round_by_round_until_it_passes(tmp_path, capsys):
    doorway_source(tmp_path / "source").close()
    base = single_pass(tmp_path / "source", tmp_path / "baseline")
    with Project.open(base) as project:
        failing = failing_required(verify_film(project))
        assert failing == ["NoPenetration: fail"] and not list_reviews(project)
    code = main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", "6"])
    out = capsys.readouterr().out
    assert code == 0, out
    rounds = re.findall(r"^round (\d+): required failing: (.*?); (\d+) failing run\(s\), (\d+) verified proposal",
                        out, re.M)
    assert rounds and rounds[0][1] == "NoPenetration: fail" and all(int(r[3]) >= 1 for r in rounds)
    summary = re.search(r"^(\d+) round\(s\), (\d+) proposal\(s\), (\d+) applied; required checks pass", out, re.M)
    assert summary and int(summary.group(1)) == len(rounds) and int(summary.group(3)) >= 1
    with Project.open(base) as project:
        assert not failing_required(verify_film(project))
        assert len(list_segments(project)) >= 2                     # the single segment was split by key states
        reviews = list_reviews(project)
        assert reviews and {r.reviewer for r in reviews} == {"batch"}
        assert reviewer_kinds(project) == {"batch": "batch"}


def test_the_marble_runs_single_pass_baseline_is_repaired_until_it_passes(tmp_path, capsys):
    """The committed baseline, copied: the marble flown straight through three ramps."""
    base = tmp_path / "baseline"
    shutil.copytree(ROOT / "projects" / "marble_run-single-pass", base)
    with Project.open(base) as project:
        assert failing_required(verify_film(project)) == ["NoPenetration: fail"] and not list_reviews(project)
    assert main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", "6"]) == 0
    out = capsys.readouterr().out
    summary = re.search(r"^(\d+) round\(s\), (\d+) proposal\(s\), (\d+) applied; required checks pass", out, re.M)
    assert summary and int(summary.group(3)) >= 1, out
    with Project.open(base) as project:
        assert not failing_required(verify_film(project))
        assert {r.reviewer for r in list_reviews(project)} == {"batch"}


def _committed_baseline_passes(tmp_path, name: str, failing: list[str], rounds: int = 4) -> str:
    base = tmp_path / "baseline"
    shutil.copytree(ROOT / "projects" / f"{name}-single-pass", base)
    with Project.open(base) as project:
        assert failing_required(verify_film(project)) == failing and not list_reviews(project)
    code = main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", str(rounds)])
    return code


def test_the_crates_single_pass_baseline_is_switched_to_the_plans_simulation_until_it_passes(tmp_path, capsys):
    """The committed baseline flies the ball and crates straight from the first state to the last;
    the plan simulates them, and its unmet contact event asks for that tool on the segment."""
    code = _committed_baseline_passes(tmp_path, "crates", ["NoPenetration: fail", "EventsSatisfied: fail"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"#1 \[applied\] film:rolling..at_rest EventsSatisfied \(offline\): rolling..at_rest: "
                     r"interpolate → simulate as the plan has it for rolling..falling — meets event ball_hits_crate", out)
    assert re.search(r"^1 round\(s\), 1 proposal\(s\), 1 applied; required checks pass", out, re.M)
    with Project.open(tmp_path / "baseline") as project:
        assert not failing_required(verify_film(project))
        assert [(s["segment"], s["tool"]) for s in list_segments(project)] == [("rolling..at_rest", "simulate")]


def test_the_dogs_single_pass_baseline_gets_its_grasp_by_a_key_state_until_it_passes(tmp_path, capsys):
    """The committed baseline never brings the mouth to the newspaper; a key state inside the grasp's
    window does, and the events after it follow."""
    code = _committed_baseline_passes(tmp_path, "dog_paper", ["EventsSatisfied: fail"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"film:stand..release EventsSatisfied \(offline\): insert key state key_10(2[89]|3[012]) at "
                     r"10\d\d: .* — meets event picks_up; adds none", out)
    with Project.open(tmp_path / "baseline") as project:
        assert not failing_required(verify_film(project))
        assert len(list_segments(project)) == 2
        assert {r.reviewer for r in list_reviews(project)} == {"batch"}


def _required_frames(project: Project) -> set[int]:
    reports = verify_film(project)
    return {f for r in failing_runs(reports, list_segments(project)) if r.required for f in r.frames}


def test_the_doorways_single_pass_baseline_is_repaired_round_by_round_until_it_passes_without_moving_the_set(
        tmp_path, capsys):
    """The committed baseline glides the robot and flies the panel straight from the first state to the
    last, through the stand and the wall, with no grasp. The batch repair brings the hands to the panel
    (a key state that meets the reach and the grasps), takes the robot round the stand and the panel
    through the doorway each by a path planned at once (held aside over every frame near the obstacle,
    back on the way after), and reaches a passing film: no penetration at a frame or between two, every
    event and hold met, the stand, the wall and the floor never moved, and no new Continuity spike."""
    base = tmp_path / "baseline"
    shutil.copytree(ROOT / "projects" / "doorway-single-pass", base)
    with Project.open(base) as project:
        scene = load_scene(project)
        static = [n for n in scene.body_names if scene.body(n).is_static]
        before_tracks = load_film_tracks(project)
        before = _required_frames(project)
        reports = verify_film(project)
        assert failing_required(reports) == ["NoPenetration: fail", "EventsSatisfied: fail"]
        spikes = len({r.name: r for r in reports}["Continuity"].evidence)
    code = main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", "16"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"#1 \[applied\] film:start..release EventsSatisfied \(offline\): insert key state key_1065 "
                     r"at 1065: .* — meets event reach_panel; adds none", out), out
    summary = re.search(r"^(\d+) round\(s\), (\d+) proposal\(s\), (\d+) applied; required checks pass", out, re.M)
    assert summary and int(summary.group(3)) >= 3, out
    applied = re.findall(r"^  #\d+ \[applied\] .*$", out, re.M)
    assert len(applied) >= 3 and all("adds none" in line for line in applied), out
    assert not any(re.search(rf": (insert key states? [^:]*: )?(move|push|turn|step) {b}\b", line)
                   for line in applied for b in static), out
    assert any("held from" in line and "back onto it" in line for line in applied), out
    with Project.open(base) as project:
        reports = {r.name: r for r in verify_film(project)}
        assert not failing_required(list(reports.values())), [(r.name, r.evidence[:2]) for r in reports.values()
                                                             if r.verdict == "fail"]
        assert reports["NoPenetration"].verdict == "pass" and not reports["NoPenetration"].evidence
        assert reports["EventsSatisfied"].verdict == "pass"         # every event and every hold kept
        assert len(reports["Continuity"].evidence) <= spikes
        after_tracks = load_film_tracks(project)
        for b in static:
            assert np.allclose(after_tracks.roots[b], before_tracks.roots[b], rtol=0, atol=1e-9), b
        frames = after_tracks.frame_end - after_tracks.frame_start + 1
        assert len(before) > 0.9 * frames and not _required_frames(project)
        assert {r.reviewer for r in list_reviews(project)} == {"batch"}


def test_the_person_doors_single_pass_baseline_is_repaired_through_the_door_on_its_hinge_until_it_passes(
        tmp_path, capsys):
    """The committed baseline walks the skinned person straight from the first state to the seated last,
    her skin through the floor and through the door, her hand never on the knob. The batch lifts her out
    of the floor, brings her hand to the knob by key states (the reach met), and turns the door further
    open on its own hinge, clear of her (a part that moves only on its joint), to a passing film: no
    penetration at a frame or between two, every event met, nothing static moved, no new Continuity spike."""
    base = tmp_path / "baseline"
    shutil.copytree(ROOT / "projects" / "person_door-single-pass", base)
    with Project.open(base) as project:
        scene = load_scene(project)
        static = [n for n in scene.body_names if scene.body(n).is_static]
        before_tracks = load_film_tracks(project)
        reports = verify_film(project)
        assert failing_required(reports) == ["NoPenetration: fail", "EventsSatisfied: fail"]
        spikes = len({r.name: r for r in reports}["Continuity"].evidence)
    code = main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", "8"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"^(\d+) round\(s\), (\d+) proposal\(s\), (\d+) applied; required checks pass", out, re.M), out
    applied = re.findall(r"^  #\d+ \[applied\] .*$", out, re.M)
    assert applied and all("adds none" in line for line in applied), out
    assert any("meets event take_knob" in line for line in applied), out
    assert any(re.search(r"move \S+ on \S+ from [\d.]+ to [\d.]+ rad clear of", line) for line in applied), out
    assert not any(re.search(rf": (insert key states? [^:]*: )?(move|push|turn|step) {b}\b", line)
                   for line in applied for b in static), out
    with Project.open(base) as project:
        reports = {r.name: r for r in verify_film(project)}
        assert not failing_required(list(reports.values())), [(r.name, r.evidence[:2]) for r in reports.values()
                                                             if r.verdict == "fail"]
        assert reports["NoPenetration"].verdict == "pass" and not reports["NoPenetration"].evidence
        assert reports["EventsSatisfied"].verdict == "pass"
        assert len(reports["Continuity"].evidence) <= spikes
        after_tracks = load_film_tracks(project)
        for b in static:
            assert np.allclose(after_tracks.roots[b], before_tracks.roots[b], rtol=0, atol=1e-9), b
        assert {r.reviewer for r in list_reviews(project)} == {"batch"}
