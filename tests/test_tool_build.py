"""The tool layer's scene-building, framing and review tools, headless: primitive
shapes made as CAD parts with the sizes asked, refusals that name the field, a
camera framed on the action that keeps every chosen body whole in view on every
frame, notes and shot statuses that undo and replay, and the plan a person
writes from the keys without a model."""
from __future__ import annotations

import numpy as np
import pytest

from studio.scene.io import load_scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import scene_meshes
from studio.scene.parts import part_schema
from studio.timeline.commands import CommandStack
from studio.timeline.notes import load_notes, shot_statuses
from studio.timeline.plan import plan_from_keys, validate_plan
from studio.timeline.storyboard import list_states
from studio.timeline.visibility import body_box_points, in_view
from studio.tools.box import ToolBox
from studio.tools.calls import history, replay
from studio.tools.errors import ToolRefused


def box_of(project, stack=None):
    return ToolBox(project, stack, actor="person")


def test_primitives_are_made_with_their_sizes_and_wrong_sizes_are_refused_by_name(tmp_project):
    b = box_of(tmp_project)
    b.call("create_body", {"name": "post", "shape": "cylinder", "radius": 0.05, "length": 0.5})
    b.call("create_body", {"name": "ball", "shape": "sphere", "radius": 0.1})
    b.call("create_body", {"name": "pill", "shape": "capsule", "radius": 0.04, "length": 0.3})
    b.call("create_body", {"name": "crate", "shape": "box", "size": [0.3, 0.2, 0.1]})
    scene = load_scene(tmp_project)
    extents = {k: np.round(m.extents, 2).tolist() for k, m in scene_meshes(scene, tmp_project.path).items()}
    assert extents == {"post": [0.1, 0.1, 0.5], "ball": [0.2, 0.2, 0.2], "pill": [0.08, 0.08, 0.3],
                       "crate": [0.3, 0.2, 0.1]}
    assert scene.body("post").geometry.part == "cylinder" and scene.body("crate").geometry.source == "box"
    for args, says in (({"shape": "sphere", "radius": 1, "length": 2}, "create_body.length: a sphere takes radius"),
                       ({"shape": "cylinder", "radius": 1}, "create_body.length: a cylinder needs its length"),
                       ({"shape": "box", "radius": 1}, "create_body.radius: a box takes size"),
                       ({"shape": "sphere", "radius": 0}, "create_body.radius: 0 is less than or equal to"),
                       ({"shape": "cone", "radius": 1}, "create_body.shape: 'cone' is not one of")):
        with pytest.raises(ToolRefused, match=says.replace("(", r"\(")):
            b.call("create_body", {"name": "x", **args})
    assert "x" not in load_scene(tmp_project).body_names


def test_a_part_whose_parameters_give_no_solid_is_refused_when_created_not_when_drawn(tmp_project):
    from studio.scene.meshes import build_body_mesh
    b = box_of(tmp_project)
    with pytest.raises(ToolRefused) as e:          # a doorway wider than its wall
        b.call("create_body", {"name": "front_wall", "part": "wall_with_opening", "kind": "static",
                               "params": {"width": 1.0, "height": 2.0, "door_width": 1.2, "door_height": 1.9}})
    assert "front_wall" in str(e.value) and "does not fit" in str(e.value)
    assert load_scene(tmp_project).bodies == []                  # nothing stored
    b.call("create_body", {"name": "front_wall", "part": "wall_with_opening", "kind": "static",
                           "params": {"width": 3.0, "height": 2.4, "door_width": 0.9, "door_height": 2.0}})
    wall = load_scene(tmp_project).body("front_wall")
    assert build_body_mesh(wall, tmp_project.path).cache in ("memo", "hit")   # built once, when created


def test_a_part_schema_says_each_parameter_its_range_and_default():
    stand = part_schema("stand")
    assert stand["properties"]["height"] == {"type": "number", "description": "metres", "exclusiveMinimum": 0.0,
                                             "default": 0.55}
    assert stand["required"] == [] and stand["additionalProperties"] is False
    assert part_schema("capsule")["required"] == ["length", "radius"]
    gear = part_schema("spur_gear")["properties"]["teeth"]
    assert (gear["type"], gear["minimum"], gear["maximum"]) == ("integer", 6, 400)
    assert part_schema("cylinder")["properties"]["radius"]["default"] == 0.05


