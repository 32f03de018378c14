"""A small film written as tool calls: a floor, two crates and a camera; three
key states; an interpolated slide and a hold. What a person, the agent or a
calls file would say, with no baked frames in it."""
from __future__ import annotations

import json
from pathlib import Path

STATES = ("start", "slid", "rest")


def plan() -> dict:
    return {"prompt": "a crate slides across the floor and stops",
            "scene_brief": "a floor and two crates", "motion_brief": "one crate slides, then everything rests",
            "shots": [{"id": "wide", "camera": "cam", "start": 1001, "end": 1025}],
            "states": [{"id": "start", "frame": 1001, "shot": "wide", "description": "both crates on the floor",
                        "objects": ["crate_a", "crate_b"]},
                       {"id": "slid", "frame": 1013, "shot": "wide", "description": "crate_a slid and turned",
                        "objects": ["crate_a"]},
                       {"id": "rest", "frame": 1025, "shot": "wide", "description": "nothing moves",
                        "objects": ["crate_a"]}],
            "objects": [{"name": "crate_a", "description": "the sliding crate"},
                        {"name": "crate_b", "description": "a crate that stays"}],
            "events": [],
            "motion": [{"segment": "start..slid"}, {"segment": "slid..rest"}]}


def calls() -> list[dict]:
    """Every call from an empty project to a baked film."""
    c = [
        {"tool": "create_body", "arguments": {"name": "floor", "kind": "ground", "size": [4, 4, 0.1],
                                              "offset": [0, 0, -0.05], "rest": [0, 0, 0, 1, 0, 0, 0]}},
        {"tool": "create_body", "arguments": {"name": "crate_a", "size": [0.3, 0.3, 0.3],
                                              "rest": [-0.6, 0, 0.15, 1, 0, 0, 0]}},
        {"tool": "create_body", "arguments": {"name": "crate_b", "size": [0.2, 0.2, 0.4],
                                              "rest": [0.8, 0.6, 0.2, 1, 0, 0, 0]}},
        {"tool": "add_frame", "arguments": {"name": "crate_a_top", "body": "crate_a", "position": [0, 0, 0.15]}},
        {"tool": "add_camera", "arguments": {"name": "cam", "position": [3, -3, 2], "target": [0, 0, 0.2],
                                             "resolution": [160, 96]}},
        {"tool": "set_plan", "arguments": {"plan": plan()}},
        {"tool": "set_state", "arguments": {"state": "start", "frame": 1001, "shot": "wide",
                                            "description": "both crates on the floor"}},
        {"tool": "set_state", "arguments": {"state": "slid", "frame": 1013, "shot": "wide",
                                            "description": "crate_a slid and turned",
                                            "roots": {"crate_a": [0.2, -0.3, 0.15, 0.9238795, 0, 0, 0.3826834]}}},
        {"tool": "set_state", "arguments": {"state": "rest", "frame": 1025, "shot": "wide",
                                            "description": "nothing moves",
                                            "roots": {"crate_a": [0.2, -0.3, 0.15, 0.9238795, 0, 0, 0.3826834]}}},
    ]
    for s in STATES:
        c.append({"tool": "run_verifiers", "arguments": {"state": s}})
    for s in STATES:
        c.append({"tool": "review_state", "arguments": {"state": s, "verdict": "approve", "note": "reads well"}})
    c += [
        {"tool": "set_segment_tool", "arguments": {"segment": "start..slid", "tool": "interpolate",
                                                   "params": {"rotation": "slerp"}}},
        {"tool": "set_segment_tool", "arguments": {"segment": "slid..rest", "tool": "hold", "params": {}}},
        {"tool": "author_segment", "arguments": {"segment": "start..slid"}},
        {"tool": "author_segment", "arguments": {"segment": "slid..rest"}},
    ]
    return c


def write(path: Path, items: list[dict] | None = None) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in (calls() if items is None else items)))
    return path


def fingerprint(project) -> dict:
    """What makes two projects the same film: design id, state content hashes, plan hash, film hash."""
    from studio.scene.io import load_scene
    from studio.scene.ir import canonical_hash
    from studio.scene.meshes import scene_design_id
    from studio.timeline.film import film_hash, list_segments
    from studio.timeline.storyboard import content_hash, list_states
    scene = load_scene(project)
    return {"design": scene_design_id(scene),
            "states": {s.id: [s.frame, content_hash(scene, s.pose, s.frame)] for s in list_states(project)},
            "plan": canonical_hash(project.get_doc("plan")) if project.get_doc("plan") else None,
            "tracks": {r["segment"]: [r["tool"], r["hash"]] for r in list_segments(project)},
            "film": film_hash(project)}
