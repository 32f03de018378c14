"""NoPenetration against ground truth known by construction (the tau rule, SAT depths)."""
from __future__ import annotations

import numpy as np
import pytest

from checks_films import axis_angle, box, meshes, sat_depth, scene, still, tracks
from studio.checks.report import required_checks_pass
from studio.checks.run import run_checks


def pen(sc, tr, **kw):
    return {r.name: r for r in run_checks(sc, meshes(sc), tr, **kw)}["NoPenetration"]


@pytest.mark.parametrize("overlap, counts", [(0.003, False), (0.008, True)])
def test_thick_boxes_count_only_past_five_mm(overlap, counts):
    sc = scene([box("a", [0.1, 0.1, 0.1]), box("b", [0.2, 0.2, 0.1])])
    pa, pb = [0, 0, 0.1 - overlap, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0, 0]
    r = pen(sc, tracks(a=still(pa[:3]), b=still(pb[:3])))
    assert r.verdict == ("fail" if counts else "pass")
    if counts:
        (e,) = r.evidence
        assert (e["a"], e["b"], e["frame"]) == ("a", "b", 1)
        assert e["depth_m"] == pytest.approx(sat_depth([.1, .1, .1], pa, [.2, .2, .1], pb), abs=1e-6)
        assert e["depth_m"] == pytest.approx(0.008, abs=1e-6)
        assert e["tau_m"] == pytest.approx(0.005)
        assert e["axis"] == pytest.approx([0, 0, 1], abs=1e-6)
        assert e["push_m"] == pytest.approx(0.008, abs=1e-6)
    assert r.metrics["penetration_rate"] == (1.0 if counts else 0.0)


@pytest.mark.parametrize("entered, counts", [(0.0016, True), (0.0006, False)])
def test_thin_card_uses_half_its_thickness(entered, counts):
    sc = scene([box("card", [0.08, 0.06, 0.002]), box("table", [0.3, 0.3, 0.05])])
    card_z = 0.025 + 0.001 - entered
    r = pen(sc, tracks(card=still([0.01, 0, card_z]), table=still([0, 0, 0])))
    assert r.verdict == ("fail" if counts else "pass")
    if counts:
        assert r.evidence[0]["tau_m"] == pytest.approx(0.001)
        assert r.evidence[0]["depth_m"] == pytest.approx(entered, abs=1e-6)


def test_rotated_box_corner_depth_matches_sat():
    q = axis_angle([1, 1, 0], 0.6)
    sc = scene([box("a", [0.06, 0.05, 0.04]), box("b", [0.4, 0.4, 0.1])])
    from studio.scene.transforms import quat_to_matrix
    corners = np.array([[sx * .03, sy * .025, sz * .02] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    low = (corners @ quat_to_matrix(np.array(q)).T)[:, 2].min()
    depth = 0.007
    pa = [0.02, 0.01, 0.05 - low - depth, *q]
    r = pen(sc, tracks(a=still(pa[:3], q), b=still([0, 0, 0])))
    truth = sat_depth([.06, .05, .04], pa, [.4, .4, .1], [0, 0, 0, 1, 0, 0, 0])
    assert truth == pytest.approx(depth, abs=1e-9)
    (e,) = r.evidence
    assert e["depth_m"] == pytest.approx(truth, abs=1e-6)
    assert e["point"][2] == pytest.approx(0.05 - depth, abs=1e-6)


def test_body_wholly_inside_another_counts():
    sc = scene([box("pea", [0.02, 0.02, 0.02]), box("crate", [0.5, 0.5, 0.5])])
    r = pen(sc, tracks(pea=still([0.1, 0, 0]), crate=still([0, 0, 0])))
    (e,) = r.evidence
    assert e["depth_m"] == pytest.approx(0.25 - 0.1 + 0.01, abs=1e-6)   # deepest corner to the nearest face
    assert e["axis"] == pytest.approx([1, 0, 0], abs=1e-6)


def test_pushing_along_the_axis_by_push_m_clears_the_pair():
    q = axis_angle([0.3, 1, 0.2], 0.5)
    sc = scene([box("a", [0.1, 0.08, 0.06]), box("b", [0.3, 0.3, 0.1])])
    ta = still([0.05, 0.02, 0.07], q)
    r = pen(sc, tracks(a=ta, b=still([0, 0, 0])))
    (e,) = r.evidence
    moved = ta.copy()
    moved[0, :3] += np.asarray(e["axis"]) * (e["push_m"] + 1e-4)
    again = pen(sc, tracks(a=moved, b=still([0, 0, 0])))
    assert again.verdict == "pass"


def test_counted_frames_and_rate_over_a_moving_film():
    sc = scene([box("a", [0.1, 0.1, 0.1]), box("floor", [2, 2, 0.1], kind="ground")])
    z = np.full(10, 0.1)                  # resting on the floor (top at 0.05)
    z[[3, 4, 5]] = 0.1 - 0.02             # sinks 20 mm on frames 1004..1006
    a = np.c_[np.zeros((10, 2)), z, np.tile([1, 0, 0, 0], (10, 1))]
    r = pen(sc, tracks(1001, a=a, floor=still([0, 0, 0], n=10)))
    assert [e["frame"] for e in r.evidence] == [1004, 1005, 1006]
    assert all(e["depth_m"] == pytest.approx(0.02, abs=1e-6) for e in r.evidence)
    assert r.metrics["penetration_rate"] == pytest.approx(0.3)


@pytest.mark.parametrize("case", ["allowed", "joint", "liquid", "effect", "consumable", "static"])
def test_excluded_pairs_never_count(case):
    a, b = box("a", [0.1, 0.1, 0.1]), box("b", [0.1, 0.1, 0.1])
    extra = {}
    if case == "allowed":
        extra["allowed_overlaps"] = [{"a": "a", "b": "b", "reason": "construction"}]
    elif case == "joint":
        extra["joints"] = [{"name": "hinge", "type": "revolute", "parent": "a", "child": "b",
                            "origin": {"position": [0.05, 0, 0]}}]
    elif case == "liquid":
        b["flags"] = ["liquid"]
    elif case == "effect":
        b["kind"] = "effect"
    elif case == "consumable":
        b["flags"] = ["consumable"]
    else:
        a["kind"], b["kind"] = "static", "ground"
    sc = scene([a, b], **extra)
    roots = {"a": still([0, 0, 0])}
    if case != "joint":
        roots["b"] = still([0.05, 0, 0])
    tr = tracks(**roots)
    if case == "joint":
        tr.joints["hinge"] = np.zeros(1)
    r = pen(sc, tr)
    assert r.verdict == "not_applicable" and r.evidence == []


def test_sinking_into_the_ground_counts_and_fails_the_required_set():
    sc = scene([box("a", [0.1, 0.1, 0.1]), box("ground", [3, 3, 0.2], kind="ground")])
    reports = run_checks(sc, meshes(sc), tracks(a=still([0, 0, 0.14]), ground=still([0, 0, 0])))
    r = {x.name: x for x in reports}["NoPenetration"]
    assert r.evidence[0]["depth_m"] == pytest.approx(0.01, abs=1e-6)
    assert not required_checks_pass(reports)
