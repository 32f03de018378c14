"""Films whose trouble lies between frames, built through the tool layer (the real gate, signed
reviews) from key states one frame apart, so every frame is known and the motion between two frames
is the straight line (and slerp) the renderer draws:
- hop: a box hops over a 2 cm wall, 30 cm high; with `keys` 3 it has only the take-off, the top of
  the hop and the landing, one frame apart, and the straight line from take-off to the top cuts
  through the wall's top; with 9 keys along the same arc no frame pair's line comes near it;
- pass: a box flies past a post at 10 m/s, 3 cm from it at its closest, between two frames;
- graze: a ball flies over a block, 2 mm above its top between two frames, with a contact event.
"""
from __future__ import annotations

import numpy as np

from motion_films import REVIEWER, _body, _camera, plan
from studio.tools.box import ToolBox
from studio.store.project import Project

A = 1001
WALL_TOP = 0.3


def _key_all(box: ToolBox, keys: list[tuple[str, dict]], objects: list[str], events: list[dict]) -> None:
    """States at consecutive frames from A, each verified and approved, and an interpolate segment
    between each two."""
    states = [(sid, A + i) for i, (sid, _) in enumerate(keys)]
    motion = [{"segment": f"{a}..{b}", "tool": "interpolate", "params": {}}
              for (a, _), (b, _) in zip(states, states[1:])]
    p = plan(states, objects, events, motion)
    p["shots"][0]["end"] = A + len(keys) - 1
    box.call("set_plan", {"plan": p})
    for (sid, frame), (_, roots) in zip(states, keys):
        box.call("set_state", {"state": sid, "frame": frame, "shot": "wide", "description": sid,
                               "roots": roots, "joints": {}})
        box.call("run_verifiers", {"state": sid})
        box.call("review_state", {"state": sid, "verdict": "approve", "note": "as planned"})
    for m in motion:
        box.call("author_segment", {"segment": m["segment"]})


def arc(x: float) -> float:
    """The hop's centre height over x: on the floor at x = +-0.4, 0.45 m at the top."""
    return 0.1 + 0.35 * (1.0 - (x / 0.4) ** 2)


def hop_film(path, keys: int = 3) -> Project:
    project = Project.create(path, name=f"hop{keys}", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [3, 3, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "wall", [0.02, 1.0, WALL_TOP], [0, 0, WALL_TOP / 2, 1, 0, 0, 0], kind="static")
    _body(box, "crate", [0.2, 0.2, 0.2], [-0.4, 0, 0.1, 1, 0, 0, 0])
    _camera(box)
    xs = np.linspace(-0.4, 0.4, keys)
    _key_all(box, [(f"k{i}", {"crate": [float(x), 0.0, arc(float(x)), 1, 0, 0, 0]}) for i, x in enumerate(xs)],
             ["crate"], [])
    return project


def pass_film(path, gap: float = 0.03) -> Project:
    """10 m/s is 0.4167 m a frame at 24 fps; the box's centre passes x = 0 half-way between the
    second and third frames, its side `gap` from the post's."""
    project = Project.create(path, name="pass", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [4, 4, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "post", [0.1, 0.1, 1.0], [0, 0, 0.5, 1, 0, 0, 0], kind="static")
    _body(box, "crate", [0.2, 0.2, 0.2], [-0.625, 0.15 + gap, 0.5, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    step = 10.0 / 24.0
    xs = [-1.5 * step, -0.5 * step, 0.5 * step, 1.5 * step]
    _key_all(box, [(f"p{i}", {"crate": [x, 0.15 + gap, 0.5, 1, 0, 0, 0]}) for i, x in enumerate(xs)], ["crate"], [])
    return project


def graze_film(path, clearance: float = 0.002) -> Project:
    """A 3 cm ball flies along x over a 4 cm block 10 cm high at 12 cm a frame; half-way between
    two frames it is `clearance` above the block's top (at its frames it is 2 cm from the block)."""
    project = Project.create(path, name="graze", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [3, 3, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "block", [0.04, 0.2, 0.1], [0, 0, 0.05, 1, 0, 0, 0], kind="static")
    box.call("create_body", {"name": "ball", "part": "sphere", "params": {"radius": 0.03},
                             "rest": [-0.3, 0, 0.13 + clearance, 1, 0, 0, 0], "flags": ["self_propelled"]})
    _camera(box)
    z = 0.1 + 0.03 + clearance
    xs = [-0.3, -0.18, -0.06, 0.06, 0.18, 0.3]
    events = [{"id": "touch", "kind": "contact", "subjects": ["ball", "block"], "window": [A, A + 5]}]
    _key_all(box, [(f"g{i}", {"ball": [x, 0.0, z, 1, 0, 0, 0]}) for i, x in enumerate(xs)], ["ball", "block"],
             events)
    return project


def opening_film(path, gap: float = 0.03) -> Project:
    """The box at 10 m/s through a 30 cm opening in a 15 cm wall (one body, not convex), `gap` from the
    opening's +y side; at its frames it is clear of the wall on either side."""
    project = Project.create(path, name="opening", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [4, 4, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    box.call("create_body", {"name": "wall", "kind": "static", "part": "wall_with_opening",
                             "params": {"width": 2.0, "height": 1.5, "thickness": 0.15, "door_width": 0.3,
                                        "door_height": 1.2}, "rest": [0, 0, 0, 1, 0, 0, 0]})
    y = 0.15 - gap - 0.1
    _body(box, "crate", [0.2, 0.2, 0.2], [-0.625, y, 0.5, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    step = 10.0 / 24.0
    xs = [-1.5 * step, -0.5 * step, 0.5 * step, 1.5 * step]
    _key_all(box, [(f"o{i}", {"crate": [x, y, 0.5, 1, 0, 0, 0]}) for i, x in enumerate(xs)], ["crate"], [])
    return project
