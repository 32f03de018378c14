"""A two-shot film as a person would make it, as tool calls: shots named for what they
show (`approach`, `reverse`), cameras named apart from them (`cam_north`, `cam_south`).

The set tells the cameras apart by colour: `cam_north` looks north at a red
backdrop with a yellow crate sliding in front of it, `cam_south` looks south at
a blue backdrop and sees no crate. The plan's shot `approach` (1001..1006) is
seen through `cam_north`, the `reverse` shot (1007..1012) through `cam_south`, so
the film cuts between them at frame 1007, in the middle of its one segment."""
from __future__ import annotations

APPROACH, REVERSE = range(1001, 1007), range(1007, 1013)
CAMERAS = {"cam_north": ([0, -0.5, 0.9], [0, 5, 0.6]), "cam_south": ([0, 0.5, 0.9], [0, -5, 0.6])}


def film_calls() -> list[dict]:
    wall = {"kind": "static", "size": [14, 0.2, 8]}
    plan = {"prompt": "a crate slides past; the film cuts to the reverse angle",
            "shots": [{"id": "approach", "camera": "cam_north", "start": 1001, "end": 1006},
                      {"id": "reverse", "camera": "cam_south", "start": 1007, "end": 1012}],
            "states": [{"id": "start", "frame": 1001, "shot": "approach", "description": "the crate on the left"},
                       {"id": "end", "frame": 1012, "shot": "reverse", "description": "the crate on the right"}],
            "objects": [{"name": "crate", "description": "the sliding crate"}], "events": [],
            "motion": [{"segment": "start..end", "tool": "interpolate"}]}
    calls = [("add_material", {"name": "grey", "color": [0.5, 0.5, 0.5, 1]}),
             ("add_material", {"name": "red", "color": [0.9, 0.05, 0.05, 1]}),
             ("add_material", {"name": "blue", "color": [0.05, 0.1, 0.9, 1]}),
             ("add_material", {"name": "yellow", "color": [0.95, 0.85, 0.05, 1]}),
             ("create_body", {"name": "floor", "kind": "ground", "size": [14, 14, 0.1], "offset": [0, 0, -0.05],
                              "material": "grey", "rest": [0, 0, 0, 1, 0, 0, 0]}),
             ("create_body", {"name": "backdrop_north", **wall, "material": "red", "offset": [0, 0, 4.01],
                              "rest": [0, 5, 0, 1, 0, 0, 0]}),
             ("create_body", {"name": "backdrop_south", **wall, "material": "blue", "offset": [0, 0, 4.01],
                              "rest": [0, -5, 0, 1, 0, 0, 0]}),
             ("create_body", {"name": "crate", "size": [0.6, 0.6, 0.6], "material": "yellow",
                              "rest": [-0.6, 2, 0.3, 1, 0, 0, 0]}),
             *[("add_camera", {"name": name, "position": at, "target": to, "resolution": [64, 36]})
               for name, (at, to) in CAMERAS.items()],
             ("set_plan", {"plan": plan}),
             ("set_state", {"state": "start", "frame": 1001, "shot": "approach"}),
             ("set_state", {"state": "end", "frame": 1012, "shot": "reverse",
                            "roots": {"crate": [0.6, 2, 0.3, 1, 0, 0, 0]}})]
    calls += [("run_verifiers", {"state": s}) for s in ("start", "end")]
    calls += [("review_state", {"state": s, "verdict": "approve", "note": "reads well"}) for s in ("start", "end")]
    return [{"tool": t, "arguments": a} for t, a in calls]
