"""Failures drawn where a person can read them: a body pushed into the floor is tinted,
the floor is not (nor turned see-through); one depth label per pair, and labels that
would land on each other share one box; a state's failure marker is drawn on the
bodies where they stand in that state, never over a film that has moved on."""
from __future__ import annotations

import pytest

from studio.scene.pose import Tracks
from studio.store.reports import Report, save_reports
from studio.timeline import film
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.storyboard import content_hash, get_state
from studio.tools.box import ToolBox
from ui_scenes import open_window

pytestmark = pytest.mark.gui


def state_hash(scene, project, sid: str) -> str:
    """The state as it is now: reports that checked it are current, so the window draws them."""
    s = get_state(project, sid)
    return content_hash(scene, s.pose, s.frame)


def test_a_floor_penetration_tints_the_body_not_the_floor_and_labels_do_not_pile_up(qtbot, tmp_project):
    w = open_window(qtbot, tmp_project)
    vp = w.viewport
    held = [w.session.pose_at(f) for f in range(1001, 1050)]          # a film that holds each key
    film.save_segment(tmp_project, "s1..s3", Tracks.from_poses(1001, held), tool="hold", bounds_hash="x")
    save_reports(tmp_project, "film", [Report("NoPenetration", "fail", [
        {"frame": 1001, "a": "crate", "b": "floor", "depth_m": 0.004, "axis": [0, 0, 1], "push_m": 0.004,
         "point": [-0.9, 0.1, 0.0]},
        {"frame": 1001, "a": "crate", "b": "floor", "depth_m": 0.006, "axis": [0, 0, 1], "push_m": 0.006,
         "point": [-1.1, -0.1, 0.0]},
        {"frame": 1001, "a": "crate", "b": "post", "depth_m": 0.01, "axis": [1, 0, 0], "push_m": 0.01,
         "point": [-0.95, 0.05, 0.02]}])], checked_hash=film.film_hash(tmp_project))   # of that very film
    qtbot.waitUntil(lambda: 1001 in w.session.failures_at, timeout=5000)
    w.playhead.set_frame(1002)
    w.playhead.set_frame(1001)
    assert vp.body_color("floor") == pytest.approx(vp._colors["floor"], abs=0.01)        # the floor keeps its colour
    assert vp.actors["floor"].prop.opacity == 1.0
    assert vp.body_color("crate") == pytest.approx(vp.failure_color("crate", "penetration"), abs=0.01)
    assert vp.actors["crate"].prop.opacity < 1.0
    fails = vp.placed_failures(w.session.failures_at[1001])
    labels = vp.failure_labels(fails)
    assert len(labels) == 1                          # the pair's deepest point, and the near pair in the same box
    text = labels[0][1]
    assert text.splitlines() == ["crate into floor 6.0 mm deep", "crate into post 10.0 mm deep"]


def test_a_states_failure_marker_is_drawn_only_where_the_bodies_stand_in_that_state(qtbot, tmp_project):
    w = open_window(qtbot, tmp_project)
    vp, scene = w.viewport, w.session.scene
    a, b = get_state(tmp_project, "s1"), get_state(tmp_project, "s2")
    from studio.timeline.bake import complete
    tracks = complete(scene, interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)]),
                      a.pose.completed(scene), b.pose.completed(scene), a.frame, b.frame)
    film.save_segment(tmp_project, "s1..s2", tracks, "interpolate", "old")       # the film as it was baked
    crate = a.pose.roots["crate"]
    ToolBox(tmp_project, actor="person").call("set_state", {"state": "s1", "roots": {    # the key moved since
        "crate": [crate[0] + 0.6, crate[1], crate[2], *crate[3:]]}})
    save_reports(tmp_project, "state:s1", [Report("NoPenetration", "fail", [
        {"frame": 1001, "a": "crate", "b": "post", "depth_m": 0.01, "axis": [1, 0, 0], "push_m": 0.01,
         "point": [-0.4, 0.0, 0.2]}])], checked_hash=state_hash(w.session.scene, tmp_project, "s1"))
    qtbot.waitUntil(lambda: any(f.target == "state:s1" for f in w.session.failures_at.get(1001, [])), timeout=5000)
    w.playhead.set_frame(1002)
    w.playhead.set_frame(1001)
    here = w.session.failures_at[1001]
    assert vp.showing == "film" and vp.placed_failures(here) == []      # the film's crate is elsewhere: no marker
    vp.set_showing("state")
    assert [f.target for f in vp.placed_failures(here)] == ["state:s1"]   # on the key's crate
    vp.set_showing("both")
    assert [f.target for f in vp.placed_failures(here)] == ["state:s1"]   # on its ghost
