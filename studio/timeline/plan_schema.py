"""The plan's JSON schema: the one description of the plan language.

`set_plan` checks its argument against it before `validate_plan` checks the
rest (names against the scene, frames inside shots, segments between states,
each segment's parameters against its motion tool's own schema); the planner
asks a model for a plan under it and checks the reply the same way; `studio
tools --json` prints it. It describes, it does not narrow: every plan that
`validate_plan` accepts matches it (unknown keys are allowed, as the
validator ignores them).
"""
from __future__ import annotations

from studio.store.names import ID_PATTERN
from studio.timeline.plan import EVENT_KINDS

KIND_WORDS = {
    "contact": "subjects [body, body] touch (params.tolerance: metres of gap allowed, default 0)",
    "grasp": "subjects [frame, body]: the frame (a gripper) comes to the body's surface "
             "(params.tolerance, metres, default 0.03)",
    "release": "subjects [frame, body]: a grasp of the body by the frame ends (params.tolerance, default 0.03)",
    "reach": "subjects [frame or body, frame or body]: their origins come within params.tolerance metres "
             "(default 0.05)",
    "enter_region": "subjects [body or frame]: its origin enters the box params.min..params.max (metres)",
    "pass_through": "subjects [body]: its centre crosses the plane through params.point with params.normal, "
                    "from the negative side to the positive",
    "order": "subjects are event ids, which must hold in the order listed",
}

_FRAME = {"type": "integer", "description": "a frame number"}
_VEC3 = {"anyOf": [{"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}, {"type": "null"}]}
_ID = {"type": "string", "pattern": f"^{ID_PATTERN.pattern}$"}


def _obj(required: list[str], about: str = "", **props) -> dict:
    out = {"type": "object", "properties": props, "required": required}
    if about:
        out["description"] = about
    return out


def plan_schema(motion_tools: list[str] | None = None) -> dict:
    """The schema of a plan; `motion_tools` (the registered tools' names) fills the tool enum."""
    tool = {"type": "string", "description": "the segment's motion tool (default interpolate): one of the "
                                              "motion tools (`studio tools`), with params as its schema says"}
    if motion_tools:
        tool["enum"] = list(motion_tools)
    names = {"type": "array", "items": {"type": "string"}}
    return _obj(
        [],
        "The film's plan: shots, key states, the objects they show, events the verifiers check, and "
        "the motion tool of each segment between two key states.",
        prompt={"type": "string", "description": "what the film shows, in the person's words"},
        scene_brief={"type": "string"}, motion_brief={"type": "string"},
        shots={"type": "array", "description": "the film's shots, each a camera over a span of frames",
               "items": _obj(["id", "camera", "start", "end"], id=_ID,
                             camera={"type": "string", "description": "a camera of the scene"},
                             start=_FRAME, end=_FRAME)},
        states={"type": "array", "description": "the key states a person approves, at most one per frame",
                "items": _obj(["id", "frame", "shot"], id=_ID,
                              frame={**_FRAME, "description": "inside its shot's frames"},
                              shot={"type": "string", "description": "a shot id"},
                              description={"type": "string"},
                              objects={**names, "description": "plan object names the state shows"})},
        objects={"type": "array", "description": "what the film is about: bodies, groups or named frames",
                 "items": _obj(["name"], name={"type": "string"}, description={"type": "string"})},
        events={"type": "array", "description": "what must happen, checked on every frame of the window",
                "items": _obj(
                    ["id", "kind", "window"], id={"type": "string"},
                    kind={"type": "string", "enum": list(EVENT_KINDS),
                          "description": "; ".join(f"{k}: {KIND_WORDS[k]}" for k in EVENT_KINDS)},
                    subjects={**names, "description": "plan objects or bodies, groups and named frames of the "
                                                      "scene (for order: event ids)"},
                    window={"type": "array", "items": _FRAME, "minItems": 2, "maxItems": 2,
                            "description": "[first frame, last frame]"},
                    params={"type": "object", "description": "what the kind reads; others are ignored",
                            "properties": {"tolerance": {"type": ["number", "null"], "description": "metres"},
                                           "point": _VEC3, "normal": _VEC3, "min": _VEC3, "max": _VEC3}},
                    after={"type": "array", "items": {"type": "string"},
                           "description": "event ids that must hold first"})},
        motion={"type": "array", "description": "the segments between key states and how each is authored",
                "items": _obj(["segment"],
                              segment={"type": "string", "pattern": f"^{ID_PATTERN.pattern}\\.\\.{ID_PATTERN.pattern}$",
                                       "description": "A..B between two state ids"},
                              tool=tool,
                              params={"type": "object", "description": "the tool's parameters, as that motion "
                                                                       "tool's own schema says"},
                              notes={"type": "string"})},
    )
