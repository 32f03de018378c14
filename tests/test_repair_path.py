"""A run a key state or two cannot clear without spoiling what comes after: a crate flown straight
through a pillar and, 1.5 m further on, through a doorway 0.4 m wide that it fits only on its way.
One key state aside of the pillar leaves the in-betweens either side in it; two held aside ease back
onto the way over the rest of the film, so the crate meets the doorway's jamb. The path round the
pillar, planned at once, holds the crate aside over every frame it is near the pillar and keys the
film's own poses before and after, so it is back on its way well before the doorway."""
from __future__ import annotations

import numpy as np
from motion_films import REVIEWER, _body, _camera, fly_crate

from studio.checks.run import verify_film
from studio.repair.motion_repair import approve_film_repair, propose_film
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.tools.box import ToolBox

A, B = 1001, 1097
SET = ("pillar", "jamb_l", "jamb_r")


def pillar_film(path) -> Project:
    """The crate (0.2 m) flies at y=0, z=1 from x=-2 to x=2; the pillar (0.4 m square) stands on its
    way at x=-1; the doorway's jambs at x=0.8 leave an opening from y=-0.2 to y=0.2."""
    project = Project.create(path, name="pillar", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "pillar", [0.4, 0.4, 2.0], [-1.0, 0.0, 1.0, 1, 0, 0, 0], kind="static")
    _body(box, "jamb_l", [0.1, 1.0, 2.0], [0.8, 0.7, 1.0, 1, 0, 0, 0], kind="static")
    _body(box, "jamb_r", [0.1, 1.0, 2.0], [0.8, -0.7, 1.0, 1, 0, 0, 0], kind="static")
    _body(box, "crate", [0.2, 0.2, 0.2], [-2.0, 0.0, 1.0, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    fly_crate(box, "a crate flies round a pillar and through a doorway",
              [-2.0, 0.0, 1.0, 1, 0, 0, 0], [2.0, 0.0, 1.0, 1, 0, 0, 0], A, B)
    return project


def _by_name(project: Project) -> dict:
    return {r.name: r for r in verify_film(project)}


def test_a_path_round_a_pillar_is_planned_at_once_and_back_on_the_way_before_the_doorway(tmp_path):
    project = pillar_film(tmp_path / "pillar")
    before = _by_name(project)
    failing = {(e["a"], e["b"]) for e in before["NoPenetration"].evidence}
    assert before["NoPenetration"].verdict == "fail" and {tuple(sorted(p)) for p in failing} == {("crate", "pillar")}
    frames = sorted({e["frame"] for e in before["NoPenetration"].evidence})
    film = load_film_tracks(project)
    passing = [f for f in range(A, B + 1) if abs(film.roots["crate"][f - A][0] - 0.8) < 0.15]   # between the jambs
    made = propose_film(project)
    assert len(made.proposals) >= 1, made.unsolved
    p = made.proposals[0]
    keys = [c for c in p.changes if c["kind"] == "insert_state"]
    assert len(keys) >= 3, p.summary                 # fewer keys do not clear it: the path is the first that does
    held = [k for k in keys if abs(k["pose"]["roots"]["crate"][1]) > 0.3]
    back = [k for k in keys if k not in held]
    assert len(held) == 2 and held[0]["frame"] < frames[0] and held[1]["frame"] > frames[-1], \
        (frames, [(k["frame"], k["pose"]["roots"]["crate"][:3]) for k in keys])
    for k in back:                                   # the film's own pose: on the way, y = 0
        assert np.allclose(k["pose"]["roots"]["crate"], film.roots["crate"][k["frame"] - A], atol=1e-6), k
    assert back and back[-1]["frame"] > held[1]["frame"], [k["frame"] for k in keys]
    assert [k["split"] for k in keys] == ["out..in"] + [f"{k['state']}..in" for k in keys[:-1]]
    assert "held from" in p.summary and "adds none" in p.summary and "Continuity" not in p.summary, p.summary
    set_before = {b: load_film_tracks(project).roots[b].copy() for b in SET}
    approve_film_repair(project, p.id)
    after = _by_name(project)
    assert after["NoPenetration"].verdict == "pass", after["NoPenetration"].evidence[:3]
    assert len(after["Continuity"].evidence) <= len(before["Continuity"].evidence)
    tracks = load_film_tracks(project)
    for b, v in set_before.items():
        assert np.allclose(tracks.roots[b], v, rtol=0, atol=1e-9), b
    assert max(abs(tracks.roots["crate"][f - A][1]) for f in passing) < 0.1     # back on its way, through the opening
    project.close()
