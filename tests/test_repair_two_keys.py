"""A run of failing frames too long for one key state: a crate flown down a narrow gap between a
long counter, which it grazes for half the film, and a rail. One key pushed clear at the worst frame leaves most of the run failing
(the in-betweens either side slide back into the counter); two key states, one before the run and
one after it, both moved aside by the same push, hold the crate clear over the whole run."""
from __future__ import annotations

import numpy as np
from motion_films import REVIEWER, _body, _camera, fly_crate

from studio.checks.run import verify_film
from studio.repair.motion_repair import approve_film_repair, propose_film
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.tools.box import ToolBox

A, B = 1001, 1049


def counter_film(path) -> Project:
    """The crate (0.2 m) flies at y=0.25 from x=-1.5 to 1.5; the counter's near face is at y=0.32,
    so the crate's side is 30 mm inside it while they overlap along x, and the rail's face is at
    y=0.1, 50 mm from the crate's other side: a push clear of the counter has 50 mm to spare."""
    project = Project.create(path, name="counter", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "counter", [1.2, 0.2, 2.0], [0, 0.42, 1.0, 1, 0, 0, 0], kind="static")
    _body(box, "rail", [1.2, 0.2, 2.0], [0, 0.0, 1.0, 1, 0, 0, 0], kind="static")
    _body(box, "crate", [0.2, 0.2, 0.2], [-1.5, 0.25, 1.0, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    fly_crate(box, "a crate flies past a counter", [-1.5, 0.25, 1.0, 1, 0, 0, 0], [1.5, 0.25, 1.0, 1, 0, 0, 0],
              A, B)
    return project


def _by_name(project: Project) -> dict:
    return {r.name: r for r in verify_film(project)}


def test_a_long_graze_is_cleared_by_two_key_states_held_aside_over_the_run(tmp_path):
    project = counter_film(tmp_path / "counter")
    before = _by_name(project)
    frames = sorted({e["frame"] for e in before["NoPenetration"].evidence if not e.get("between")})
    assert before["NoPenetration"].verdict == "fail" and len(frames) >= 8, frames
    made = propose_film(project)
    assert [r.check for r in made.runs] == ["NoPenetration"]
    p = made.proposals[0]
    keys = [c for c in p.changes if c["kind"] == "insert_state"]
    assert len(keys) == 2, p.summary                       # no single key clears the whole run
    assert keys[0]["frame"] <= frames[0] and keys[1]["frame"] >= frames[-1], (frames, [k["frame"] for k in keys])
    assert keys[0]["split"] == "out..in" and keys[1]["split"] == f"{keys[0]['state']}..in"
    for k in keys:                                           # both moved aside by the same push, away from it
        assert 0.2 < k["pose"]["roots"]["crate"][1] < 0.22, k
    assert "held from" in p.summary and "adds none" in p.summary and "Continuity" not in p.summary, p.summary
    set_before = {b: load_film_tracks(project).roots[b].copy() for b in ("counter", "rail")}
    approve_film_repair(project, p.id)
    after = _by_name(project)
    assert after["NoPenetration"].verdict == "pass", after["NoPenetration"].evidence[:3]
    assert len(after["Continuity"].evidence) <= len(before["Continuity"].evidence)
    for b, v in set_before.items():
        assert np.allclose(load_film_tracks(project).roots[b], v, rtol=0, atol=1e-9), b
    project.close()
