"""Keying in the window: a new key state at the playhead from what the viewport
shows there (the baked film, else the state that holds, else the rest pose).

Qt-free. Keying, moving, describing and deleting a key are calls of the studio's tool
layer (`set_state`, `delete_state`), so they are checked against the tool's schema, undoable
on the window's stack and recorded like the agent's and a replay's edits.
"""
from __future__ import annotations

from studio.tools.errors import ToolRefused
from studio.tools.box import ToolBox
from studio.store.names import check_id
from studio.timeline.commands import CommandStack

from studio.ui.session import Session

def default_key_name(session: Session, frame: int) -> str:
    """`key_<frame>`, or with a suffix if a state already has that name."""
    taken = {s.id for s in session.states}
    name, n = f"key_{frame}", 2
    while name in taken:
        name, n = f"key_{frame}_{n}", n + 1
    return name


def key_arguments(session: Session, frame: int, name: str, description: str = "") -> dict:
    """The `set_state` call that keys the pose shown at `frame` under `name`."""
    pose = session.pose_at(frame).completed(session.scene)
    shot = session.shot_at(frame)
    args = {"state": name, "frame": int(frame), "description": description,
            "roots": {k: [float(x) for x in v] for k, v in pose.roots.items()},
            "joints": {k: ([float(x) for x in v] if isinstance(v, (list, tuple)) else float(v))
                       for k, v in pose.joints.items()}}
    if shot:
        args["shot"] = shot
    return args


def key_frame(session: Session, stack: CommandStack, frame: int, name: str, description: str = "") -> str:
    """Key the frame; returns the new state's id. Raises ValueError with the reason if refused."""
    if not session.scene.bodies:            # a key of nothing would have no card, no pose, no way to delete it
        raise ValueError("nothing to key: the scene has no bodies yet; add one in the Scene dock first")
    name = check_id(name.strip(), "key name")       # the studio's one id rule (NameProblem is a ValueError)
    if any(s.id == name for s in session.states):
        raise ValueError(f"a key named {name!r} exists already (frame "
                         f"{next(s.frame for s in session.states if s.id == name)}); choose another name")
    if any(s.frame == frame for s in session.states):
        taken = next(s.id for s in session.states if s.frame == frame)
        raise ValueError(f"frame {frame} is keyed already by {taken!r}")
    _call(session, stack, "set_state", key_arguments(session, frame, name, description))
    return name


def move_key(session: Session, stack: CommandStack, state_id: str, frame: int) -> None:
    other = [s.id for s in session.states if s.frame == frame and s.id != state_id]
    if other:
        raise ValueError(f"frame {frame} is keyed already by {other[0]!r}")
    _call(session, stack, "set_state", {"state": state_id, "frame": int(frame)})


def describe_key(session: Session, stack: CommandStack, state_id: str, description: str) -> None:
    _call(session, stack, "set_state", {"state": state_id, "description": description})


def delete_key(session: Session, stack: CommandStack, state_id: str) -> None:
    _call(session, stack, "delete_state", {"state": state_id})


def _call(session: Session, stack: CommandStack, tool: str, args: dict) -> None:
    try:
        ToolBox(session.project, stack, actor="person").call(tool, args)
    except ToolRefused as e:
        raise ValueError(str(e)) from None
