"""Replay speed: a calls file replayed to a baked film (no rendering), against
the same edits made by direct calls of the studio's functions, side by side.

The film: a floor and B crates, K key states (each moves every crate), every
state verified and approved, every segment baked (interpolate, the last one a
hold). The replay goes through `studio.tools.calls.replay` (schema check,
project checks, a command and an audit row per call, one transaction each);
the baseline calls save_scene, save_plan, put_state, verify_state,
record_review and the generic bake directly. Both end with the same film hash.
Run: .venv/bin/python bench/bench_replay.py [CRATES] [STATES]
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from studio.tools.calls import parse_calls, replay  # noqa: E402
from studio.checks.run import verify_state  # noqa: E402
from studio.scene.io import save_scene  # noqa: E402
from studio.scene.ir import Scene  # noqa: E402
from studio.scene.pose import Pose  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.author import author_and_bake  # noqa: E402
from studio.timeline.film import film_hash  # noqa: E402
from studio.timeline.plan import save_plan  # noqa: E402
from studio.timeline.reviews import record_review  # noqa: E402
from studio.timeline.segment_commands import with_segment_tool  # noqa: E402
from studio.timeline.storyboard import State, put_state  # noqa: E402


def film_calls(crates: int, states: int) -> list[dict]:
    bodies = [{"name": "floor", "kind": "ground", "size": [20, 20, 0.1], "offset": [0, 0, -0.05],
               "rest": [0, 0, 0, 1, 0, 0, 0]}]
    bodies += [{"name": f"crate{i}", "size": [0.3, 0.3, 0.3], "rest": [i * 0.8 - 4, 0, 0.15, 1, 0, 0, 0]}
               for i in range(crates)]
    ids = [f"k{j}" for j in range(states)]
    frames = [1001 + 12 * j for j in range(states)]
    plan = {"prompt": "crates shuffle", "scene_brief": "", "motion_brief": "",
            "shots": [{"id": "wide", "camera": "cam", "start": frames[0], "end": frames[-1]}],
            "states": [{"id": s, "frame": f, "shot": "wide", "description": s} for s, f in zip(ids, frames)],
            "objects": [], "events": [], "motion": [{"segment": f"{a}..{b}"} for a, b in zip(ids, ids[1:])]}
    out = [{"tool": "create_body", "arguments": b} for b in bodies]
    out += [{"tool": "add_camera", "arguments": {"name": "cam", "position": [6, -6, 4], "target": [0, 0, 0]}},
            {"tool": "set_plan", "arguments": {"plan": plan}}]
    for j, (s, f) in enumerate(zip(ids, frames)):
        step = min(j, states - 2)           # the last state repeats the one before: a hold
        roots = {f"crate{i}": [i * 0.8 - 4, 0.4 * step * (1 if i % 2 else -1), 0.15, 1, 0, 0, 0]
                 for i in range(crates)}
        out.append({"tool": "set_state", "arguments": {"state": s, "frame": f, "shot": "wide", "roots": roots}})
    out += [{"tool": "run_verifiers", "arguments": {"state": s}} for s in ids]
    out += [{"tool": "review_state", "arguments": {"state": s, "verdict": "approve"}} for s in ids]
    segs = [f"{a}..{b}" for a, b in zip(ids, ids[1:])]
    out += [{"tool": "set_segment_tool", "arguments": {"segment": seg, "tool": "hold" if k == len(segs) - 1
                                                       else "interpolate", "params": {}}}
            for k, seg in enumerate(segs)]
    out += [{"tool": "author_segment", "arguments": {"segment": seg}} for seg in segs]
    return out


def direct(project: Project, calls: list[dict]) -> None:
    """The same edits through the studio's functions, no tool layer."""
    scene_d = {"name": project.name, "bodies": [], "cameras": [], "rest": {}}
    for c in calls:
        a, tool = c["arguments"], c["tool"]
        if tool == "create_body":
            scene_d["bodies"].append({"name": a["name"], "kind": a.get("kind", "rigid"),
                                      "geometry": {"size": a["size"], "offset": {"position": a.get("offset", [0, 0, 0])}}})
            scene_d["rest"][a["name"]] = a["rest"]
            save_scene(project, Scene.from_dict(scene_d))
        elif tool == "add_camera":
            scene_d["cameras"].append({"name": a["name"], "position": a["position"], "target": a["target"]})
            save_scene(project, Scene.from_dict(scene_d))
        elif tool == "set_plan":
            scene = Scene.from_dict(scene_d)
            save_plan(project, a["plan"], scene)
        elif tool == "set_state":
            pose = Pose.rest(scene)
            pose.roots.update(a["roots"])
            put_state(project, scene, State(a["state"], a["frame"], pose, a["shot"]))
        elif tool == "run_verifiers":
            verify_state(project, a["state"])
        elif tool == "review_state":
            record_review(project, a["state"], a["verdict"], "", "bench", scene)
        elif tool == "set_segment_tool":
            save_plan(project, with_segment_tool(project.get_doc("plan"), a["segment"], a["tool"], a["params"]), scene)
        elif tool == "author_segment":
            author_and_bake(project, a["segment"], "bench", scene=scene)


def main(crates: int, states: int, rounds: int = 3) -> None:
    calls = film_calls(crates, states)
    text = "".join(json.dumps(c) + "\n" for c in calls)
    direct_s, replay_s, same = [], [], True
    with tempfile.TemporaryDirectory() as tmp:
        direct(Project.create(Path(tmp) / "warm"), calls)            # imports and caches, for both
        for r in range(rounds):                                      # alternated, best of each
            direct_project = Project.create(Path(tmp) / f"direct{r}")
            replay_project = Project.create(Path(tmp) / f"replay{r}")
            t = time.perf_counter()
            direct(direct_project, calls)
            direct_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            replay(replay_project, parse_calls(text, "bench"), "bench")
            replay_s.append(time.perf_counter() - t)
            same = same and film_hash(direct_project) == film_hash(replay_project)
    frames = 12 * (states - 1) + 1
    d, r = min(direct_s), min(replay_s)
    print(f"film: {crates} crates, {states} states, {frames} frames, {len(calls)} calls; best of {rounds}")
    print(f"direct function calls:  {d:.2f} s")
    print(f"replay of calls file:   {r:.2f} s  ({len(calls) / r:.0f} calls/s)")
    print(f"ratio replay / direct:  {r / d:.2f}x")
    print(f"same film hash:         {same}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10, int(sys.argv[2]) if len(sys.argv) > 2 else 12)
