"""The studio's tools, as JSON schemas (OpenAI tool definitions): the one
catalogue a person, the agent and a replayed calls file all call through.

The schemas are the first gate on a tool call: a call with an unknown tool,
arguments that are not JSON, a missing or extra field, a wrong type or a
number out of range is refused with a message naming the field, before any
tool code runs. Checks that need the project (does the body exist, is the
joint value inside its limits, does the path stay in the project) follow in
`tools`.
"""
from __future__ import annotations

import copy
import functools
import json

import jsonschema

from studio.scene.ir import BODY_KINDS, FLAGS, JOINT_TYPES
from studio.store import json_reading
from studio.store.names import ID_PATTERN
from studio.store.shown import shown
from studio.timeline.plan_schema import plan_schema

from studio.tools.errors import ToolRefused

NAME = {"type": "string", "pattern": f"^{ID_PATTERN.pattern}$"}      # the studio's one id pattern
COORD = {"type": "number", "minimum": -1000, "maximum": 1000}
VEC3 = {"type": "array", "items": COORD, "minItems": 3, "maxItems": 3}
QUAT = {"type": "array", "items": {"type": "number", "minimum": -1, "maximum": 1}, "minItems": 4, "maxItems": 4,
        "description": "unit quaternion (w, x, y, z)"}
ROOT7 = {"type": "array", "items": COORD, "minItems": 7, "maxItems": 7,
         "description": "[x, y, z, w, qx, qy, qz], metres and a unit quaternion"}
JOINT_VALUE = {"oneOf": [{"type": "number", "minimum": -100, "maximum": 100},
                         {"type": "array", "items": {"type": "number", "minimum": -10, "maximum": 10},
                          "minItems": 3, "maxItems": 3}]}
FRAME = {"type": "integer", "minimum": 0, "maximum": 10_000_000}
LENGTH = {"type": "number", "exclusiveMinimum": 0, "maximum": 100}
SHAPES = ("box", "cylinder", "sphere", "capsule")     # the primitives create_body makes without a part name


def _obj(required: list[str], **props) -> dict:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


SEGMENT = {"type": "string", "pattern": f"^{ID_PATTERN.pattern}\\.\\.{ID_PATTERN.pattern}$",
           "description": "A..B between two state ids"}
NOTE = {"type": "string", "maxLength": 2000}

