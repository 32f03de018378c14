"""JSON schemas of what the planner and the repairer ask for, for structured output.

Strict structured output (OpenAI's, and the constrained decoding of vLLM,
llama.cpp and Ollama) needs every property listed as required and no free
objects, so an event's params are the fixed set the verifiers read, each
nullable; `drop_nulls` turns a null back into "not given". The schema only
shapes the reply: `plan_shape` and `read_changes` still check it as before.
"""
from __future__ import annotations

from studio.agent.plan_shape import EVENT_KINDS


def _obj(**props) -> dict:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


STR = {"type": "string"}
INT = {"type": "integer"}
NAMES = {"type": "array", "items": STR}
VEC3_OR_NULL = {"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]}

PLAN_SCHEMA = _obj(
    prompt=STR, scene_brief=STR, motion_brief=STR,
    shots={"type": "array", "items": _obj(id=STR, camera=STR, start=INT, end=INT)},
    states={"type": "array", "items": _obj(id=STR, frame=INT, shot=STR, description=STR, objects=NAMES)},
    objects={"type": "array", "items": _obj(name=STR, description=STR)},
    events={"type": "array", "items": _obj(
        id=STR, kind={"type": "string", "enum": list(EVENT_KINDS)}, subjects=NAMES,
        window={"type": "array", "items": INT},
        params=_obj(tolerance={"type": ["number", "null"]}, point=VEC3_OR_NULL, normal=VEC3_OR_NULL,
                    min=VEC3_OR_NULL, max=VEC3_OR_NULL),
        after=NAMES)},
    motion={"type": "array", "items": _obj(segment=STR, tool=STR, notes=STR)},
)

REPAIR_SCHEMA = _obj(
    summary=STR,
    changes={"type": "array", "items": _obj(
        kind={"type": "string", "enum": ["root", "joint"]}, name=STR,
        to={"anyOf": [{"type": "number"}, {"type": "array", "items": {"type": "number"}}]})},
)


def drop_nulls(plan: object) -> object:
    """The plan with null event params removed (strict output writes null for "not given")."""
    if isinstance(plan, dict) and isinstance(plan.get("events"), list):
        for e in plan["events"]:
            if isinstance(e, dict) and isinstance(e.get("params"), dict):
                e["params"] = {k: v for k, v in e["params"].items() if v is not None}
    return plan
