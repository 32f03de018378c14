"""JSON schemas of what the planner and the repairer ask for, for structured output.

The plan is asked for under the plan's own schema (`studio.timeline.plan_schema`,
the one `set_plan` checks and `studio tools --json` prints), with every
top-level key required: the same plan language, so a model held to it can
write a plan like the studio's own examples (segments with their tools'
parameters, events naming a scene's frames). It has free objects (a motion
tool's parameters), so it is sent with `strict` false: llama.cpp, vLLM and
Ollama still hold the reply to it (they turn it into a grammar), OpenAI takes
it as guidance; the reply is checked the same way in every case.

The repair proposal's schema is strict (every property required, no free
objects): an event's params are the fixed set the verifiers read, each
nullable; `drop_nulls` turns a null back into "not given". The schema only
shapes the reply: `plan_shape` and `read_changes` still check it.
"""
from __future__ import annotations

from studio.timeline.plan import KEYS
from studio.timeline.plan_schema import plan_schema


def _obj(**props) -> dict:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


STR = {"type": "string"}


def plan_reply_schema() -> dict:
    """The plan's schema with every top-level key required, and the motion tools registered now."""
    from studio.timeline.motion import motion_tools
    schema = plan_schema(list(motion_tools()))
    schema["required"] = list(KEYS)
    return schema


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
