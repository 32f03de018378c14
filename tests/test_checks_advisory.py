"""Advisory verifiers: Continuity, ContactSlip, SupportMargin on films with known answers."""
from __future__ import annotations

import numpy as np
import pytest

from checks_films import box, meshes, scene, still, tracks
from studio.checks.report import required_checks_pass
from studio.checks.run import run_checks

GROUND = box("ground", [4, 4, 0.1], kind="ground")


def by_name(sc, tr, **kw):
    reports = run_checks(sc, meshes(sc), tr, **kw)
    return {r.name: r for r in reports}, reports


def test_a_teleport_is_a_continuity_spike_on_both_sides_of_the_jump():
    sc = scene([GROUND, box("a", [0.1, 0.1, 0.1])])
    a = still([0, 0, 0.05], n=12)
    a[:, 0] = np.linspace(0, 0.11, 12)          # 1 cm a frame: smooth
    a[6:, 0] += 0.5                             # jumps 0.5 m between frames 6 and 7
    r, reports = by_name(sc, tracks(1, ground=still([0, 0, -0.05], n=12), a=a))
    assert [(e["frame"], e["body"], e["what"]) for e in r["Continuity"].evidence] == [
        (6, "a", "position"), (7, "a", "position")]
    assert r["Continuity"].evidence[0]["value"] == pytest.approx(0.5)
    assert required_checks_pass(reports)        # advisory: does not block


def test_sliding_on_the_ground_is_slip_and_standing_still_is_not():
    sc = scene([GROUND, box("a", [0.1, 0.1, 0.1]), box("b", [0.1, 0.1, 0.1])])
    a = still([0, 0, 0.05], n=6)
    a[:, 0] = np.linspace(0, 0.05, 6)           # slides 1 cm a frame
    r, _ = by_name(sc, tracks(1, ground=still([0, 0, -0.05], n=6), a=a, b=still([1, 0, 0.05], n=6)))
    ev = r["ContactSlip"].evidence
    assert [(e["frame"], e["body"], e["support"]) for e in ev] == [(f, "a", "ground") for f in range(2, 7)]
    assert all(e["slip_m"] == pytest.approx(0.01, abs=1e-6) for e in ev)


def test_a_slip_of_a_held_body_is_one_row_however_many_records_say_the_hold():
    sc = scene([GROUND, box("hand", [0.1, 0.1, 0.1]), box("b", [0.1, 0.1, 0.1])])
    hand = still([0, 0, 1.0], n=8)
    hand[:, 0] = np.linspace(0, 0.7, 8)          # the hand moves 10 cm a frame
    held = hand.copy()
    held[:, 2] -= 0.1
    held[4:, 0] += 0.01                          # the body slips 1 cm in the hand between frames 4 and 5
    holds = [{"frame": "hand", "body": "b", "start": 1, "end": 6},     # a carry's record
             {"frame": "hand", "body": "b", "start": 3, "end": 8}]     # and the next segment's
    r, _ = by_name(sc, tracks(1, ground=still([0, 0, -0.05], n=8), hand=hand, b=held), attachments=holds)
    ev = [e for e in r["ContactSlip"].evidence if e["while"] == "carried"]
    assert [(e["frame"], e["body"], e["support"]) for e in ev] == [(5, "b", "hand")]
    assert ev[0]["slip_m"] == pytest.approx(0.01, abs=1e-6)


def leaning(offset):
    sc = scene([GROUND, box("foot", [0.3, 0.2, 0.1]), box("torso", [0.1, 0.1, 0.1], mass=10.0)],
               joints=[{"name": "waist", "type": "revolute", "parent": "foot", "child": "torso",
                        "origin": {"position": [offset, 0, 0.5]}, "axis": [0, 1, 0]}])
    tr = tracks(1, ground=still([0, 0, -0.05], n=3), foot=still([0, 0, 0.05], n=3))
    tr.joints["waist"] = np.zeros(3)
    return sc, tr


def test_centre_of_mass_outside_the_feet_has_a_negative_margin():
    r, _ = by_name(*leaning(0.5))
    ev = r["SupportMargin"].evidence
    assert [e["frame"] for e in ev] == [1, 2, 3]
    com_x = 10 * 0.5 / 11
    assert all(-(com_x - 0.10) < e["margin_m"] < -(com_x - 0.15) for e in ev)   # the foot reaches 0.10..0.15
    assert by_name(*leaning(0.0))[0]["SupportMargin"].verdict == "pass"


def test_no_character_is_not_applicable():
    sc = scene([GROUND, box("a", [0.1, 0.1, 0.1])])
    r, _ = by_name(sc, tracks(1, ground=still([0, 0, -0.05]), a=still([0, 0, 0.05])))
    assert r["SupportMargin"].verdict == "not_applicable"
