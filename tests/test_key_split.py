"""A key added inside a baked segment splits it: the plan's segment in two (tool and
parameters on both), the baked tracks cut at the key, one undoable tool call; the
bake then authors both halves and the film passes through the new key exactly."""
from __future__ import annotations

import calls_scenes
from studio.cli import main
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.bake import bounds_hash
from studio.timeline.commands import CommandStack
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.plan import load_plan
from studio.timeline.progress import film_verified, progress
from studio.timeline.split import split_params
from studio.timeline.storyboard import get_state
from studio.tools.box import ToolBox
from studio.ui import keying
from studio.ui.session import Session

NUDGED = [0.0, -0.05, 0.15, 0.9807853, 0, 0, 0.1950903]     # crate_a pushed aside and turned, on the floor


def sliding_film(path):
    """The calls film (start..slid interpolated, slid..rest held), baked and verified."""
    p = Project.create(path, name="slide")
    box = ToolBox(p, actor="person")
    for c in calls_scenes.calls():
        box.call(c["tool"], c["arguments"])
    assert main(["verify", str(path)]) == 0
    return p


def test_a_key_inside_a_baked_segment_splits_it_and_the_bake_passes_through_it(tmp_path):
    project = sliding_film(tmp_path / "slide")
    session, stack = Session(project), CommandStack()
    keying.key_frame(session, stack, 1007, "nudge")                 # as the window keys the playhead
    assert stack.undo_label == "Undo key nudge splitting start..slid"
    plan = load_plan(project)
    assert [(m["segment"], m.get("tool"), m.get("params")) for m in plan["motion"]] == [
        ("start..nudge", "interpolate", {"rotation": "slerp"}), ("nudge..slid", "interpolate", {"rotation": "slerp"}),
        ("slid..rest", "hold", {})]
    assert {"id": "nudge", "frame": 1007, "shot": "wide"} == next(s for s in plan["states"] if s["id"] == "nudge")
    rows = {r["segment"]: r for r in list_segments(project)}
    assert sorted(rows) == ["nudge..slid", "slid..rest", "start..nudge"]
    assert (rows["start..nudge"]["start"], rows["start..nudge"]["end"], rows["nudge..slid"]["end"]) == (1001, 1007, 1013)
    _, missing = progress(project)
    assert "segment start..nudge: waiting for its states" in missing      # the key is not approved yet
    assert not film_verified(project)[0]

    box = ToolBox(project, actor="person")
    box.call("set_state", {"state": "nudge", "roots": {"crate_a": NUDGED}})
    box.call("run_verifiers", {"state": "nudge"})
    box.call("review_state", {"state": "nudge", "verdict": "approve", "note": "a little push aside"})
    assert "segment start..nudge: cut by a new key; bake it again" in progress(project)[1]
    assert main(["bake", str(project.path), "--quiet"]) == 0           # every plan segment, as the plan says

    scene = load_scene(project)
    rows = {r["segment"]: r for r in list_segments(project)}
    assert sorted(rows) == ["nudge..slid", "slid..rest", "start..nudge"]
    assert all(r["bounds_hash"] == bounds_hash(project, seg, scene) for seg, r in rows.items())   # both baked, current
    assert (rows["start..nudge"]["tool"], rows["nudge..slid"]["tool"]) == ("interpolate", "interpolate")
    film = load_film_tracks(project)
    key = get_state(project, "nudge").pose.completed(scene)
    assert film.pose_at(1007).roots == key.roots and film.pose_at(1007).joints == key.joints     # exactly
    assert main(["verify", str(project.path)]) == 0
    assert film_verified(project) == (True, "")
    session.close()


def test_undoing_the_key_puts_the_plan_and_the_baked_segment_back(tmp_path):
    project = sliding_film(tmp_path / "slide")
    before = calls_scenes.fingerprint(project), load_plan(project)
    session, stack = Session(project), CommandStack()
    keying.key_frame(session, stack, 1004, "early")
    assert calls_scenes.fingerprint(project) != before[0]
    stack.undo()
    assert (calls_scenes.fingerprint(project), load_plan(project)) == before
    assert get_state(project, "early") is None
    stack.redo()
    assert sorted(r["segment"] for r in list_segments(project)) == ["early..slid", "slid..rest", "start..early"]
    session.close()


def test_a_key_outside_every_segment_or_already_planned_splits_nothing(tmp_path):
    project = sliding_film(tmp_path / "slide")
    box = ToolBox(project, actor="person")
    out = box.call("set_state", {"state": "after", "frame": 1040, "shot": "wide"})
    assert "split" not in out.result and len(load_plan(project)["motion"]) == 2
    plan = load_plan(project)
    plan["shots"][0]["end"] = 1040
    plan["states"].append({"id": "planned", "frame": 1019, "shot": "wide"})
    box.call("set_plan", {"plan": plan})
    out = box.call("set_state", {"state": "planned", "frame": 1019, "shot": "wide"})
    assert "split" not in out.result                                  # the plan accounts for it already
    assert out.result["cut"] == ["slid..rest"]                        # but the baked hold is cut there


