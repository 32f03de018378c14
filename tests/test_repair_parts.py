"""Repairs of a part that moves on its own joint (a cabinet door on its hinge): the arm holds the
door's knob in both approved states, the door shut and opened 1.4 rad, but the segment between them
is a plain interpolation, so the hand leaves the knob and the forearm sweeps through it mid-way.
The repair search offers `operate` (the hand that holds the handle at both ends drives the door),
and key states that turn the door on its hinge clear of the arm; the cabinet never moves."""
from __future__ import annotations

import numpy as np
from hold_films import door_film

from studio.checks.run import verify_film
from studio.repair.film_failures import failing_runs
from studio.repair.motion_candidates import candidates
from studio.repair.motion_repair import approve_film_repair, propose_film
from studio.repair.motion_trial import FilmTrial
from studio.scene.io import load_scene
from studio.store.reports import failing_required
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.motion.ik import frame_pose
from studio.tools.box import ToolBox


def _interpolated_door(path):
    project = door_film(path, tool="interpolate", params={})
    ToolBox(project, actor="Ada").call("author_segment", {"segment": "closed..open"})
    return project


def test_an_interpolated_door_is_repaired_by_the_hand_that_holds_its_handle(tmp_path):
    project = _interpolated_door(tmp_path / "door")
    before = {r.name: r for r in verify_film(project)}
    assert before["NoPenetration"].verdict == "fail"
    assert {(e["a"], e["b"]) for e in before["NoPenetration"].evidence} == {("fore", "knob")}
    cabinet = load_film_tracks(project).roots["cabinet"].copy()
    made = propose_film(project)
    operate = [p for p in made.proposals if "→ operate" in p.summary]
    assert len(operate) == 1, [p.summary for p in made.proposals]
    p = operate[0]
    assert "gripper drives door on hinge by handle (0.000 → 1.400)" in p.summary and "adds none" in p.summary
    seg = next(c for c in p.changes if c["kind"] == "segment")
    assert seg["tool"] == "operate" and seg["params"]["part"] == "door" and seg["params"]["handle"] == "handle"
    approve_film_repair(project, p.id, reviewer="Ada")
    reports = {r.name: r for r in verify_film(project)}
    assert not failing_required(list(reports.values()))
    assert reports["EventsSatisfied"].verdict == "pass" and reports["EventsSatisfied"].metrics.get("holds", 0) >= 1
    assert [(s["segment"], s["tool"]) for s in list_segments(project)] == [("closed..open", "operate")]
    scene, film = load_scene(project), load_film_tracks(project)
    off = [float(np.linalg.norm(frame_pose(scene, film.pose_at(f), "gripper")[:3, 3] -
                                frame_pose(scene, film.pose_at(f), "handle")[:3, 3]))
           for f in range(film.frame_start, film.frame_end + 1)]
    assert max(off) < 0.005, max(off)                # the hand on the knob at every frame
    assert np.array_equal(film.roots["cabinet"], cabinet)
    project.close()


def test_a_key_state_turns_the_door_on_its_hinge_clear_of_the_arm(tmp_path):
    project = _interpolated_door(tmp_path / "door")
    trial = FilmTrial(project)
    run = failing_runs(trial.base_reports, trial.segments)[0]
    turns = [c for c in candidates(trial, run) if c[0] == "key" and " on hinge from " in c[1]]
    assert turns, [c[1] for c in candidates(trial, run)]
    judged = [(c, trial.judge(run, c[2])) for c in turns]
    ok = [(c, o) for c, o in judged if o.ok]
    assert ok, [(c[1], o.effect) for c, o in judged]
    (kind, summary, changes), outcome = ok[0]
    assert "removes 8 penetrating frames at 1017–1024; adds none" in outcome.effect
    key = next(c for c in changes if c["kind"] == "insert_state")
    film = trial.pose_at(key["frame"]).completed(trial.scene)
    moved = {j for j, v in key["pose"]["joints"].items() if not np.isclose(v, film.joints[j])}
    assert moved == {"hinge"}                        # only the door turns; the arm and the cabinet stay
    assert key["pose"]["roots"]["cabinet"] == film.roots["cabinet"]
    project.close()
