"""JointLimits, AnimationWellFormed, EventsSatisfied and the rule for what passes."""
from __future__ import annotations

import numpy as np
import pytest

from checks_films import box, meshes, scene, still, tracks
from studio.checks import run as run_module
from studio.checks.report import Report, required_checks_pass
from studio.checks.run import run_checks
from studio.scene.pose import Pose

GROUND = box("ground", [4, 4, 0.1], kind="ground")


def arm_scene():
    return scene([GROUND, box("base", [0.2, 0.2, 0.1]), box("forearm", [0.3, 0.04, 0.04])],
                 joints=[{"name": "elbow", "type": "revolute", "parent": "base", "child": "forearm",
                          "origin": {"position": [0, 0, 0.2]}, "axis": [0, 1, 0], "lower": -0.5, "upper": 1.2}],
                 frames=[{"name": "hand", "body": "forearm", "local": {"position": [0.15, 0, 0]}}])


def arm_tracks(elbow, slide=0.0):
    n = len(elbow)
    base = still([0, 0, 0.05], n=n)
    base[:, 0] = np.linspace(-slide, slide, n)
    t = tracks(1001, ground=still([0, 0, -0.05], n=n), base=base)
    t.joints["elbow"] = np.asarray(elbow, float)
    return t


def by_name(sc, tr, **kw):
    return {r.name: r for r in run_checks(sc, meshes(sc), tr, **kw)}


def test_joint_past_its_limit_on_exactly_those_frames():
    elbow = np.linspace(0, 1.5, 11)            # passes 1.2 after frame 1009
    r = by_name(arm_scene(), arm_tracks(elbow))["JointLimits"]
    past = np.nonzero(elbow > 1.2)[0]
    (e,) = r.evidence
    assert e["joint"] == "elbow" and e["bound"] == "upper" and e["limit"] == 1.2
    assert e["frames"] == [1001 + past[0], 1001 + past[-1]] == [1010, 1011]
    assert e["value"] == pytest.approx(1.5)
    assert r.metrics["joint_violation_rate"] == pytest.approx(2 / 11)


def test_lower_bound_runs_are_separate_items():
    elbow = np.array([0, -0.6, -0.7, 0, 0, -0.55, 0])
    r = by_name(arm_scene(), arm_tracks(elbow))["JointLimits"]
    assert [(e["frames"], e["bound"], e["value"]) for e in r.evidence] == [
        ([1002, 1003], "lower", -0.7), ([1006, 1006], "lower", -0.55)]


def test_no_joints_is_not_applicable():
    sc = scene([box("a", [0.1, 0.1, 0.1])])
    r = by_name(sc, tracks(a=still([0, 0, 1])))["JointLimits"]
    assert r.verdict == "not_applicable"


def test_well_formed_catches_nan_bad_quaternions_and_missed_states():
    sc = scene([box("a", [0.1, 0.1, 0.1])])
    a = still([0, 0, 1], n=6)
    a[2, 0] = np.nan
    a[4, 3:] = [0.9, 0, 0, 0]
    state = Pose({"a": [0, 0, 1.01, 1, 0, 0, 0]})
    plan = {"shots": [{"id": "s", "camera": "c", "start": 1, "end": 8}]}
    r = by_name(sc, tracks(1, a=a), states=[(2, state, "lift")], plan=plan)["AnimationWellFormed"]
    reasons = sorted((e["frame"], e["reason"].split(" ")[0]) for e in r.evidence)
    assert reasons == [(2, "body"), (3, "NaN"), (5, "rotation"), (7, "frames")]
    assert r.evidence[-1]["frames"] == [7, 8]
    good = by_name(sc, tracks(1, a=still([0, 0, 1], n=6)), states=[(2, Pose({"a": [0, 0, 1, 1, 0, 0, 0]}), "s")])
    assert good["AnimationWellFormed"].verdict == "pass"


def events_film():
    sc = arm_scene()
    elbow = np.linspace(0, 1.0, 11)
    return sc, arm_tracks(elbow, slide=0.2)    # the base slides from x=-0.2 to 0.2


