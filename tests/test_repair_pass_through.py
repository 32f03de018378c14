"""An unmet pass_through: a crate flown from x=-2 to x=-0.6 never crosses the plane x=0 its event
asks it to pass inside frames 1010..1040. The repair keys it across the plane, its centroid 5 cm on
the positive side, at the middle of the window, and the event is met."""
from __future__ import annotations

import numpy as np
from motion_films import REVIEWER, _body, _camera, fly_crate

from studio.checks.run import verify_film
from studio.repair.motion_repair import approve_film_repair, propose_film
from studio.store.project import Project
from studio.store.reports import failing_required
from studio.timeline.film import load_film_tracks
from studio.tools.box import ToolBox

A, B = 1001, 1049


def short_film(path) -> Project:
    project = Project.create(path, name="short", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "crate", [0.2, 0.2, 0.2], [-2.0, 0.0, 1.0, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    fly_crate(box, "a crate flies towards a line", [-2.0, 0.0, 1.0, 1, 0, 0, 0], [-0.6, 0.0, 1.0, 1, 0, 0, 0], A, B)
    plan = project.get_doc("plan")
    plan["events"] = [{"id": "across", "kind": "pass_through", "subjects": ["crate"], "window": [1010, 1040],
                       "params": {"point": [0.0, 0.0, 1.0], "normal": [1.0, 0.0, 0.0]}, "after": []}]
    box.call("set_plan", {"plan": plan})
    return project


def test_an_unmet_pass_through_is_keyed_across_its_plane(tmp_path):
    project = short_film(tmp_path / "short")
    events = {r.name: r for r in verify_film(project)}["EventsSatisfied"]
    assert events.verdict == "fail" and events.evidence[0]["event"] == "across"
    made = propose_film(project)
    assert len(made.proposals) == 1, made.unsolved
    p = made.proposals[0]
    assert "through the plane of across — meets event across; adds none" in p.summary, p.summary
    key = next(c for c in p.changes if c["kind"] == "insert_state")
    assert key["frame"] == 1025
    assert np.allclose(key["pose"]["roots"]["crate"][:3], [0.05, 0.0, 1.0], atol=1e-6)
    approve_film_repair(project, p.id, reviewer=REVIEWER)
    reports = {r.name: r for r in verify_film(project)}
    assert not failing_required(list(reports.values())) and reports["EventsSatisfied"].verdict == "pass"
    x = load_film_tracks(project).roots["crate"][:, 0]
    assert x[1010 - A:1041 - A].max() > 0.0 > x[1010 - A:1041 - A].min()      # it crosses inside the window
    project.close()
