"""The film's plan: shots, key states, objects, events and motion segments.

Stored as the project document "plan". The agent writes it and the verifiers
read it, so its JSON shape is fixed; `validate_plan` checks the shape and,
given a scene, that cameras, objects and frame subjects exist. Errors name the
field, e.g. "plan.states[2].frame: 1300 is outside shot 'wide' (1001..1200)".
"""
from __future__ import annotations

from typing import Any

from studio.scene.ir import Scene
from studio.store.names import NameProblem, check_id
from studio.store.project import Project

EVENT_KINDS = ("contact", "grasp", "release", "reach", "enter_region", "pass_through", "order")
KEYS = ("prompt", "scene_brief", "motion_brief", "shots", "states", "objects", "events", "motion")


class PlanError(ValueError):
    """A plan that does not hold; the message names the field."""


def _int(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
        raise PlanError(f"{where}: expected a whole frame number, got {v!r}")
    return int(v)


def _list(d: dict, key: str, where: str) -> list:
    v = d.get(key, [])
    if not isinstance(v, list):
        raise PlanError(f"{where}.{key}: expected a list, got {type(v).__name__}")
    return v


def _ids(items: list, where: str, key: str = "id", file_names: bool = False) -> list[str]:
    """The items' ids, each present and unique; ids that become file names also match the id pattern."""
    seen: list[str] = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise PlanError(f"{where}[{i}]: expected an object")
        v = it.get(key)
        if not isinstance(v, str) or not v.strip():
            raise PlanError(f"{where}[{i}].{key}: expected a non-empty string")
        if v in seen:
            raise PlanError(f"{where}[{i}].{key}: {v!r} is used twice")
        if file_names:
            try:
                check_id(v, f"{where}[{i}].{key}")
            except NameProblem as e:
                raise PlanError(str(e)) from None
        seen.append(v)
    return seen


def subject_names(scene: Scene) -> set[str]:
    """What a plan may name as an object or event subject: bodies, groups, named frames."""
    return {b.name for b in scene.bodies} | {b.group for b in scene.bodies if b.group} | \
        {f.name for f in scene.frames}


def validate_plan(plan: Any, scene: Scene | None = None) -> dict:
    """The plan if it holds; otherwise a PlanError naming the first bad field."""
    if not isinstance(plan, dict):
        raise PlanError("plan: expected an object with " + ", ".join(KEYS))
    for k in ("prompt", "scene_brief", "motion_brief"):
        if not isinstance(plan.get(k, ""), str):
            raise PlanError(f"plan.{k}: expected text")
    shots = _list(plan, "shots", "plan")
    shot_ids = _ids(shots, "plan.shots", file_names=True)
    cams = {c.name for c in scene.cameras} if scene else None
    spans = {}
    for i, s in enumerate(shots):
        at = f"plan.shots[{i}]"
        start, end = _int(s.get("start"), f"{at}.start"), _int(s.get("end"), f"{at}.end")
        if end < start:
            raise PlanError(f"{at}.end: {end} is before start {start}")
        if cams is not None and s.get("camera") not in cams:
            raise PlanError(f"{at}.camera: no camera named {s.get('camera')!r} in the scene "
                            f"(cameras: {', '.join(sorted(cams)) or 'none'})")
        spans[s["id"]] = (start, end)
    names = subject_names(scene) if scene else None
    objects = _list(plan, "objects", "plan")
    _ids(objects, "plan.objects", key="name")
    for i, o in enumerate(objects):
        if "fixed" in o and not isinstance(o["fixed"], bool):
            raise PlanError(f"plan.objects[{i}].fixed: expected true or false (fixed scenery no repair moves), "
                            f"got {o['fixed']!r}")
    if names is not None:
        for i, o in enumerate(objects):
            if o["name"] not in names:
                raise PlanError(f"plan.objects[{i}].name: {o['name']!r} is not a body, group or frame of the scene")
    states = _list(plan, "states", "plan")
    state_ids = _ids(states, "plan.states", file_names=True)
    for i, s in enumerate(states):
        at = f"plan.states[{i}]"
        frame = _int(s.get("frame"), f"{at}.frame")
        if s.get("shot") not in spans:
            raise PlanError(f"{at}.shot: no shot {s.get('shot')!r} (shots: {', '.join(shot_ids) or 'none'})")
        a, b = spans[s["shot"]]
        if not a <= frame <= b:
            raise PlanError(f"{at}.frame: {frame} is outside shot {s['shot']!r} ({a}..{b})")
        for j, o in enumerate(_list(s, "objects", at)):
            if names is not None and o not in names:
                raise PlanError(f"{at}.objects[{j}]: {o!r} is not a body, group or frame of the scene")
    events = _list(plan, "events", "plan")
    event_ids = _ids(events, "plan.events")
    for i, e in enumerate(events):
        at = f"plan.events[{i}]"
        if e.get("kind") not in EVENT_KINDS:
            raise PlanError(f"{at}.kind: expected one of {EVENT_KINDS}, got {e.get('kind')!r}")
        for j, o in enumerate(_list(e, "subjects", at)):
            if e["kind"] == "order":
                if o not in event_ids:
                    raise PlanError(f"{at}.subjects[{j}]: an order event lists event ids; no event {o!r}")
            elif names is not None and o not in names:
                raise PlanError(f"{at}.subjects[{j}]: {o!r} is not a body, group or frame of the scene")
        w = e.get("window")
        if not isinstance(w, list) or len(w) != 2:
            raise PlanError(f"{at}.window: expected [first frame, last frame], got {w!r}")
        f0, f1 = _int(w[0], f"{at}.window[0]"), _int(w[1], f"{at}.window[1]")
        if f1 < f0:
            raise PlanError(f"{at}.window: last frame {f1} is before first frame {f0}")
        if not isinstance(e.get("params", {}), dict):
            raise PlanError(f"{at}.params: expected an object")
        for j, dep in enumerate(_list(e, "after", at)):
            if dep not in event_ids or dep == e["id"]:
                raise PlanError(f"{at}.after[{j}]: no other event {dep!r}")
    _no_cycles(events)
    for i, m in enumerate(_list(plan, "motion", "plan")):
        at = f"plan.motion[{i}]"
        seg = m.get("segment") if isinstance(m, dict) else None
        parts = seg.split("..") if isinstance(seg, str) else []
        if len(parts) != 2:
            raise PlanError(f"{at}.segment: expected 'A..B' between two state ids, got {seg!r}")
        for p in parts:
            if p not in state_ids:
                raise PlanError(f"{at}.segment: no state {p!r} in plan.states")
        _check_tool(m, at, scene)
    return plan


def _check_tool(entry: dict, at: str, scene: Scene | None = None) -> None:
    """The segment's motion tool is registered, its params match the tool's schema and (given the
    scene) name what the scene has."""
    from studio.timeline.motion import check_params, motion_tools
    tool = entry.get("tool")
    if tool is None:
        if entry.get("params") not in (None, {}):
            raise PlanError(f"{at}.params: parameters given but no tool named")
        return
    tools = motion_tools()
    if not isinstance(tool, str) or tool not in tools:
        raise PlanError(f"{at}.tool: expected one of the motion tools {', '.join(tools)}, got {tool!r}")
    try:
        check_params(tool, entry.get("params", {}), f"{at}.params", scene)
    except ValueError as e:
        raise PlanError(str(e)) from None


def _no_cycles(events: list[dict]) -> None:
    after = {e["id"]: list(e.get("after", [])) for e in events}
    state: dict[str, int] = {}

    def visit(n: str, path: list[str]) -> None:
        if state.get(n) == 1:
            raise PlanError(f"plan.events: the order constraints form a cycle: {' -> '.join(path + [n])}")
        if state.get(n) == 2:
            return
        state[n] = 1
        for d in after.get(n, []):
            visit(d, path + [n])
        state[n] = 2

    for n in after:
        visit(n, [])


def save_plan(project: Project, plan: dict, scene: Scene | None = None, actor: str = "person") -> None:
    """Validate, then store; a bad plan leaves the stored one as it was."""
    validate_plan(plan, scene)
    project.put_doc("plan", plan, actor=actor, action="set plan")


def load_plan(project: Project) -> dict | None:
    return project.get_doc("plan")


def segment_entry(plan: dict | None, segment: str) -> dict:
    """The plan's motion entry for a segment ({} if the plan does not list it)."""
    for m in (plan or {}).get("motion", []):
        if m.get("segment") == segment:
            return m
    return {}


def plan_segments(plan: dict) -> list[str]:
    """Segments the plan asks for: its motion entries, else consecutive states by frame."""
    segs = [m["segment"] for m in plan.get("motion", [])]
    if segs:
        return segs
    states = sorted(plan.get("states", []), key=lambda s: s["frame"])
    return [f"{a['id']}..{b['id']}" for a, b in zip(states, states[1:])]


def shot_camera(plan: dict | None, shot: str) -> str | None:
    for s in (plan or {}).get("shots", []):
        if s.get("id") == shot:
            return s.get("camera")
    return None


def plan_from_keys(states: list, camera: str, shot: str, plan: dict | None = None) -> dict:
    """A plan a person gets without a model: the stored key states as the plan's states (states
    planned but not keyed yet stay), one
    shot `shot` through `camera` spanning them (an existing plan's shots are kept, the shot
    holding each key's frame is its shot, and `shot` is added or widened to cover the rest),
    and a segment between each two keys in frame order, keeping the tool and parameters a
    segment of the same name already had."""
    out = dict(plan or {"prompt": "", "scene_brief": "", "motion_brief": "", "objects": [], "events": []})
    keys = sorted(states, key=lambda s: (s.frame, s.id))
    shots = [dict(s) for s in out.get("shots", [])]
    planned = {s["id"]: dict(s) for s in out.get("states", [])}
    frames = [s.frame for s in keys] or [0]

    def holding(frame: int) -> str | None:
        return next((s["id"] for s in shots if s["start"] <= frame <= s["end"]), None)

    loose = [s.frame for s in keys if holding(s.frame) is None and planned.get(s.id, {}).get("shot") is None]
    if loose or not shots:
        mine = next((s for s in shots if s["id"] == shot), None)
        if mine is None:
            mine = {"id": shot, "camera": camera, "start": min(loose or frames), "end": max(loose or frames)}
            shots.append(mine)
        mine["start"], mine["end"] = min([mine["start"], *loose]), max([mine["end"], *loose])
    rows = []
    for s in keys:
        old = planned.get(s.id, {})
        where = old.get("shot") if old.get("shot") in {x["id"] for x in shots} else None
        where = where or holding(s.frame) or shot
        span = next(x for x in shots if x["id"] == where)
        span["start"], span["end"] = min(span["start"], s.frame), max(span["end"], s.frame)
        rows.append({**old, "id": s.id, "frame": s.frame, "shot": where,
                     "description": s.description or old.get("description", "")})
    stored = {s.id for s in keys}        # planned states not keyed yet stay planned
    rows = sorted(rows + [p for sid, p in planned.items() if sid not in stored], key=lambda r: (r["frame"], r["id"]))
    tools = {m["segment"]: m for m in out.get("motion", [])}
    motion = []
    for a, b in zip(rows, rows[1:]):
        seg = f"{a['id']}..{b['id']}"
        motion.append({k: v for k, v in tools.get(seg, {"segment": seg}).items()})
    out.update(shots=sorted(shots, key=lambda s: s["start"]), states=rows, motion=motion)
    for k in KEYS:
        out.setdefault(k, "" if k in ("prompt", "scene_brief", "motion_brief") else [])
    return out