def arm_with_keys(project) -> ToolBox:
    b = box_of(project)
    b.call("create_body", {"name": "floor", "kind": "ground", "size": [6, 6, 0.1], "offset": [0, 0, -0.05],
                           "rest": [0, 0, 0, 1, 0, 0, 0]})
    b.call("create_body", {"name": "crate", "size": [0.3, 0.3, 0.3], "rest": [-1, 0, 0.15, 1, 0, 0, 0]})
    b.call("create_body", {"name": "base", "kind": "static", "shape": "cylinder", "radius": 0.08, "length": 0.1,
                           "rest": [1, 1, 0.05, 1, 0, 0, 0]})
    b.call("create_body", {"name": "link", "kind": "link", "size": [0.05, 0.05, 0.6], "offset": [0, 0, 0.31],
                           "parent": "base", "joint": {"name": "hinge", "type": "revolute", "axis": [0, 1, 0],
                                                        "origin": [0, 0, 0.05], "lower": -1.4, "upper": 1.4}})
    b.call("set_state", {"state": "a", "frame": 1001})
    b.call("set_state", {"state": "b", "frame": 1030, "roots": {"crate": [1.5, -1.2, 0.15, 1, 0, 0, 0]},
                         "joints": {"hinge": 1.3}})
    return b


def test_framing_the_action_keeps_every_chosen_body_whole_in_view_on_every_frame(tmp_project):
    b = arm_with_keys(tmp_project)
    out = b.call("frame_action", {"name": "cam_action", "bodies": ["crate", "link"], "direction": [-1, 2, -0.6],
                                  "resolution": [320, 180], "margin": 0.1})
    assert out.result["frames"] == [1001, 1030] and out.result["in_view"] == "2 bodies whole in view on 30 frames"
    scene = load_scene(tmp_project)
    cam = scene.camera("cam_action")
    forward = np.subtract(cam.target, cam.position)
    assert np.allclose(forward / np.linalg.norm(forward), np.array([-1, 2, -0.6]) / np.linalg.norm([-1, 2, -0.6]))
    boxes = body_box_points(scene, tmp_project.path)
    states = {s.id: s for s in list_states(tmp_project)}
    worst = 0.0
    for f in range(1001, 1031):                       # nothing baked: the key that holds is what shows
        pose = (states["a"] if f < 1030 else states["b"]).pose.completed(scene)
        world = pose_world(scene, pose)
        for body in ("crate", "link"):
            pts = boxes[body] @ world[body][:3, :3].T + world[body][:3, 3]
            assert in_view(cam, pts).all(), (f, body)
            from studio.scene.transforms import invert, look_at
            c = invert(look_at(cam.position, cam.target))
            p = pts @ c[:3, :3].T + c[:3, 3]
            sensor_h = cam.sensor_mm * 180 / 320                 # the sensor spans the wider side
            worst = max(worst, float(np.max(np.abs(cam.lens_mm * p[:, 0] / -p[:, 2] / cam.sensor_mm))),
                        float(np.max(np.abs(cam.lens_mm * p[:, 1] / -p[:, 2] / sensor_h))))
    assert 0.35 < worst <= 0.4 + 1e-6                # as near as the margin lets it: the action fills the image
    with pytest.raises(ToolRefused, match=r"frame_action.bodies\[1\]: no body named 'ghost'"):
        b.call("frame_action", {"name": "cam2", "bodies": ["crate", "ghost"]})
    with pytest.raises(ToolRefused, match="frame_action.direction: straight up or down"):
        b.call("frame_action", {"name": "cam2", "bodies": ["crate"], "direction": [0, 0, -1]})
    with pytest.raises(ToolRefused, match="frame_action.frames: last frame 1001 is before first frame 1020"):
        b.call("frame_action", {"name": "cam2", "bodies": ["crate"], "frames": [1020, 1001]})


