"""Advisory failures read as advisory: their own shade and their own count (headless)."""
from __future__ import annotations

from studio.store.reports import Report, save_reports
from studio.ui.failures import (ADVISORY_SHADE, REQUIRED_SHADES, by_frame, current_failures, failing_frame_counts,
                                pin_shade, pins_texts)
from ui_scenes import add_boxes


def test_advisory_only_film_counts_zero_required_frames(tmp_project):
    scene = add_boxes(tmp_project, states=2)
    save_reports(tmp_project, "film", [
        Report("Supported", "fail", [{"frame": f, "body": "crate"} for f in range(1001, 1307)]),
        Report("ContactSlip", "fail", [{"frame": 1002, "bodies": ["crate", "floor"], "message": "slides 4 mm"}]),
        *(Report(n, "pass") for n in ("AnimationWellFormed", "JointLimits", "NoPenetration", "EventsSatisfied"))],
        checked_hash="x")
    pins = by_frame(current_failures(tmp_project, scene, []))
    assert failing_frame_counts(pins) == (0, 306)
    assert pins_texts(pins) == ("0 required / 306 advisory failing frames", "0 req / 306 adv", "0 / 306")
    assert {pin_shade(f) for fails in pins.values() for f in fails} == {ADVISORY_SHADE}


def test_required_and_advisory_pins_differ_and_a_frame_counts_in_both(tmp_project):
    scene = add_boxes(tmp_project, states=2)
    save_reports(tmp_project, "film", [
        Report("NoPenetration", "fail", [{"frame": 1003, "a": "crate", "b": "post", "depth_m": 0.01}]),
        Report("JointLimits", "fail", [{"joint": "shoulder", "frames": [1010, 1011], "value": 1.7, "limit": 1.5}]),
        Report("Supported", "fail", [{"frame": 1003, "body": "crate"}, {"frame": 1020, "body": "crate"}])],
        checked_hash="x")
    pins = by_frame(current_failures(tmp_project, scene, []))
    assert failing_frame_counts(pins) == (3, 2)          # 1003, 1010, 1011 required; 1003, 1020 advisory
    assert pins_texts(pins)[0] == "3 required / 2 advisory failing frames"
    shades = {(f.check, pin_shade(f)) for fails in pins.values() for f in fails}
    assert shades == {("NoPenetration", REQUIRED_SHADES["penetration"]), ("JointLimits", REQUIRED_SHADES["joint"]),
                      ("Supported", ADVISORY_SHADE)}
    assert ADVISORY_SHADE not in REQUIRED_SHADES.values()
    assert pins_texts({}) == ("no failures",)
