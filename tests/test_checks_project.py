"""Verifying a project's states and film: stored reports, stale hashes, the CLI's exit codes,
and re-verifying an edited interval against a full run."""
from __future__ import annotations

import json

import numpy as np
import pytest

from checks_films import box, meshes, scene, still, tracks
from studio.checks.report import load_reports, required_checks_pass
from studio.checks.run import FilmCheck, film_hash, run_checks, verify_film, verify_state
from studio.cli import main
from studio.scene.io import save_scene
from studio.scene.pose import Pose, Tracks
from studio.timeline.film import save_segment
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import State, put_state


def crate_scene():
    return scene([box("ground", [4, 4, 0.1], kind="ground"), box("crate", [0.2, 0.2, 0.2])],
                 rest={"ground": [0, 0, -0.05, 1, 0, 0, 0], "crate": [0, 0, 0.1, 1, 0, 0, 0]})


def pose(x, z=0.1):
    return Pose({"ground": [0, 0, -0.05, 1, 0, 0, 0], "crate": [x, 0, z, 1, 0, 0, 0]})


@pytest.fixture
def film_project(tmp_project):
    sc = crate_scene()
    save_scene(tmp_project, sc)
    put_state(tmp_project, sc, State("start", 1001, pose(0)))
    put_state(tmp_project, sc, State("end", 1025, pose(1.0)))
    for s in ("start", "end"):
        record_review(tmp_project, s, "approve", scene=sc)
    poses = [pose(x) for x in np.linspace(0, 1.0, 25)]
    save_segment(tmp_project, "start..end", Tracks.from_poses(1001, poses), tool="slide", bounds_hash="x")
    return tmp_project, sc


def test_film_reports_are_stored_with_the_hash_of_what_was_checked(film_project):
    project, sc = film_project
    reports = verify_film(project)
    assert required_checks_pass(reports)
    stored, checked = load_reports(project, "film")
    assert [r.name for r in stored] == [r.name for r in reports]
    from studio.timeline.film import load_film_tracks
    assert checked == film_hash(load_film_tracks(project), sc, None)


def test_state_reports_carry_the_state_content_hash(film_project):
    project, sc = film_project
    put_state(project, sc, State("sunk", 1030, pose(0, z=0.08)))
    reports = verify_state(project, "sunk")
    pen = {r.name: r for r in reports}["NoPenetration"]
    assert [(e["frame"], e["depth_m"]) for e in pen.evidence] == [(1030, pytest.approx(0.02, abs=1e-6))]
    stored, checked = load_reports(project, "state:sunk")
    row = next(project.db.query("SELECT content_hash FROM states WHERE id = 'sunk'"))
    assert checked == row["content_hash"] and len(stored) == 8


def test_cli_exit_codes_for_a_project(film_project, tmp_path, capsys):
    project, sc = film_project
    out = tmp_path / "film.json"
    assert main(["verify", str(project.path), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["required_pass"] and doc["metrics"]["penetration_rate"] == 0.0
    put_state(project, sc, State("sunk", 1030, pose(0, z=0.08)))
    assert main(["verify", str(project.path), "--state", "sunk"]) == 1
    assert "NoPenetration: fail" in capsys.readouterr().out
    assert main(["verify", str(project.path), "--state", "nope"]) == 2
    assert main(["verify", str(tmp_path / "missing")]) == 2


def test_tracks_that_miss_an_approved_state_are_not_well_formed(film_project):
    project, sc = film_project
    put_state(project, sc, State("end", 1025, pose(0.9)))      # the state moved after baking
    record_review(project, "end", "approve", scene=sc)
    reports = {r.name: r for r in verify_film(project)}
    (e,) = reports["AnimationWellFormed"].evidence
    assert e["state"] == "end" and e["frame"] == 1025


def test_reverifying_an_edited_interval_matches_a_full_run():
    sc = scene([box("ground", [6, 6, 0.1], kind="ground")] + [box(f"b{i}", [0.2, 0.2, 0.2]) for i in range(4)])
    n = 200
    roots = {"ground": still([0, 0, -0.05], n=n)}
    for i in range(4):
        t = still([i * 0.5, 0, 0.1], n=n)
        t[:, 1] = np.linspace(0, 1, n)
        roots[f"b{i}"] = t
    tr = tracks(1001, **roots)
    check = FilmCheck(sc, meshes(sc))
    first = {r.name: r for r in check.verify(tr)}
    assert first["NoPenetration"].verdict == "pass"
    edited = tracks(1001, **{k: v.copy() for k, v in roots.items()})
    edited.roots["b1"][100:148, 0] = 0.0 + 0.1          # into b0 on frames 1101..1148
    edited.roots["b2"][120:130, 2] = 0.3                # lifted on frames 1121..1130
    fast = {r.name: r for r in check.verify_interval(edited, 1101, 1148)}
    full = {r.name: r for r in run_checks(sc, meshes(sc), edited)}
    for name in ("NoPenetration", "Supported", "JointLimits", "AnimationWellFormed"):
        key = [(e["frame"], e.get("a"), e.get("b"), e.get("body")) for e in fast[name].evidence]
        assert key == [(e["frame"], e.get("a"), e.get("b"), e.get("body")) for e in full[name].evidence], name
        assert fast[name].verdict == full[name].verdict
    assert len(fast["NoPenetration"].evidence) == 48
    assert fast["NoPenetration"].metrics["penetration_rate"] == pytest.approx(48 / n)
    assert fast["Supported"].metrics["floating_rate"] == pytest.approx(full["Supported"].metrics["floating_rate"])