def test_notes_and_shot_statuses_undo_redo_and_replay_from_the_calls(tmp_project, tmp_path):
    stack = CommandStack()
    b = arm_with_keys(tmp_project)
    b.call("add_camera", {"name": "cam", "position": [3, -3, 2], "target": [0, 0, 0.3]})
    b = box_of(tmp_project, stack)
    stroke = {"points": [[0.2, 0.3], [0.4, 0.35], [0.5, 0.5]], "color": "#ffd60a", "width": 4}
    b.call("add_note", {"note": "note_1012", "frame": 1012, "text": "lift the crate sooner", "camera": "cam",
                        "strokes": [stroke]})
    b.call("add_note", {"frame": 1012, "text": "and slower"})          # an id of its own on the same frame
    notes = load_notes(tmp_project)
    assert [(n.id, n.frame, n.by) for n in notes] == [("note_1012", 1012, "person"), ("note_1012_2", 1012, "person")]
    assert notes[0].strokes[0].points[1] == [0.4, 0.35] and notes[0].strokes[0].color == "#ffd60a"
    stack.undo()
    assert [n.id for n in load_notes(tmp_project)] == ["note_1012"]
    stack.redo()
    b.call("delete_note", {"note": "note_1012_2"})
    for args, says in (({"frame": 1012, "text": " "}, "add_note.text: a note says something or draws something"),
                       ({"frame": 1012, "text": "x", "camera": "nope"}, "add_note.camera: no camera named 'nope'"),
                       ({"frame": 1012, "text": "x", "strokes": [{"points": [[1.2, 0.5]]}]},
                        r"add_note.strokes\[0\].points\[0\]\[0\]: 1.2 is greater than the maximum of 1")):
        with pytest.raises(ToolRefused, match=says):
            b.call("add_note", args)
    with pytest.raises(ToolRefused, match="set_shot_status.shot: no shot 'wide' in the plan"):
        b.call("set_shot_status", {"shot": "wide", "status": "done"})
    plan = plan_from_keys(list_states(tmp_project), "cam", "crate_push")
    b.call("set_plan", {"plan": plan})
    with pytest.raises(ToolRefused, match="set_shot_status.note: a retake needs a note"):
        b.call("set_shot_status", {"shot": "crate_push", "status": "retake"})
    b.call("set_shot_status", {"shot": "crate_push", "status": "retake", "note": "the crate slides too far"})
    [st] = shot_statuses(tmp_project, plan)
    assert (st.shot, st.words, st.note, st.by) == ("crate_push", "retake", "the crate slides too far", "person")

    from studio.store.project import Project
    again = Project.create(tmp_path / "again")
    replay(again, history(tmp_project))
    assert [(n.id, n.frame, n.text, len(n.strokes)) for n in load_notes(again)] == \
        [("note_1012", 1012, "lift the crate sooner", 1)]
    assert [s.status for s in shot_statuses(again, again.get_doc("plan"))] == ["retake"]
    again.close()


def test_the_plan_from_the_keys_names_a_shot_and_keeps_what_a_plan_said(tmp_project):
    b = arm_with_keys(tmp_project)
    b.call("add_camera", {"name": "cam_side", "position": [3, -3, 2], "target": [0, 0, 0.3]})
    scene = load_scene(tmp_project)
    plan = plan_from_keys(list_states(tmp_project), "cam_side", "hinge_swing")
    validate_plan(plan, scene)
    assert plan["shots"] == [{"id": "hinge_swing", "camera": "cam_side", "start": 1001, "end": 1030}]
    assert [(s["id"], s["shot"]) for s in plan["states"]] == [("a", "hinge_swing"), ("b", "hinge_swing")]
    assert plan["motion"] == [{"segment": "a..b"}]
    plan["motion"][0].update(tool="hold", params={"blend": 10})
    plan["states"].append({"id": "later", "frame": 1060, "shot": "hinge_swing", "description": "planned, not keyed"})
    plan["shots"][0]["end"] = 1060
    b.call("set_plan", {"plan": plan})
    b.call("set_state", {"state": "mid", "frame": 1015})             # a key made since, between the two
    again = plan_from_keys(list_states(tmp_project), "cam_side", "hinge_swing", plan)
    validate_plan(again, scene)
    assert [s["id"] for s in again["states"]] == ["a", "mid", "b", "later"]      # the planned state stays
    assert again["motion"] == [{"segment": "a..mid"}, {"segment": "mid..b"}, {"segment": "b..later"}]
    kept = plan_from_keys([s for s in list_states(tmp_project) if s.id != "mid"], "cam_side", "hinge_swing", plan)
    assert kept["motion"][0] == {"segment": "a..b", "tool": "hold", "params": {"blend": 10}}   # its tool kept


def test_framing_a_baked_film_reads_every_frame_of_it(tmp_project):
    from studio.scene.kinematics import tracks_world
    from studio.timeline.film import load_film_tracks
    b = arm_with_keys(tmp_project)
    for sid in ("a", "b"):
        b.call("run_verifiers", {"state": sid})
        b.call("review_state", {"state": sid, "verdict": "approve"})
    b.call("author_segment", {"segment": "a..b", "tool": "interpolate", "params": {"rotation": "slerp"}})
    out = b.call("frame_action", {"name": "cam_film", "bodies": ["link"], "margin": 0.05})
    assert out.result["frames"] == [1001, 1030]
    scene = load_scene(tmp_project)
    cam, film = scene.camera("cam_film"), load_film_tracks(tmp_project)
    world = tracks_world(scene, film)["link"]
    pts = np.einsum("fij,pj->fpi", world[:, :3, :3], body_box_points(scene, tmp_project.path)["link"])
    pts += world[:, None, :3, 3]
    assert in_view(cam, pts.reshape(-1, 3)).all()
    # the frames before the film are the first key's: asked for, they are framed as it holds there
    out = b.call("frame_action", {"name": "cam_wider", "bodies": ["link", "crate"], "frames": [990, 1040]})
    assert out.result["in_view"] == "2 bodies whole in view on 51 frames"