TOOLS: dict[str, tuple[str, dict]] = {
    "create_body": ("Create or replace a body: a primitive shape (box with size; cylinder, capsule with "
                    "radius and length along Z; sphere with radius; each centred on the body's origin), a CAD "
                    "part with parameters, or a mesh file inside the project; optionally joined to a parent "
                    "body by a joint.", _obj(
        ["name"], name=NAME, kind={"type": "string", "enum": list(BODY_KINDS)},
        shape={"type": "string", "enum": list(SHAPES)},
        radius={**LENGTH, "description": "metres: a cylinder's, sphere's or capsule's radius"},
        length={**LENGTH, "description": "metres along Z: a cylinder's or capsule's length (caps included)"},
        part={"type": "string", "maxLength": 64}, params={"type": "object"},
        size={"type": "array", "items": LENGTH, "minItems": 3, "maxItems": 3},
        mesh={"type": "string", "maxLength": 256, "description": "a file path relative to the project folder"},
        offset={**VEC3, "description": "where the geometry sits in the body's frame (metres)"},
        offset_rotation={**QUAT, "description": "how the geometry is turned in the body's frame (w, x, y, z)"},
        tolerance={"type": "number", "minimum": 1e-5, "maximum": 0.1,
                   "description": "tessellation tolerance of a CAD part, metres (default 0.0005)"},
        material={"type": "string", "maxLength": 64}, group={"type": "string", "maxLength": 64},
        flags={"type": "array", "items": {"type": "string", "enum": list(FLAGS)}},
        mass={"type": "number", "minimum": 0, "maximum": 100000,
              "description": "kilograms; 0 for a static body"},
        parent=NAME, joint=_obj(["name", "type"], name=NAME, type={"type": "string", "enum": list(JOINT_TYPES)},
                                axis=VEC3, origin=VEC3,
                                rotation={**QUAT, "description": "the child's frame at zero, turned in the parent's"},
                                lower={"type": "number", "minimum": -100, "maximum": 100},
                                upper={"type": "number", "minimum": -100, "maximum": 100}),
        rest=ROOT7)),
    "build_part_code": ("Run build123d code (in a sandboxed worker, in its own job folder) that writes "
                        "'part.stl' in metres; the mesh becomes the geometry of the named body.", _obj(
        ["body", "code"], body=NAME, code={"type": "string", "maxLength": 20000},
        time_limit={"type": "number", "minimum": 1, "maximum": 300})),
    "name_scene": ("Give the scene its name (the film's working title).", _obj(
        ["name"], name={"type": "string", "minLength": 1, "maxLength": 64})),
    "add_material": ("Add or change a material the bodies can name: colour (RGBA, 0..1), roughness, metallic.",
                     _obj(["name", "color"], name=NAME,
                          color={"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1},
                                 "minItems": 4, "maxItems": 4},
                          roughness={"type": "number", "minimum": 0, "maximum": 1},
                          metallic={"type": "number", "minimum": 0, "maximum": 1})),
    "add_frame": ("Add or move a named frame on a body (an effector, a handle, a target), in the body's frame.",
                  _obj(["name", "body"], name=NAME, body=NAME, position=VEC3, rotation=QUAT)),
    "add_camera": ("Add or change a camera looking from a position at a target; with follow, a body it "
                   "follows, position and target then being offsets from that body's origin at every frame.", _obj(
        ["name", "position", "target"], name=NAME, position=VEC3, target=VEC3, follow=NAME,
        lens_mm={"type": "number", "minimum": 1, "maximum": 1000},
        sensor_mm={"type": "number", "minimum": 1, "maximum": 100},
        resolution={"type": "array", "items": {"type": "integer", "minimum": 16, "maximum": 8192},
                    "minItems": 2, "maxItems": 2})),
    "frame_action": ("Add or replace a camera that keeps the given bodies whole in view over a frame range "
                     "(the film where baked, else the key states), looking along a direction; checked frame by "
                     "frame with the reviews' visibility test.", _obj(
        ["name", "bodies"], name=NAME, bodies={"type": "array", "items": NAME, "minItems": 1, "maxItems": 64},
        frames={"type": "array", "items": FRAME, "minItems": 2, "maxItems": 2,
                "description": "[first, last]; default the baked film's range, else the key states'"},
        direction={**VEC3, "description": "the way the camera looks (from the camera toward the action)"},
        margin={"type": "number", "minimum": 0, "maximum": 0.4,
                "description": "fraction of the image left free on each side (default 0.1)"},
        lens_mm={"type": "number", "minimum": 1, "maximum": 1000},
        sensor_mm={"type": "number", "minimum": 1, "maximum": 100},
        resolution={"type": "array", "items": {"type": "integer", "minimum": 16, "maximum": 8192},
                    "minItems": 2, "maxItems": 2})),
    "allow_overlap": ("Declare that two bodies (or groups) may overlap by construction, so the penetration "
                      "check does not count them.", _obj(
        ["a", "b"], a=NAME, b=NAME, reason={"type": "string", "maxLength": 200})),
    "set_plan": ("Store the film's plan: shots, key states, objects, events and motion segments (each segment "
                 "may name its motion tool and parameters); checked against the scene.", _obj(
        ["plan"], plan={"type": "object", "description": "the plan (its full schema is filled in by catalogue())"})),
    "set_segment_tool": ("Name the motion tool and its parameters for one plan segment.", _obj(
        ["segment", "tool"], segment=SEGMENT, tool={"type": "string", "maxLength": 64},
        params={"type": "object"})),
    "set_state": ("Create a storyboard state or change its frame, shot, description or pose; roots and "
                  "joints not given keep their current (or rest) values.", _obj(
        ["state"], state=NAME, frame=FRAME, shot={"type": "string", "maxLength": 64},
        description={"type": "string", "maxLength": 2000},
        roots={"type": "object", "additionalProperties": ROOT7},
        joints={"type": "object", "additionalProperties": JOINT_VALUE})),
    "set_joint": ("Set one joint of a state (radians, metres, or a rotation vector for a ball joint).", _obj(
        ["state", "joint", "value"], state=NAME, joint=NAME, value=JOINT_VALUE)),
    "place_relative": ("Place a root body of a state relative to a named frame: the body's frame is the "
                       "named frame's frame moved by offset (and turned by rotation).", _obj(
        ["state", "body", "frame"], state=NAME, body=NAME, frame=NAME, offset=VEC3, rotation=QUAT)),
    "solve_ik": ("Move the given joints of a state so that an effector (named frame or body) reaches a "
                 "target named frame or a world position.", _obj(
        ["state", "effector", "joints"], state=NAME, effector=NAME,
        joints={"type": "array", "items": NAME, "minItems": 1, "maxItems": 32},
        target_frame=NAME, target_position=VEC3)),
    "run_verifiers": ("Run the verifiers on a state and store their reports.", _obj(["state"], state=NAME)),
    "review_state": ("Approve or reject a state as the caller (approve needs its checks passing on this "
                     "version of the state).", _obj(
        ["state", "verdict"], state=NAME, verdict={"type": "string", "enum": ["approve", "reject"]}, note=NOTE)),
    "author_segment": ("Author the motion between two approved, passing states with the segment's motion tool "
                       "(the plan's, or the one named here) and bake it; refused by the storyboard gate "
                       "otherwise.", _obj(
        ["segment"], segment=SEGMENT, tool={"type": "string", "maxLength": 64}, params={"type": "object"})),
    "adopt_end_state": ("Make a simulated segment's second state (simulate, planar) the run's own end, as the "
                        "tool offers it when the run ends away from the state; the first state must be approved "
                        "and passing; the adopted state then needs its checks and a review like any other.",
                        _obj(["segment"], segment=SEGMENT)),
    "drop_segment": ("Remove a segment's baked tracks (before a key state splits it); undo stores them back.",
                     _obj(["segment"], segment=SEGMENT)),
    "add_note": ("Write a review note on a frame of the film (any frame), optionally with strokes drawn over "
                 "the frame as seen through a camera; a note id that exists is replaced.", _obj(
        ["frame", "text"], note=NAME, frame=FRAME, text=NOTE, camera=NAME,
        strokes={"type": "array", "maxItems": 200, "items": _obj(
            ["points"], points={"type": "array", "minItems": 1, "maxItems": 4000, "items": {
                "type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}, "minItems": 2,
                "maxItems": 2}, "description": "[u, v] in the camera's image, 0..1 from the top-left"},
            color={"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"},
            width={"type": "number", "minimum": 0.5, "maximum": 40})})),
    "delete_note": ("Delete a review note; undo brings it back.", _obj(["note"], note=NAME)),
    "set_shot_status": ("Mark a plan shot as waiting (for approval), retake (with a note saying what to change) "
                        "or done.", _obj(
        ["shot", "status"], shot=NAME, status={"type": "string", "enum": ["waiting", "retake", "done"]},
        note=NOTE)),
    "request_render": ("Queue a storyboard still of a state for the render worker.", _obj(["state"], state=NAME)),
    "delete_state": ("Delete a key state (its reviews stay in the history); undo brings it back as it was.",
                     _obj(["state"], state=NAME)),
}


