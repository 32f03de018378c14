"""The crates film's story: its plan and key states; its motion is the `simulate` tool's.

The ball is rolled along the shelf (a start velocity in the tool's
parameters), hits the first crate, and the three crates tumble off the
shelf's end and come to rest on the floor with the ball. Both segments name
the simulate tool (MuJoCo, collision from the meshes' hulls, the shelf in
convex parts); the later one continues the same run (`from`), so they join
exactly. MuJoCo is deterministic on one machine, so the key states are
samples of that run (the tool offers each end state), and the generic bake —
run after a person approves them — passes through every state exactly.
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

from . import crates as scene_def
from . import story_cli
from .common import bake_plan

FRAME_START, FRAME_END = 1001, 1072
STATES = [  # id, frame, description
    ("rolling", 1001, "the ball starts rolling along the shelf towards the crates"),
    ("falling", 1020, "the crates tumble off the end of the shelf"),
    ("at_rest", FRAME_END, "the crates and the ball lie still on the floor"),
]
CRATES = [f"crate_{i + 1}" for i in range(len(scene_def.CRATES_Y))]
SIMULATE = {"bodies": ["ball", *CRATES], "velocities": {"ball": {"linear": [0.0, 3.0, 0.0]}},
            "materials": {"ball": {"friction": 0.6, "rolling": 0.002, "restitution": 0.2},
                          "shelf": {"friction": 0.4}, **{c: {"friction": 0.4} for c in CRATES}}}


def floor_region() -> tuple[list[float], list[float]]:
    """Where the crates land: on the floor past the shelf's end."""
    return [-0.6, scene_def.SHELF[0] / 2, 0.0], [0.6, 1.8, 0.2]


def plan() -> dict:
    lo, hi = floor_region()
    return {
        "prompt": "A heavy ball rolls along a shelf and knocks three wooden crates off its end; they tumble "
                  "and come to rest on the floor.",
        "scene_brief": "A steel shelf on a concrete floor, three small pine crates on it, a rubber ball.",
        "motion_brief": "The ball is pushed once; collisions and gravity do the rest, simulated in 3D.",
        "shots": [{"id": "side", "camera": "cam_side", "start": FRAME_START, "end": FRAME_END}],
        "states": [{"id": sid, "frame": f, "shot": "side", "description": d, "objects": ["ball", *CRATES]}
                   for sid, f, d in STATES],
        "objects": [{"name": "ball", "description": "a rubber ball"},
                    {"name": "shelf", "description": "a steel shelf"},
                    *[{"name": c, "description": "a small pine crate"} for c in CRATES]],
        "events": [
            {"id": "ball_hits_crate", "kind": "contact", "subjects": ["ball", "crate_1"],
             "window": [FRAME_START, 1020], "params": {}, "after": []},
            *[{"id": f"{c}_lands", "kind": "enter_region", "subjects": [c], "window": [1020, FRAME_END],
               "params": {"min": lo, "max": hi}, "after": ["ball_hits_crate"]} for c in CRATES],
            *[{"id": f"{c}_rests", "kind": "contact", "subjects": [c, "floor"], "window": [FRAME_END, FRAME_END],
               "params": {}, "after": [f"{c}_lands"]} for c in CRATES]],
        "motion": [{"segment": segment_id(a[0], b[0]), "tool": "simulate",
                    "params": dict(SIMULATE, **({"from": STATES[0][0]} if i else {})),
                    "notes": "one run from the push, sampled"}
                   for i, (a, b) in enumerate(zip(STATES, STATES[1:]))],
    }


def author_plan(project: Project) -> dict:
    """Store the crates film's plan (checked against the scene)."""
    p = plan()
    save_plan(project, p, load_scene(project), actor="example")
    return p


def simulate(scene, start: Pose, project_dir: Path) -> Tracks:
    """Every body's track from the push to the last frame, by the simulate tool (deterministic)."""
    a = State(STATES[0][0], FRAME_START, start.completed(scene))
    b = State(STATES[-1][0], FRAME_END, start.completed(scene))
    seg = Segment(segment_id(a.id, b.id), scene, a, b, plan(), 24, project_dir)
    return motion_tool("simulate").author(seg, dict(SIMULATE, max_difference=1e9)).tracks


def author_states(project: Project, stack: CommandStack | None = None) -> list[State]:
    """Pose and store the key states: the scene at rest, then samples of its run (through the
    command stack, so each is undoable)."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    start = Pose.rest(scene)
    run = simulate(scene, start, project.path)
    out = []
    for sid, frame, description in STATES:
        pose = start.copy()
        for body, track in run.roots.items():
            pose.roots[body] = track[frame - FRAME_START].tolist()
        state = State(sid, frame, pose, "side", description)
        stack.run(SetState(project, state, actor="example"))
        out.append(state)
    return out


def author_motion(project: Project, stack: CommandStack | None = None,
                  segments: list[str] | None = None) -> list[str]:
    """Bake every segment with the tool the plan names (each through the gate)."""
    return bake_plan(project, stack, segments)


def main(argv: list[str] | None = None) -> int:
    """`python -m studio.examples.crates_story storyboard|motion PATH`."""
    return story_cli.main("crates", scene_def, sys.modules[__name__], argv)


if __name__ == "__main__":
    raise SystemExit(main())