def test_each_event_kind_holds_when_it_happens():
    sc, tr = events_film()
    plan = {"events": [
        {"id": "rest", "kind": "contact", "subjects": ["base", "ground"], "window": [1001, 1003]},
        {"id": "up", "kind": "reach", "subjects": ["hand", "base"], "window": [1001, 1011],
         "params": {"tolerance": 0.3}},
        {"id": "zone", "kind": "enter_region", "subjects": ["forearm"],
         "params": {"min": [-1, -1, 0.24], "max": [1, 1, 0.26]}, "window": [1001, 1005]},
        {"id": "sweep", "kind": "pass_through", "subjects": ["base"],
         "params": {"point": [0.02, 0, 0], "normal": [1, 0, 0]}, "window": [1001, 1011]},
        {"id": "seq", "kind": "order", "subjects": ["rest", "sweep"], "window": [1001, 1011]},
    ]}
    r = by_name(sc, tr, plan=plan)["EventsSatisfied"]
    assert r.verdict == "pass", r.evidence
    assert r.metrics["evaluated"] == 5
    assert r.metrics["first_frames"] == {"rest": 1001, "up": 1001, "zone": 1001, "sweep": 1007, "seq": 1007}


def test_an_event_that_never_happens_fails_with_its_reason():
    sc, tr = events_film()
    plan = {"events": [
        {"id": "touch", "kind": "contact", "subjects": ["forearm", "ground"], "window": [1001, 1011]},
        {"id": "later", "kind": "reach", "subjects": ["hand", "base"], "window": [2000, 2010]},
        {"id": "drop", "kind": "release", "subjects": ["hand", "ground"], "window": [1001, 1005]},
    ]}
    r = by_name(sc, tr, plan=plan)["EventsSatisfied"]
    assert r.verdict == "fail"
    assert [(e["event"], e["kind"]) for e in r.evidence] == [("touch", "contact"), ("drop", "release")]
    assert "never come within" in r.evidence[0]["reason"]
    assert "no grasp" in r.evidence[1]["reason"]
    assert r.metrics["evaluated"] == 2


def test_order_fails_when_events_happen_the_other_way_round():
    sc, tr = events_film()
    plan = {"events": [
        {"id": "rest", "kind": "contact", "subjects": ["base", "ground"], "window": [1001, 1011]},
        {"id": "sweep", "kind": "pass_through", "subjects": ["base"],
         "params": {"point": [0.02, 0, 0], "normal": [1, 0, 0]}, "window": [1001, 1011]},
        {"id": "seq", "kind": "order", "subjects": ["sweep", "rest"], "window": [1001, 1011]},
    ]}
    r = by_name(sc, tr, plan=plan)["EventsSatisfied"]
    assert [e["event"] for e in r.evidence] == ["seq"]


def test_events_outside_the_film_are_not_applicable():
    sc, tr = events_film()
    plan = {"events": [{"id": "x", "kind": "reach", "subjects": ["hand", "base"], "window": [1, 10]}]}
    assert by_name(sc, tr, plan=plan)["EventsSatisfied"].verdict == "not_applicable"


def test_required_rule():
    ok = [Report(n, "pass") for n in ("AnimationWellFormed", "JointLimits", "NoPenetration")]
    assert not required_checks_pass(ok)                                   # one missing
    assert required_checks_pass(ok + [Report("EventsSatisfied", "not_applicable")])
    assert not required_checks_pass(ok + [Report("EventsSatisfied", "error")])
    assert required_checks_pass(ok + [Report("EventsSatisfied", "pass"), Report("Supported", "fail")])


def test_a_verifier_that_raises_becomes_an_error_and_the_run_goes_on(monkeypatch):
    class Broken:
        NAME = "JointLimits"

        @staticmethod
        def verify(footage):
            raise RuntimeError("limits table unreadable")
    monkeypatch.setattr(run_module, "VERIFIERS", [Broken if v.NAME == "JointLimits" else v
                                                  for v in run_module.VERIFIERS])
    sc, tr = events_film()
    reports = run_checks(sc, meshes(sc), tr)
    r = {x.name: x for x in reports}
    assert r["JointLimits"].verdict == "error"
    assert "limits table unreadable" in r["JointLimits"].evidence[0]["reason"]
    assert r["NoPenetration"].verdict in ("pass", "fail")
    assert len(reports) == 8
    assert not required_checks_pass(reports)
