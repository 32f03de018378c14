"""What the window's new docks decide, without Qt: a camera from the view sees what the
view saw, a frame placed on a surface sits on it with Z along the normal, an empty
scene keys nothing, the motion preview is exactly what the bake then stores, the
review report's PNG puts a stroke where it was drawn, two renders compose side by
side or by a wipe, and a repair reads in words."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PIL import Image

from studio.scene.io import load_scene
from studio.scene.transforms import from_7
from studio.timeline.film import load_segment
from studio.tools.box import ToolBox
from studio.ui import building, keying
from studio.ui.flipbook import compose
from studio.ui.repair_words import change_rows, verified_words
from studio.ui.segments import preview_tracks, segment_rows
from studio.ui.session import Session


def test_a_camera_from_the_view_has_the_views_vertical_angle():
    args = building.camera_from_view("cam", (3, -3, 2), (0, 0, 0.5), 30.0, (320, 180))
    # the viewport sets VTK's (vertical) view angle from the lens as it does for a shot camera
    half_h = math.atan(args["sensor_mm"] / 2 / args["lens_mm"] * (180 / 320))
    assert math.degrees(2 * half_h) == pytest.approx(30.0, abs=1e-3)
    tall = building.camera_from_view("cam", (3, -3, 2), (0, 0, 0.5), 40.0, (180, 320))
    assert math.degrees(2 * math.atan(tall["sensor_mm"] / 2 / tall["lens_mm"])) == pytest.approx(40.0, abs=1e-3)


def test_a_frame_placed_on_a_surface_sits_there_with_z_along_the_normal():
    world = from_7(np.array([1.0, 2.0, 0.5, math.cos(0.4), 0, 0, math.sin(0.4)]))     # a body turned about Z
    point, normal = np.array([1.2, 2.1, 0.75]), np.array([0.0, 0.0, 1.0])
    args = building.frame_on_surface("grip", "crate", world, point, normal)
    local = from_7(np.array([*args["position"], *args["rotation"]]))
    placed = world @ local
    assert np.allclose(placed[:3, 3], point, atol=1e-6) and np.allclose(placed[:3, 2], normal, atol=1e-6)
    assert abs(np.linalg.det(local[:3, :3]) - 1) < 1e-9          # a proper rotation
    side = building.frame_on_surface("side", "crate", np.eye(4), [0.1, 0, 0], [0, 1, 0])   # Z along +Y works too
    assert np.allclose(from_7(np.array([*side["position"], *side["rotation"]]))[:3, 2], [0, 1, 0], atol=1e-6)


def test_an_empty_scene_keys_nothing_and_the_key_name_follows_the_frame(tmp_project):
    session = Session(tmp_project)
    from studio.timeline.commands import CommandStack
    with pytest.raises(ValueError, match="nothing to key: the scene has no bodies"):
        keying.key_frame(session, CommandStack(), 1001, "key_1001")
    assert session.states == [] and tmp_project.db.execute("SELECT count(*) FROM states").fetchone()[0] == 0
    ToolBox(tmp_project, actor="person").call("create_body", {"name": "crate", "size": [0.2, 0.2, 0.2]})
    session.refresh()
    assert keying.default_key_name(session, 1120) == "key_1120"
    keying.key_frame(session, CommandStack(), 1120, "key_1120")
    session.refresh()
    assert keying.default_key_name(session, 1120) == "key_1120_2"


def test_a_body_form_and_its_arguments_again(tmp_project):
    args = building.body_arguments("upper", shape="box", sizes={"size": [0.06, 0.06, 0.4]}, kind="link",
                                   offset=(0, 0, 0.2), parent="base",
                                   joint={"name": "shoulder", "type": "revolute", "axis": [0, 1, 0],
                                          "origin": [0, 0, 0.05], "lower": -1.2, "upper": 1.2})
    b = ToolBox(tmp_project, actor="person")
    b.call("create_body", building.body_arguments("base", shape="cylinder", sizes={"radius": 0.08, "length": 0.1},
                                                  kind="static", position=(0, 0, 0.05), yaw_deg=90))
    b.call("create_body", args)
    scene = load_scene(tmp_project)
    assert scene.rest["base"][3:] == pytest.approx([math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])
    again = building.body_arguments_of(scene, "upper")       # made again as it is: the same scene
    b.call("create_body", again)
    assert load_scene(tmp_project).to_dict() == scene.to_dict()
    with pytest.raises(ValueError, match="joint.name"):
        building.body_arguments("x", parent="base", joint={"type": "fixed"})


def test_the_motion_preview_is_what_the_bake_stores(tmp_project):
    from test_tool_build import arm_with_keys
    b = arm_with_keys(tmp_project)
    b.call("add_camera", {"name": "cam", "position": [3, -3, 2], "target": [0, 0, 0.3]})
    session = Session(tmp_project)
    rows = segment_rows(tmp_project, session.states)
    assert [(r.segment, r.in_plan, r.tool, r.named) for r in rows] == [("a..b", False, "interpolate", False)]
    from studio.timeline.plan import plan_from_keys
    b.call("set_plan", {"plan": plan_from_keys(session.states, "cam", "swing")})
    preview = preview_tracks(tmp_project.path, "a..b", "hold", {"blend": 12})
    assert load_segment(tmp_project, "a..b") is None                  # nothing stored by the preview
    for sid in ("a", "b"):
        b.call("run_verifiers", {"state": sid})
        b.call("review_state", {"state": sid, "verdict": "approve"})
    b.call("author_segment", {"segment": "a..b", "tool": "hold", "params": {"blend": 12}})
    assert load_segment(tmp_project, "a..b").hash() == preview.hash()
    with pytest.raises(ValueError, match="blend of 40 frames does not fit"):
        preview_tracks(tmp_project.path, "a..b", "hold", {"blend": 40})


def test_the_review_report_puts_a_drawn_note_on_its_frame(tmp_project, tmp_path):
    from studio.jobs.review_report import write_review_report
    from test_tool_build import arm_with_keys
    from studio.timeline.plan import plan_from_keys
    b = arm_with_keys(tmp_project)
    b.call("add_camera", {"name": "cam", "position": [3, -3, 2], "target": [0, 0, 0.3], "resolution": [200, 100]})
    b.call("set_plan", {"plan": plan_from_keys(Session(tmp_project).states, "cam", "swing")})
    b.call("add_note", {"frame": 1040, "text": "past the film: a card", "camera": "cam",
                        "strokes": [{"points": [[0.25, 0.5], [0.75, 0.5]], "color": "#ff0000", "width": 6}]})
    b.call("add_note", {"frame": 1010, "text": "words only"})
    b.call("set_shot_status", {"shot": "swing", "status": "done", "note": "signed off"})
    jpath, mpath = write_review_report(tmp_project, tmp_path)
    report = json.loads(jpath.read_text())
    assert [(n["frame"], n.get("png")) for n in report["notes"]] == [(1010, None), (1040, "notes/note_1040.png")]
    assert report["notes"][1]["on_rendered_frame"] is False and report["shots"][0]["status_words"] == "done"
    img = np.asarray(Image.open(tmp_path / "notes" / "note_1040.png").convert("RGB"))
    assert img.shape[1] == 200 and img.shape[0] > 100
    ys, xs = np.nonzero((img[:100, :, 0] > 200) & (img[:100, :, 1] < 60))
    assert xs.min() <= 52 and xs.max() >= 148 and abs(np.median(ys) - 50) <= 2     # the line, where it was drawn
    assert "- **swing** 1001–1030 through cam: done: signed off" in mpath.read_text()


def test_two_renders_compose_side_by_side_and_by_a_wipe():
    a = np.zeros((90, 160, 3), np.uint8)
    b = np.full((45, 80, 3), 200, np.uint8)                      # another size: resampled to line up
    side = compose(a, b, "side by side")
    assert side.shape == (90, 324, 3) and side[:, 164:].min() == 200 and side[:, :160].max() == 0
    wipe = compose(a, b, "wipe", 0.25)
    assert wipe.shape == a.shape and wipe[:, :38].max() == 0 and wipe[:, 41:].min() == 200
    assert compose(a, b, "off") is a


def test_a_repair_reads_in_words():
    rows = change_rows([{"kind": "root", "name": "panel", "from": [-1.5, 0, 0.545, 1, 0, 0, 0],
                         "to": [-1.5, 0, 0.561, 1, 0, 0, 0]},
                        {"kind": "joint", "name": "elbow", "from": 0.3, "to": 0.25},
                        {"kind": "segment", "segment": "a..b", "from": {"tool": "carry", "params": {}},
                         "tool": "carry", "params": {"tolerance": 0.005, "via": [0, 0, 0.1]}}])
    assert rows[0] == ("move", "panel", "at -1.500, 0.000, 0.545", "to -1.500, 0.000, 0.561 (z +16.0 mm)")
    assert rows[1] == ("joint", "elbow", "0.300", "0.250 (−2.9°)")
    assert rows[2][2:] == ("carry (its defaults)", "carry: tolerance 0.005, via 0, 0, 0.1")
    words = verified_words({"fixes_target": True, "new_required_failures": [],
                            "before": {"NoPenetration": "fail", "JointLimits": "pass", "Supported": "fail"},
                            "after": {"NoPenetration": "pass", "JointLimits": "pass", "Supported": "fail"}},
                           "NoPenetration")
    assert words == "fixes its NoPenetration failure; adds no required failure; still failing: Supported"
