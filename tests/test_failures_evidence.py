"""Every check's evidence read with its own keys: the real verifiers' reports on small
films become failures that name the bodies and the figure; runs, lanes and the filter."""
from __future__ import annotations

import numpy as np

from checks_films import box, meshes, scene, still, tracks
from studio.checks.run import run_checks
from studio.ui.failures import Failure, PinFilter, by_frame, filtered_frames, lanes, report_failures

GROUND = box("ground", [4, 4, 0.1], kind="ground")


def failures(sc, tr):
    out = []
    for r in run_checks(sc, meshes(sc), tr):
        out += report_failures(r, sc, "film", None)
    return out


def test_slip_names_the_body_its_support_and_the_millimetres():
    sc = scene([GROUND, box("a", [0.1, 0.1, 0.1]), box("b", [0.1, 0.1, 0.1])])
    a = still([0, 0, 0.05], n=6)
    a[:, 0] = np.linspace(0, 0.0155, 6)            # slides 3.1 mm a frame
    fails = [f for f in failures(sc, tracks(1, ground=still([0, 0, -0.05], n=6), a=a,
                                            b=still([1, 0, 0.05], n=6))) if f.check == "ContactSlip"]
    assert [f.frame for f in fails] == [2, 3, 4, 5, 6]
    assert all(f.bodies == ("a", "ground") and not f.required for f in fails)
    assert fails[0].text == "a slips 3.1 mm on ground"


def test_margin_names_every_body_of_the_character_and_how_far_outside():
    sc = scene([GROUND, box("foot", [0.3, 0.2, 0.1]), box("torso", [0.1, 0.1, 0.1], mass=10.0)],
               joints=[{"name": "waist", "type": "revolute", "parent": "foot", "child": "torso",
                        "origin": {"position": [0.5, 0, 0.5]}, "axis": [0, 1, 0]}])
    tr = tracks(1, ground=still([0, 0, -0.05], n=3), foot=still([0, 0, 0.05], n=3))
    tr.joints["waist"] = np.zeros(3)
    fails = [f for f in failures(sc, tr) if f.check == "SupportMargin"]
    assert [f.frame for f in fails] == [1, 2, 3]
    assert set(fails[0].bodies) == {"foot", "torso"}
    # the centre of mass sits at x = 10*0.5/11 = 0.4545; the foot reaches 0.15: 305 mm outside
    assert fails[0].text.startswith("foot's centre of mass 30") and fails[0].text.endswith("mm outside its feet")


def test_a_jump_names_the_body_and_its_size_and_a_penetration_its_push():
    sc = scene([GROUND, box("a", [0.1, 0.1, 0.1]), box("wall", [0.1, 1, 1], kind="static")])
    a = still([0, 0, 0.05], n=12)
    a[:, 0] = np.linspace(0, 0.11, 12)
    a[6:, 0] += 0.5                                 # jumps half a metre, into the wall
    tr = tracks(1, ground=still([0, 0, -0.05], n=12), a=a, wall=still([0.66, 0, 0.5], n=12))
    fails = failures(sc, tr)
    jumps = [f for f in fails if f.check == "Continuity"]
    assert [f.frame for f in jumps] == [6, 7] and jumps[0].bodies == ("a",)
    assert jumps[0].text.startswith("a position jumps 5") and "(limit 50 mm)" in jumps[0].text
    pen = [f for f in fails if f.check == "NoPenetration"]
    assert pen and pen[0].bodies == ("a", "wall") and pen[0].required and pen[0].text.startswith("a into wall ")
    assert pen[0].point is not None and pen[0].push is not None
    assert pen[0].push[0] < 0                       # the push moves a back out of the wall, along -x


def fail(frame, check, required, bodies=("crate",)):
    return Failure(frame, check, "penetration" if required else "other", bodies, f"{check} at {frame}",
                   required=required)


def test_consecutive_frames_are_one_run_per_lane_and_the_filter_narrows_them():
    fs = [fail(f, "NoPenetration", True, ("crate", "post")) for f in range(10, 20)]
    fs += [fail(f, "ContactSlip", False) for f in (12, 13, 14, 30)]
    fs += [fail(f, "Continuity", False, ("arm",)) for f in (15, 31)]
    at = by_frame(fs)
    runs = lanes(at)
    assert [(r.first, r.last, r.count) for r in runs["required"]] == [(10, 19, 10)]
    assert [(r.first, r.last) for r in runs["advisory"]] == [(12, 15), (30, 31)]
    assert runs["advisory"][0].checks == ("ContactSlip", "Continuity")
    assert "frames 10–19 (10)" in runs["required"][0].describe()
    only = lanes(at, PinFilter(required_only=True))
    assert only["advisory"] == [] and len(only["required"]) == 1
    slip = lanes(at, PinFilter(check="ContactSlip"))
    assert [(r.first, r.last) for r in slip["advisory"]] == [(12, 14), (30, 30)] and slip["required"] == []
    arm = PinFilter(body="arm")
    assert filtered_frames(at, arm) == [15, 31] and str(arm) == "on arm"


def test_five_thousand_failing_frames_make_one_run():
    at = by_frame([fail(f, "NoPenetration", True) for f in range(1001, 6001)])
    assert [(r.first, r.last, r.count) for r in lanes(at)["required"]] == [(1001, 6000, 5000)]


def test_the_export_refusal_names_the_failing_frames_and_the_next_step():
    from studio.ui.failures import refusal_text
    fs = [fail(f, "NoPenetration", True) for f in (*range(1010, 1031), 1040)]
    fs += [fail(1012, "JointLimits", True), fail(1050, "ContactSlip", False)]
    text = refusal_text(fs)
    assert "• NoPenetration fails on frames 1010–1030, 1040 (22 frames)" in text
    assert "• JointLimits fails on frame 1012 (1 frame)" in text and "ContactSlip" not in text
    assert "Next: go to frame 1010" in text and "Verify" in text
