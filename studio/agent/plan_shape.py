"""The shape of a plan, checked before anything is stored.

A plan is {prompt, scene_brief, motion_brief, shots, states, objects, events,
motion}; the timeline and the verifiers read it, so a reply that does not
hold is refused with the field that is wrong (the planner sends that message
back to the model). The planner accepts what `set_plan` accepts, no more and
no less: the timeline's validator and the plan's JSON schema, with the
scene's names when the scene exists (an event's subjects may then be plan
objects or bodies, groups and named frames of the scene, e.g. a gripper and
a handle). A planned film needs at least one shot and one key state.
"""
from __future__ import annotations

from typing import Any

from studio.timeline.plan import EVENT_KINDS  # noqa: F401  (one list of event kinds, re-exported)


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


def check_plan_shape(plan: Any, scene=None) -> dict:
    """Return the plan if it holds; raise PlanInvalid naming the first wrong field.

    What `set_plan` accepts (the timeline's validator, then the plan's JSON schema), checked
    against `scene` when there is one, and what a planned film needs besides: at least one shot
    and one key state, and, before the scene exists, objects for the states and events to name."""
    from studio.timeline.plan import PlanError
    from studio.timeline.plan import validate_plan as timeline_validate
    from studio.tools.errors import ToolRefused
    from studio.tools.schemas import parse_arguments
    p = _obj(plan, "plan")
    for key in ("shots", "states", "objects", "events", "motion"):
        _list(p, key, "plan")
    try:
        timeline_validate(p, scene)
        parse_arguments("set_plan", {"plan": p})
    except ToolRefused as e:
        raise PlanInvalid(str(e).removeprefix("set_plan.")) from None
    except (PlanError, KeyError, TypeError) as e:
        raise PlanInvalid(str(e)) from None
    if not p.get("shots"):
        raise PlanInvalid("plan.shots: expected at least one shot")
    if not p.get("states"):
        raise PlanInvalid("plan.states: expected at least one key state")
    if scene is None:            # nothing is built yet: what the plan names, it lists as an object
        objects = {o["name"] for o in p.get("objects", [])}
        for i, s in enumerate(p["states"]):
            for k, name in enumerate(s.get("objects", [])):
                if name not in objects:
                    raise PlanInvalid(f"plan.states[{i}].objects[{k}]: no object named {name!r} in plan.objects")
        for i, e in enumerate(p.get("events", [])):
            for k, name in enumerate(e.get("subjects", []) if e.get("kind") != "order" else []):
                if name not in objects:
                    raise PlanInvalid(f"plan.events[{i}].subjects[{k}]: no object named {name!r} in plan.objects "
                                      f"(the scene is not built yet, so its frames cannot be named)")
    return p


def validate_plan(plan: Any, scene=None) -> dict:
    """What the planner accepts: `check_plan_shape` against `scene` (None: not built yet)."""
    return check_plan_shape(plan, scene)