def test_parameters_that_name_frames_or_places_are_divided_between_the_halves():
    roots = ({"robot": [0, 0, 0.7, 1, 0, 0, 0]}, {"robot": [2.0, 0.1, 0.7, 1, 0, 0, 0]},
             {"robot": [4, 0, 0.7, 1, 0, 0, 0]})
    walk = {"root": "robot", "legs": [], "waypoints": [[1, 0.5], [3, 0.5]], "lead": 0.2, "settle": 0.1}
    one, two, notes = split_params("walk", walk, 1000, 1050, 1100, roots, "stand")
    assert (one["waypoints"], two["waypoints"]) == ([[1, 0.5]], [[3, 0.5]])
    assert (one["lead"], two["lead"]) == (0.4, 0.0)                   # the first step stays at frame 1020
    assert (one["settle"], two["settle"]) == (0.0, 0.2)               # the settle still starts at 1090
    assert any("waypoints: 1 before the key, 1 after it" in n for n in notes)
    grasp = {"body": "panel", "effectors": [], "begin": 0.9, "walk": {"root": "robot", "legs": [], "lead": 0.6}}
    one, two, notes = split_params("grasp", grasp, 1000, 1050, 1100, roots, "stand")
    assert (one["begin"], two["begin"]) == (0.95, 0.8)                 # frame 1090 is past the key: capped, said
    assert any("the first half takes the most it allows, 0.95" in n for n in notes)
    assert (one["walk"]["lead"], two["walk"]["lead"]) == (0.8, 0.2)
    one, two, _ = split_params("hold", {"blend": 30}, 1000, 1080, 1100, roots, "stand")
    assert (one["blend"], two["blend"]) == (10, 20)
    one, two, notes = split_params("simulate", {"bodies": ["ball"]}, 1000, 1050, 1100, roots, "drop")
    assert "from" not in one and two["from"] == "drop" and two["bodies"] == ["ball"]


def test_the_doorway_keyed_at_1120_inside_lift_sidestep_bakes_both_halves(tmp_path):
    """The film this was first seen on: peek keyed mid-walk splits lift..sidestep. The carry's
    walk, kept on both halves, refuses lift..peek as it is (it says why); with a shorter weight
    shift and a wider balance on the halves, both bake and the film passes through peek."""
    import copy
    import shutil
    from pathlib import Path
    from studio.timeline.plan import segment_entry
    path = tmp_path / "doorway"
    shutil.copytree(Path(__file__).resolve().parents[1] / "projects" / "doorway", path)
    project = Project.open(path)
    session, stack = Session(project), CommandStack()
    keying.key_frame(session, stack, 1120, "peek")
    assert stack.undo_label == "Undo key peek splitting lift..sidestep"
    box = ToolBox(project, stack, actor="person")
    box.call("run_verifiers", {"state": "peek"})
    box.call("review_state", {"state": "peek", "verdict": "approve", "note": "peeks past the stand"})
    halves = ["--segment", "lift..peek", "--segment", "peek..sidestep"]
    assert main(["bake", str(path), *halves, "--quiet"]) == 1          # the walk says it cannot, and why
    assert "walk lift..peek" in next(r for r in project.db.query(
        "SELECT error FROM jobs WHERE kind = 'bake' ORDER BY id DESC LIMIT 1"))["error"]
    for seg in ("lift..peek", "peek..sidestep"):
        entry = copy.deepcopy(segment_entry(load_plan(project), seg))
        assert entry["tool"] == "carry" and entry["params"]["walk"]["step_length"] == 0.14   # kept on both
        entry["params"]["walk"].update(shift=0.2, com_tolerance=0.15)
        box.call("set_segment_tool", {"segment": seg, "tool": "carry", "params": entry["params"]})
    assert main(["bake", str(path), *halves, "--quiet"]) == 0
    scene = load_scene(project)
    rows = {r["segment"]: r for r in list_segments(project)}
    assert "lift..sidestep" not in rows
    assert all(rows[s]["bounds_hash"] == bounds_hash(project, s, scene) for s in ("lift..peek", "peek..sidestep"))
    key = get_state(project, "peek").pose.completed(scene)
    film = load_film_tracks(project)
    assert film.pose_at(1120).roots == key.roots and film.pose_at(1120).joints == key.joints
    assert main(["verify", str(path)]) == 0
    assert film_verified(project) == (True, "")
    session.close()
