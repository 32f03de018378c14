"""The marble run film's story: plan, key states and motion, all from one simulation.

The marble's motion is a planar pymunk simulation (studio.timeline.planar) in
the plane y = 0, started at rest from the `released` state. pymunk is
deterministic, so the key states are samples of that simulation at their
frames, and `author_motion` — run after a person approves them — simulates
again from the approved `released` pose and bakes each segment through the
gate; the baked tracks pass through every state exactly.
"""
from __future__ import annotations

import sys

import numpy as np

from studio.scene.io import load_scene
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project
from studio.timeline.commands import BakeSegment, CommandStack, SetState
from studio.timeline.film import segment_id
from studio.timeline.plan import save_plan
from studio.timeline.planar import Mechanism, Plane, simulate_planar
from studio.timeline.storyboard import State, get_state

from . import marble_run as scene_def
from . import story_cli

FRAME_START, FRAME_END = 1001, 1120
STATES = [  # id, frame, description
    ("released", 1001, "the marble rests at the top of the first ramp, about to roll"),
    ("lower_ramp", 1086, "the marble rolls down the lowest ramp towards the cup"),
    ("in_cup", FRAME_END, "the marble lies at rest in the cup"),
]
TOOL = "planar simulation (pymunk)"


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
        "motion": [{"segment": segment_id(a[0], b[0]), "notes": f"{TOOL}, sampled from one simulation"}
                   for a, b in zip(STATES, STATES[1:])],
    }


def author_plan(project: Project) -> dict:
    """Store the marble run's plan (checked against the scene)."""
    p = plan()
    save_plan(project, p, load_scene(project), actor="example")
    return p


def simulate(release: Pose) -> Tracks:
    """The marble's track from the released pose to the last frame (deterministic)."""
    scene = scene_def.build_scene()
    sim = scene_def.simulation_scene(scene)
    start = Pose.rest(sim)
    start.roots["marble"] = list(release.roots["marble"])
    mech = Mechanism({"marble": "circle"}, obstacles=[b.name for b in sim.bodies if b.name != "marble"],
                     friction=0.7, elasticity=0.1)
    return simulate_planar(sim, start, mech, Plane(), FRAME_START, FRAME_END - FRAME_START + 1)


def author_states(project: Project, stack: CommandStack | None = None) -> list[State]:
    """Pose and store the key states: the released pose, then samples of its simulation
    (through the command stack, so each is undoable)."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    release = Pose.rest(scene)
    track = simulate(release).roots["marble"]
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
    """Bake every segment between the approved states from one simulation (each through the
    gate); returns the segments baked."""
    scene = load_scene(project)
    stack = stack or CommandStack()
    release = get_state(project, STATES[0][0])
    if release is None:
        raise ValueError(f"{project.path}: no state {STATES[0][0]!r}; run author_states first")
    track = simulate(release.pose.completed(scene)).roots["marble"]
    baked = []
    for (a, fa, _), (b, fb, _) in zip(STATES, STATES[1:]):
        seg = segment_id(a, b)
        if segments is not None and seg not in segments:
            continue
        piece = Tracks(fa, {"marble": np.array(track[fa - FRAME_START:fb - FRAME_START + 1])}, {})
        stack.run(BakeSegment(project, seg, piece, TOOL, actor="example"))
        baked.append(seg)
    return baked


def main(argv: list[str] | None = None) -> int:
    """`python -m studio.examples.marble_run_story storyboard|motion PATH`."""
    return story_cli.main("marble_run", scene_def, sys.modules[__name__], argv)


if __name__ == "__main__":
    raise SystemExit(main())
