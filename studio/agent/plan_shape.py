"""The shape of a plan, checked before anything is stored.

A plan is {prompt, scene_brief, motion_brief, shots, states, objects, events,
motion}; the timeline and the verifiers read it, so a reply that does not
hold is refused with the field that is wrong (the planner sends that message
back to the model). The agent is stricter than the timeline (ids usable in
segment names, at least one shot and state); the timeline's validator then
checks the rest, and the scene's names when there is a scene.
"""
from __future__ import annotations

import re
from typing import Any

EVENT_KINDS = ("contact", "grasp", "release", "reach", "enter_region", "pass_through", "order")
ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


class PlanInvalid(ValueError):
    """A plan that does not have the agreed shape; the message names the field."""


def _list(d: dict, key: str, where: str) -> list:
    v = d.get(key, [])
    if not isinstance(v, list):
        raise PlanInvalid(f"{where}.{key}: expected a list, got {type(v).__name__}")
    return v


def _obj(v: Any, where: str) -> dict:
    if not isinstance(v, dict):
        raise PlanInvalid(f"{where}: expected an object, got {type(v).__name__}")
    return v


def _str(d: dict, key: str, where: str, required: bool = True) -> str:
    v = d.get(key, None if required else "")
    if not isinstance(v, str) or (required and not v.strip()):
        raise PlanInvalid(f"{where}.{key}: expected a non-empty string, got {v!r}")
    return v


def _id(d: dict, key: str, where: str, seen: set[str]) -> str:
    v = _str(d, key, where)
    if not ID.match(v):
        raise PlanInvalid(f"{where}.{key}: {v!r} must be letters, digits, '_' or '-' (at most 64)")
    if v in seen:
        raise PlanInvalid(f"{where}.{key}: {v!r} is used twice")
    seen.add(v)
    return v


def _int(d: dict, key: str, where: str) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise PlanInvalid(f"{where}.{key}: expected a frame number (a whole number ≥ 0), got {v!r}")
    return v


def check_plan_shape(plan: Any) -> dict:
    """Return the plan if it holds; raise PlanInvalid naming the first wrong field."""
    p = _obj(plan, "plan")
    for key in ("prompt", "scene_brief", "motion_brief"):
        _str(p, key, "plan")
    objects: set[str] = set()
    for i, o in enumerate(_list(p, "objects", "plan")):
        _id(_obj(o, f"plan.objects[{i}]"), "name", f"plan.objects[{i}]", objects)
        _str(o, "description", f"plan.objects[{i}]", required=False)
    shots: dict[str, tuple[int, int]] = {}
    for i, s in enumerate(_list(p, "shots", "plan")):
        at = f"plan.shots[{i}]"
        sid = _id(_obj(s, at), "id", at, set(shots))
        _str(s, "camera", at)
        a, b = _int(s, "start", at), _int(s, "end", at)
        if b < a:
            raise PlanInvalid(f"{at}: end {b} is before start {a}")
        shots[sid] = (a, b)
    if not shots:
        raise PlanInvalid("plan.shots: expected at least one shot")
    states: set[str] = set()
    frames: list[int] = []
    for i, s in enumerate(_list(p, "states", "plan")):
        at = f"plan.states[{i}]"
        _id(_obj(s, at), "id", at, states)
        f = _int(s, "frame", at)
        shot = _str(s, "shot", at)
        if shot not in shots:
            raise PlanInvalid(f"{at}.shot: no shot named {shot!r}; shots are {sorted(shots)}")
        if not shots[shot][0] <= f <= shots[shot][1]:
            raise PlanInvalid(f"{at}.frame: {f} is outside shot {shot!r} ({shots[shot][0]}..{shots[shot][1]})")
        if f in frames:
            raise PlanInvalid(f"{at}.frame: two states at frame {f}")
        frames.append(f)
        _str(s, "description", at)
        for k, name in enumerate(_list(s, "objects", at)):
            if name not in objects:
                raise PlanInvalid(f"{at}.objects[{k}]: no object named {name!r} in plan.objects")
    if not states:
        raise PlanInvalid("plan.states: expected at least one key state")
    events: set[str] = set()
    for i, e in enumerate(_list(p, "events", "plan")):
        at = f"plan.events[{i}]"
        _id(_obj(e, at), "id", at, events)
        kind = e.get("kind")
        if kind not in EVENT_KINDS:
            raise PlanInvalid(f"{at}.kind: expected one of {EVENT_KINDS}, got {kind!r}")
        for k, name in enumerate(_list(e, "subjects", at)):
            if kind != "order" and name not in objects:   # an order event lists event ids (checked below)
                raise PlanInvalid(f"{at}.subjects[{k}]: no object named {name!r} in plan.objects")
        w = e.get("window")
        if (not isinstance(w, list) or len(w) != 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                              for x in w) or w[0] > w[1]):
            raise PlanInvalid(f"{at}.window: expected [first_frame, last_frame], got {w!r}")
        if not isinstance(e.get("params", {}), dict):
            raise PlanInvalid(f"{at}.params: expected an object")
    for i, e in enumerate(_list(p, "events", "plan")):
        if e["kind"] == "order":
            for k, name in enumerate(_list(e, "subjects", f"plan.events[{i}]")):
                if name not in events:
                    raise PlanInvalid(f"plan.events[{i}].subjects[{k}]: an order event lists event ids; "
                                      f"no event {name!r}")
        for k, dep in enumerate(_list(e, "after", f"plan.events[{i}]")):
            if dep not in events:
                raise PlanInvalid(f"plan.events[{i}].after[{k}]: no event named {dep!r}")
    for i, m in enumerate(_list(p, "motion", "plan")):
        at = f"plan.motion[{i}]"
        seg = _str(_obj(m, at), "segment", at)
        ends = seg.split("..")
        if len(ends) != 2 or any(s not in states for s in ends):
            raise PlanInvalid(f"{at}.segment: expected 'A..B' between two planned states, got {seg!r}")
        _str(m, "tool", at)
        _str(m, "notes", at, required=False)
    return p


def validate_plan(plan: Any, scene=None) -> dict:
    """The agreed shape, then the timeline's validator (which checks names against `scene`)."""
    from studio.timeline.plan import PlanError
    from studio.timeline.plan import validate_plan as timeline_validate
    p = check_plan_shape(plan)
    try:
        timeline_validate(p, scene)
    except (PlanError, KeyError, TypeError) as e:
        raise PlanInvalid(str(e)) from None
    return p
