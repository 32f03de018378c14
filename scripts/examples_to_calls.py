"""Write resources/examples/<name>/calls.jsonl from an example built in code, and check it.

For each example: build the scene, plan and key states the way the in-code
example does into a temporary project, then say the same thing as tool calls
(name the scene, materials, bodies with their CAD parts and joints, named
frames, cameras, allowed overlaps, the plan with its segment tools, every key
state's pose as numbers, verify, approve, author each segment). Then both are
carried through: the code-built project approved and baked, the calls file
replayed into a fresh project; their fingerprints (design id, state content
hashes, plan hash, tracks, film hash) must be equal, or nothing is written.

Run: .venv/bin/python scripts/examples_to_calls.py [NAME ...]
"""
from __future__ import annotations

import importlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from studio.agent.calls import Call, parse_calls, replay  # noqa: E402
from studio.checks.run import verify_state  # noqa: E402
from studio.scene.io import load_scene  # noqa: E402
from studio.scene.ir import Scene, canonical_hash  # noqa: E402
from studio.scene.meshes import scene_design_id  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.film import film_hash, list_segments  # noqa: E402
from studio.timeline.plan import plan_segments  # noqa: E402
from studio.timeline.reviews import record_review  # noqa: E402
from studio.timeline.storyboard import content_hash, list_states  # noqa: E402

EXAMPLES = {n: (f"studio.examples.{n}", f"studio.examples.{n}_story")
            for n in ("doorway", "marble_run", "dog_paper", "crates")}
IDENTITY = [1.0, 0.0, 0.0, 0.0]


def _call(tool: str, **arguments) -> dict:
    return {"tool": tool, "arguments": arguments}


def scene_calls(scene: Scene) -> list[dict]:
    """The scene said as tool calls, in the order its lists hold."""
    out = [_call("name_scene", name=scene.name)]
    out += [_call("add_material", name=m.name, color=m.color, roughness=m.roughness, metallic=m.metallic)
            for m in scene.materials]
    joints = {j.child: j for j in scene.joints}
    if [b.name for b in scene.bodies if b.name in joints] != [j.child for j in scene.joints]:
        raise SystemExit(f"{scene.name}: the joints are not listed in the order of their child bodies; "
                         "a replay (one joint with each body) would not keep their order")
    for b in scene.bodies:
        g = b.geometry
        a: dict = {"name": b.name, "kind": b.kind}
        if g.source == "cad":
            a.update(part=g.part, params=g.params, tolerance=g.tolerance)
        elif g.source == "box":
            a["size"] = g.size
        else:
            raise SystemExit(f"{scene.name}: body {b.name} is a mesh file; give it as build_part_code")
        if g.offset.position != [0.0, 0.0, 0.0]:
            a["offset"] = g.offset.position
        if g.offset.rotation != IDENTITY:
            a["offset_rotation"] = g.offset.rotation
        if b.material:
            a["material"] = b.material
        if b.group:
            a["group"] = b.group
        if b.flags:
            a["flags"] = b.flags
        a["mass"] = b.mass
        j = joints.get(b.name)
        if j is not None:
            jd = {"name": j.name, "type": j.type, "origin": j.origin.position, "axis": j.axis,
                  "lower": j.lower, "upper": j.upper}
            if j.origin.rotation != IDENTITY:
                jd["rotation"] = j.origin.rotation
            a.update(parent=j.parent, joint=jd)
        elif b.name in scene.rest:
            a["rest"] = scene.rest[b.name]
        out.append(_call("create_body", **a))
    out += [_call("add_frame", name=f.name, body=f.body, position=f.local.position, rotation=f.local.rotation)
            for f in scene.frames]
    out += [_call("add_camera", name=c.name, position=c.position, target=c.target, lens_mm=c.lens_mm,
                  sensor_mm=c.sensor_mm, resolution=c.resolution) for c in scene.cameras]
    out += [_call("allow_overlap", a=o.a, b=o.b, reason=o.reason) for o in scene.allowed_overlaps]
    return out


def story_calls(project: Project) -> list[dict]:
    """The plan, every key state posed as numbers, verified and approved, then every segment authored."""
    scene = load_scene(project)
    plan = project.get_doc("plan")
    out = [_call("set_plan", plan=plan)]
    states = list_states(project)
    for s in states:
        pose = s.pose.completed(scene)
        a = {"state": s.id, "frame": s.frame, "shot": s.shot, "description": s.description,
             "roots": pose.roots, "joints": pose.joints}
        out.append(_call("set_state", **a))
    out += [_call("run_verifiers", state=s.id) for s in states]
    out += [_call("review_state", state=s.id, verdict="approve", note="the key state reads as planned")
            for s in states]
    out += [_call("author_segment", segment=seg) for seg in plan_segments(plan)]
    return out


def fingerprint(project: Project) -> dict:
    scene = load_scene(project)
    plan = project.get_doc("plan")
    return {"design": scene_design_id(scene),
            "states": {s.id: [s.frame, content_hash(scene, s.pose, s.frame)] for s in list_states(project)},
            "plan": canonical_hash(plan) if plan else None,
            "tracks": {r["segment"]: [r["tool"], r["hash"]] for r in list_segments(project)},
            "film": film_hash(project)}


def convert(name: str, tmp: Path) -> Path:
    scene_mod = importlib.import_module(EXAMPLES[name][0])
    story = importlib.import_module(EXAMPLES[name][1])
    project = scene_mod.create(tmp / f"{name}-code")
    story.author_plan(project)
    story.author_states(project)
    lines = scene_calls(load_scene(project)) + story_calls(project)
    for s in list_states(project):
        verify_state(project, s.id)
        record_review(project, s.id, "approve", reviewer="batch")
    story.author_motion(project)
    expected = fingerprint(project)
    project.close()

    text = "".join(json.dumps(c, sort_keys=False) + "\n" for c in lines)
    calls: list[Call] = parse_calls(text, f"{name}/calls.jsonl")
    with Project.create(tmp / f"{name}-calls", name=name, fps=24, frame_start=1001) as replayed:
        replay(replayed, calls, f"{name}/calls.jsonl")
        got = fingerprint(replayed)
    if got != expected:
        diff = {k: (expected[k], got[k]) for k in expected if expected[k] != got[k]}
        raise SystemExit(f"{name}: the replayed project differs from the code-built one: {diff}")
    out = ROOT / "resources" / "examples" / name / "calls.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"{name}: {len(calls)} calls, fingerprint equal (film {got['film']}) -> {out.relative_to(ROOT)}")
    return out


def main(names: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or list(EXAMPLES):
            convert(name, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
