"""The marble run film's story: its plan and key states; its motion is the `planar` tool's.

Each segment of the plan names the planar motion tool (pymunk in the plane
y = 0, shapes cut from the real meshes), started at rest from the `released`
state; the later segment continues the same run (`from`), so the segments
join exactly. pymunk is deterministic, so the key states are samples of that
run at their frames (the tool offers them), and the generic bake — run after
a person approves them — passes through every state exactly.
"""
from __future__ import annotations

import sys

from pathlib import Path

from studio.scene.io import load_scene
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project
from studio.timeline.commands import CommandStack, SetState
from studio.timeline.film import segment_id
from studio.timeline.motion import Segment, motion_tool
from studio.timeline.plan import save_plan
from studio.timeline.storyboard import State

from . import marble_run as scene_def
from . import story_cli
from .common import bake_plan

FRAME_START, FRAME_END = 1001, 1120
STATES = [  # id, frame, description
    ("released", 1001, "the marble rests at the top of the first ramp, about to roll"),
    ("lower_ramp", 1086, "the marble rolls down the lowest ramp towards the cup"),
    ("in_cup", FRAME_END, "the marble lies at rest in the cup"),
]
PLANAR = {"bodies": {"marble": "circle"}, "friction": 0.7, "elasticity": 0.1}


def cup_region() -> tuple[list[float], list[float]]:
    """The box the marble's centre is inside when it lies in the cup."""
    r = scene_def.CUP_RADIUS - scene_def.CUP_WALL
    return ([scene_def.CUP_X - r, -r, 0.0], [scene_def.CUP_X + r, r, scene_def.CUP_HEIGHT])


def plan() -> dict:
    lo, hi = cup_region()
    return {
        "prompt": "A glass marble is released at the top of a wooden marble run, rolls down three "
                  "zig-zag ramps and comes to rest in a copper cup.",
        "scene_brief": "Three tilted tracks on a backboard, stops at the turns, a cup on the floor, a marble.",
        "motion_brief": "Released at rest; gravity does the rest. Simulated in the run's plane.",
        "shots": [{"id": "side", "camera": "cam_side", "start": FRAME_START, "end": FRAME_END}],
        "states": [{"id": sid, "frame": f, "shot": "side", "description": d, "objects": ["marble"]}
                   for sid, f, d in STATES],
        "objects": [{"name": "marble", "description": "a glass marble, 24 mm"},
                    {"name": "ramp_1", "description": "the top ramp"},
                    {"name": "ramp_3", "description": "the lowest ramp"},
                    {"name": "cup", "description": "the copper cup that catches the marble"}],
        "events": [
            {"id": "rolls_on_top_ramp", "kind": "contact", "subjects": ["marble", "ramp_1"],
             "window": [1001, 1020], "params": {}, "after": []},
            {"id": "rolls_on_lower_ramp", "kind": "contact", "subjects": ["marble", "ramp_3"],
             "window": [1070, 1095], "params": {}, "after": ["rolls_on_top_ramp"]},
            {"id": "lands_in_cup", "kind": "enter_region", "subjects": ["marble"],
             "window": [1095, FRAME_END], "params": {"min": lo, "max": hi}, "after": ["rolls_on_lower_ramp"]},
            {"id": "rests_in_cup", "kind": "contact", "subjects": ["marble", "cup"],
             "window": [FRAME_END, FRAME_END], "params": {}, "after": ["lands_in_cup"]}],
        "motion": [{"segment": segment_id(a[0], b[0]), "tool": "planar",
                    "params": dict(PLANAR, **({"from": STATES[0][0]} if i else {})),
                    "notes": "one run of the marble from rest, sampled"}
                   for i, (a, b) in enumerate(zip(STATES, STATES[1:]))],
    }


def author_plan(project: Project) -> dict:
    """Store the marble run's plan (checked against the scene)."""
    p = plan()
    save_plan(project, p, load_scene(project), actor="example")
    return p


def simulate(scene, release: Pose, project_dir: Path) -> Tracks:
    """The marble's track from the released pose to the last frame, by the planar tool (deterministic)."""
    start = State(STATES[0][0], FRAME_START, release.completed(scene))
    end = State(STATES[-1][0], FRAME_END, release.completed(scene))
    seg = Segment(segment_id(start.id, end.id), scene, start, end, plan(), 24, project_dir)
    return motion_tool("planar").author(seg, dict(PLANAR, max_difference=1e9)).tracks


def author_states(project: Project, stack: CommandStack | None = None) -> list[State]:
    """Pose and store the key states: the released pose, then samples of its simulation
    (through the command stack, so each is undoable)."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    release = Pose.rest(scene)
    track = simulate(scene, release, project.path).roots["marble"]
    out = []
    for sid, frame, description in STATES:
        pose = release.copy()
        pose.roots["marble"] = track[frame - FRAME_START].tolist()
        state = State(sid, frame, pose, "side", description)
        stack.run(SetState(project, state, actor="example"))
        out.append(state)
    return out


def author_motion(project: Project, stack: CommandStack | None = None,
                  segments: list[str] | None = None) -> list[str]:
    """Bake every segment with the tool the plan names (each through the gate)."""
    return bake_plan(project, stack, segments)


def main(argv: list[str] | None = None) -> int:
    """`python -m studio.examples.marble_run_story storyboard|motion PATH`."""
    return story_cli.main("marble_run", scene_def, sys.modules[__name__], argv)


if __name__ == "__main__":
    raise SystemExit(main())
