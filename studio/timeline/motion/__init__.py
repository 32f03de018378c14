"""Motion tools as data: a plan segment names a tool and its parameters, and one
generic bake runs it for any scene.

A tool is a name, a one-line description, a JSON schema for its parameters and
`author(segment, params) -> Authored`. It reads only what the segment gives it
(the scene, the two approved states, the plan, the project folder for meshes)
and returns tracks over the segment's frames; channels it leaves out are
in-betweened by the bake, which also pins the ends to the states exactly and
refuses tracks that do not aim at them. A tool never clamps or hides what it
could not do: it raises `MotionError` naming the body, joint or frame, or
reports it in `Authored.notes`.

Tools register themselves in `MOTION_TOOLS` when their module is imported;
`motion_tool(name)` imports every tool module once, so callers need only this
package. A tool may also give `check(scene, params)`, which refuses names the
scene does not have (a held body that does not exist, a part whose joint is
fixed) when the plan is stored, before any state is read.
"""
from __future__ import annotations

import functools
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import jsonschema

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks

from studio.timeline.storyboard import State


class MotionError(ValueError):
    """A motion tool that cannot author its segment; the message names what and where."""


class EndStateOffered(MotionError):
    """A simulation whose own end lies further from the approved second state than the tool's
    `max_difference`: the bake would bend the physics into shape, so it refuses, and offers the
    simulation's end as that state instead (adopt it with the `adopt_end_state` tool, then review it).

    `differences` is, per moving body, (metres, radians) between its simulated end and the approved
    state; `worst` the body furthest off."""

    def __init__(self, message: str, segment: str, state: str, end_pose: Pose,
                 differences: dict[str, tuple[float, float]], worst: str, limit: float):
        super().__init__(message)
        self.segment, self.state, self.end_pose = segment, state, end_pose
        self.differences, self.worst, self.limit = differences, worst, limit

    def offer(self) -> dict:
        """What the job keeps of the offer: the state, the pose, how far each body is off."""
        return end_offer(self.segment, self.state, self.end_pose, self.differences, self.worst, self.limit)


def end_offer(segment: str, state: str, end_pose: Pose, differences: dict[str, tuple[float, float]],
              worst: str, limit: float) -> dict:
    """A run's own end offered as `state`: the pose, and per body (metres, radians) from the state."""
    return {"segment": segment, "state": state, "pose": end_pose.to_dict(), "worst": worst, "limit": limit,
            "differences": {b: {"metres": m, "radians": r} for b, (m, r) in differences.items()}}


@dataclass
class Segment:
    """What a motion tool may read: the scene, both bounding states (poses completed), the plan."""
    id: str                    # "a..b"
    scene: Scene
    a: State
    b: State
    plan: dict
    fps: int
    project_dir: Path
    states: dict[str, State] = field(default_factory=dict)  # every state by id: a run may start earlier

    @property
    def frames(self) -> int:
        return self.b.frame - self.a.frame + 1


@dataclass
class Authored:
    """A tool's result: tracks over a.frame..b.frame (any subset of roots and joints)."""
    tracks: Tracks
    attachments: list[dict] = field(default_factory=list)   # {"frame", "body", "start", "end"}
    notes: list[str] = field(default_factory=list)          # what a person should read (never hidden)
    end_pose: Pose | None = None                            # e.g. a simulation's own end state
    offer: dict | None = None                               # with end_pose: how far it lies from the state


@dataclass
class MotionTool:
    name: str
    description: str
    schema: dict
    author: Callable[[Segment, dict], Authored]
    check: Callable[[Scene, dict], None] | None = None   # names in the params against a scene (MotionError)
    offers_end: bool = False              # a simulation: its own end may be adopted as the second state


MOTION_TOOLS: dict[str, MotionTool] = {}
TOOL_MODULES = ("basic", "walk", "simulate", "reach", "operate", "planar")         # modules under studio.timeline.motion that register tools


def register(tool: MotionTool) -> MotionTool:
    MOTION_TOOLS[tool.name] = tool
    return tool


def _load() -> None:
    for mod in TOOL_MODULES:
        importlib.import_module(f"{__name__}.{mod}")


def motion_tools() -> dict[str, MotionTool]:
    """Every registered motion tool, by name."""
    _load()
    return dict(sorted(MOTION_TOOLS.items()))


def motion_tool(name: str) -> MotionTool:
    tools = motion_tools()
    if name not in tools:
        raise MotionError(f"motion tool {name!r}: expected one of {', '.join(tools)}")
    return tools[name]


def check_params(tool: str, params, where: str = "params", scene: Scene | None = None) -> dict:
    """`params` if they match the tool's schema (and, given a scene, name what the scene has: a body that
    exists, a joint that can move); a MotionError naming the field otherwise."""
    t = motion_tool(tool)
    e = jsonschema.exceptions.best_match(_validator(tool, json.dumps(t.schema, sort_keys=True)).iter_errors(params))
    if e is not None:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        raise MotionError(f"{where}{path}: {e.message}")
    if scene is not None and t.check is not None:
        try:
            t.check(scene, params)
        except MotionError as err:           # "field: why", under the caller's name for the params
            raise MotionError(f"{where}.{err}") from None
    return params


@functools.lru_cache(maxsize=256)
def _validator(tool: str, schema_text: str):
    """A checked, compiled validator per tool schema (checking the schema each time is slow)."""
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)
