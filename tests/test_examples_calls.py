"""The example films are calls files: nothing under studio/ names an example scene, every
example is listed by the folders it has, a replayed example's history (`studio agent log
--calls`) replays again to the same film, and a calls file says poses and tools, never frames."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from calls_scenes import fingerprint

from studio.tools.calls import read_calls
from studio.cli import main
from studio.examples import calls_file, example_names
from studio.examples.pipeline import PipelineError, example_calls, replay_stages
from studio.store.project import Project
from studio.timeline.plan import plan_segments
from studio.timeline.reviews import list_reviews

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ["crates", "dog_paper", "doorway", "g1_delivery", "marble_run", "person_door", "shelving"]
# The example folders' names and the things only their scenes hold. ("panel" and "paper" are left
# out: the studio's panels are its docked views and its scorer is a paper's.)
SCENE_WORDS = re.compile(r"doorway|marble|\bdogs?\b|dog_|newspaper|crate|shelf|" + "|".join(EXAMPLES), re.I)


def test_no_module_under_studio_names_an_example_scene():
    found = []
    for path in sorted((ROOT / "studio").rglob("*")):
        if path.suffix not in (".py", ".json", ".txt", ".md", ".toml") or "__pycache__" in path.parts:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if SCENE_WORDS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []


def test_the_examples_are_the_folders_of_resources_examples(capsys):
    assert example_names() == EXAMPLES
    assert main(["demo", "--list"]) == 0
    assert capsys.readouterr().out.split() == EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_a_calls_file_says_poses_and_segment_tools_never_frames(name):
    calls = read_calls(calls_file(name))            # every line a known tool with arguments that fit its schema
    plan = next(c.arguments["plan"] for c in calls if c.tool == "set_plan")
    authored = [c.arguments["segment"] for c in calls if c.tool == "author_segment"]
    assert authored == plan_segments(plan)
    assert all(m.get("tool") and "params" in m for m in plan["motion"])      # motion comes from segment tools
    states = [c.arguments for c in calls if c.tool == "set_state"]
    assert [s["state"] for s in states] == [s["id"] for s in plan["states"]]
    def keys(v):
        if isinstance(v, dict):
            return set(v) | set().union(*map(keys, v.values()))
        return set().union(*map(keys, v)) if isinstance(v, list) else set()
    said = set().union(*(keys(c.arguments) for c in calls))
    assert not said & {"tracks", "frame_start", "frame_end", "samples"}        # no baked frames anywhere
    assert {c.tool for c in calls} <= {"name_scene", "add_material", "import_character", "create_body",
                                       "build_part_code", "add_frame", "add_camera", "allow_overlap", "set_plan", "set_segment_tool", "set_state",
                                       "set_joint", "place_relative", "solve_ik", "run_verifiers", "review_state",
                                       "author_segment"}


def test_a_replayed_examples_history_replays_to_the_same_film(tmp_path):
    first = tmp_path / "first"
    with Project.create(first, name="crates", fps=24, frame_start=1001):
        pass
    assert main(["agent", "replay", str(first), str(calls_file("crates")), "--quiet"]) == 0
    with Project.open(first) as p:
        made = fingerprint(p)
        assert {r.reviewer for r in list_reviews(p)} == {"replay"}          # never recorded as a person
    assert made["film"] and set(made["tracks"]) == {"rolling..falling", "falling..at_rest"}
    log = tmp_path / "history.jsonl"
    assert main(["agent", "log", str(first), "--calls", str(log)]) == 0
    assert len(log.read_text().splitlines()) == len(example_calls("crates"))
    again = tmp_path / "again"
    with Project.create(again, name="crates", fps=24, frame_start=1001):
        pass
    assert main(["agent", "replay", str(again), str(log), "--quiet"]) == 0
    with Project.open(again) as p:
        assert fingerprint(p) == made
    with replay_stages("crates", tmp_path / "pipeline") as p:     # the pipeline's code path: the same film
        assert fingerprint(p) == made


def test_an_example_out_of_stage_order_is_refused_by_line(tmp_path, monkeypatch):
    lines = calls_file("crates").read_text().splitlines()
    review = next(i for i, line in enumerate(lines) if json.loads(line)["tool"] == "review_state")
    lines.insert(1, lines.pop(review))                  # a review before the scene exists
    (tmp_path / "shuffled").mkdir()
    (tmp_path / "shuffled" / "calls.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("KEYPOSE_EXAMPLES", str(tmp_path))
    assert example_names() == ["shuffled"]
    with pytest.raises(PipelineError, match=r"calls.jsonl line 3: add_material belongs to the scene stage"):
        replay_stages("shuffled", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_unknown_example_is_bad_input(tmp_path, capsys):
    assert main(["demo", "kiln", "--out", str(tmp_path)]) == 2
    assert "crates, dog_paper, doorway, g1_delivery, marble_run" in capsys.readouterr().err


def test_scene_tools_an_example_needs_are_undoable_audited_and_checked(tmp_path):
    from studio.tools.calls import history
    from studio.tools.errors import ToolRefused
    from studio.tools.box import ToolBox
    from studio.scene.io import load_scene
    from studio.timeline.commands import CommandStack
    with Project.create(tmp_path / "p", name="p") as p:
        stack = CommandStack()
        box = ToolBox(p, stack, actor="person")
        box.call("name_scene", {"name": "workshop"})
        box.call("add_material", {"name": "oak", "color": [0.6, 0.4, 0.2, 1.0], "roughness": 0.7})
        box.call("create_body", {"name": "base", "kind": "static", "size": [1, 1, 0.1], "mass": 0,
                                 "rest": [0, 0, 0, 1, 0, 0, 0]})
        box.call("create_body", {"name": "lid", "kind": "link", "part": "panel", "material": "oak",
                                 "params": {"width": 0.5}, "tolerance": 0.002,
                                 "offset": [0, 0, 0.01], "offset_rotation": [0.7071068, 0.7071068, 0, 0],
                                 "parent": "base", "joint": {"name": "hinge", "type": "revolute",
                                                             "origin": [0, 0.5, 0.05],
                                                             "rotation": [0.7071068, 0, 0, 0.7071068],
                                                             "axis": [1, 0, 0], "lower": 0, "upper": 1.5}})
        scene = load_scene(p)
        lid = scene.body("lid")
        assert scene.name == "workshop" and scene.materials[0].color == [0.6, 0.4, 0.2, 1.0]
        assert lid.geometry.params == {"width": 0.5}                # as said; defaults filled at build
        assert lid.geometry.tolerance == 0.002 and lid.material == "oak"
        assert lid.geometry.offset.rotation == pytest.approx([0.7071068, 0.7071068, 0, 0], abs=1e-6)
        assert scene.joint("hinge").origin.rotation == pytest.approx([0.7071068, 0, 0, 0.7071068], abs=1e-6)
        assert [c.tool for c in history(p)] == ["name_scene", "add_material", "create_body", "create_body"]
        with pytest.raises(ToolRefused, match=r"add_material.color\[0\]: 1.5 is greater than the maximum of 1"):
            box.call("add_material", {"name": "oak", "color": [1.5, 0, 0, 1]})
        with pytest.raises(ToolRefused, match="create_body: .*width"):
            box.call("create_body", {"name": "bad", "part": "panel", "params": {"width": -1}})
        assert load_scene(p) == scene                               # refused calls change nothing
        for _ in range(4):
            stack.undo()
        assert load_scene(p).name != "workshop" and load_scene(p).materials == [] and history(p) == []