@functools.cache
def catalogue() -> dict[str, tuple[str, dict]]:
    """Every tool with its description and schema; motion tool names come from the registry."""
    from studio.timeline.motion import motion_tools
    names = list(motion_tools())
    out = copy.deepcopy(TOOLS)
    out["set_plan"][1]["properties"]["plan"] = plan_schema()   # tool names: checked against the live registry
    for tool in ("set_segment_tool", "author_segment"):
        prop = out[tool][1]["properties"]["tool"]
        prop.update(enum=names, description="a motion tool: " + "; ".join(
            f"{n}: {t.description}" for n, t in motion_tools().items()))
        prop.pop("maxLength", None)
    return out


def motion_catalogue() -> dict[str, tuple[str, dict]]:
    """The motion tools a segment may name, with their parameter schemas."""
    from studio.timeline.motion import motion_tools
    return {n: (t.description, t.schema) for n, t in motion_tools().items()}


def openai_tools() -> list[dict]:
    return [{"type": "function", "function": {"name": n, "description": d, "parameters": p}}
            for n, (d, p) in catalogue().items()]


def parse_arguments(name: str, raw: str | dict) -> dict:
    """The call's arguments if the tool exists and they match its schema; ToolRefused otherwise."""
    tools = catalogue()
    if name not in tools:
        raise ToolRefused(f"there is no tool named {name!r}; the tools are {', '.join(tools)}")
    if isinstance(raw, dict):
        args = raw
    else:
        try:
            args = json_reading.loads(raw or "{}", f"{name}: the arguments")
        except json_reading.JsonRefused as e:
            raise ToolRefused(str(e).replace(": the arguments: not", ": the arguments are not", 1)) from None
    e = jsonschema.exceptions.best_match(_validator(name).iter_errors(args))
    if e is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        raise ToolRefused(f"{name}{where}: {shown(e.message)}")
    return args


@functools.cache
def _validator(name: str):
    """One checked, compiled validator per tool (checking the schema on every call costs more than the call)."""
    schema = catalogue()[name][1]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)
