"""Posing a key state by hand: what the viewport's manipulator does, without Qt.

A `PoseDrag` belongs to one drag on one key state. While the mouse moves it
answers previews (the state's pose with a root moved or turned, or a chain
solved by IK so a named frame reaches a point); on release `commit` issues one
`set_state` call of the tool layer, so the whole drag is one undoable command.
Snapping rounds a move to 1 cm and a turn to 5 degrees. IK stays inside the
joints' limits, and every joint that a drag pressed against a limit is named
in `stopped`, so the window can say why the hand stops short: nothing is
clamped out of sight. `turn_joint` (the mouse wheel over a jointed body) stops
at the limit and says so.
"""
from __future__ import annotations

import math

import numpy as np

from studio.tools.errors import ToolRefused
from studio.tools.box import ToolBox
from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import from_7, quat_from_axis_angle, quat_normalize, to_7
from studio.timeline.commands import CommandStack
from studio.timeline.motion.ik import Goal, frame_pose, solve_ik
from studio.timeline.storyboard import State

SNAP_M = 0.01
SNAP_RAD = math.radians(5)
CHAIN = 7                 # joints an IK drag may move, nearest the dragged frame first
LIMIT_EPS = 1e-6


def key_at(states: list[State], frame: int) -> State | None:
    """The key state exactly at `frame` (posing edits a key, never an in-between)."""
    return next((s for s in states if s.frame == frame), None)


def handle_frame(scene: Scene, body: str) -> str:
    """What dragging a jointed body moves: its first named frame (a hand, a foot), else its origin."""
    return next((f.name for f in scene.frames if f.body == body), body)


def chain_joints(scene: Scene, body: str, length: int = CHAIN) -> list[str]:
    """The movable joints between `body` and its tree's root, nearest first."""
    out, cur = [], body
    while (j := scene.joint_of_child(cur)) is not None and len(out) < length:
        if j.type != "fixed":
            out.append(j.name)
        cur = j.parent
    return out


def _at_limit(scene: Scene, pose: Pose, joints: list[str]) -> list[str]:
    stopped = []
    for name in joints:
        j, v = scene.joint(name), pose.joints[name]
        if j.type == "ball":
            if np.linalg.norm(v) >= j.upper - LIMIT_EPS:
                stopped.append(name)
        elif v <= j.lower + LIMIT_EPS or v >= j.upper - LIMIT_EPS:
            stopped.append(name)
    return stopped


class PoseDrag:
    def __init__(self, scene: Scene, state: State):
        self.scene, self.state = scene, state
        self.start = state.pose.completed(scene)
        self.start_world = pose_world(scene, self.start)
        self.pose = self.start
        self.stopped: list[str] = []
        self.error = 0.0

    # ---- previews ---------------------------------------------------------
    def move(self, body: str, delta, snap: bool = False) -> Pose:
        """The body's tree moved by `delta` (world metres) from where the drag began."""
        root = self._root(body)
        delta = np.asarray(delta, float)
        if snap:
            delta = np.round(delta / SNAP_M) * SNAP_M
        t = np.asarray(self.start.roots[root], float).copy()
        t[:3] += delta
        return self._set_root(root, t)

    def turn(self, body: str, axis, angle: float, snap: bool = False) -> Pose:
        """The body's tree turned by `angle` about a world `axis` through the body's origin."""
        root = self._root(body)
        if snap:
            angle = round(angle / SNAP_RAD) * SNAP_RAD
        axis = np.asarray(axis, float) / np.linalg.norm(axis)
        pivot = self.start_world[body][:3, 3]
        rot = np.eye(4)
        rot[:3, :3] = from_7(np.array([0, 0, 0, *quat_from_axis_angle(axis, angle)]))[:3, :3]
        about = np.eye(4)
        about[:3, 3] = pivot
        back = np.eye(4)
        back[:3, 3] = -pivot
        m = about @ rot @ back @ from_7(np.asarray(self.start.roots[root], float))
        t = to_7(m)
        t[3:] = quat_normalize(t[3:])
        return self._set_root(root, t)

    def reach(self, target: str, point, snap: bool = False) -> Pose:
        """The chain above `target` (a named frame or a jointed body) solved so it reaches `point`."""
        body = self.scene.frame(target).body if target not in self.scene.body_names else target
        joints = chain_joints(self.scene, body)
        if not joints:
            raise ValueError(f"{target}: no joint above it to bend; move its root body instead")
        point = np.asarray(point, float)
        if snap:
            point = np.round(point / SNAP_M) * SNAP_M
        # warm-started from the last preview, as the mouse moves in small steps
        pose, self.error = solve_ik(self.scene, self.pose, joints, [Goal(target, point)], iterations=40)
        self.stopped = [n for n in _at_limit(self.scene, pose, joints)
                        if n not in _at_limit(self.scene, self.start, [n])]
        self.pose = pose
        return pose

    def world(self) -> dict[str, np.ndarray]:
        return pose_world(self.scene, self.pose)

    @property
    def changed(self) -> bool:
        return self.pose.to_dict() != self.start.to_dict()

    def commit(self, project, stack: CommandStack) -> str:
        """One `set_state` call with every root and joint the drag changed; returns what was done."""
        roots = {k: [float(x) for x in v] for k, v in self.pose.roots.items() if v != self.start.roots[k]}
        joints = {k: v for k, v in self.pose.joints.items() if v != self.start.joints[k]}
        if not roots and not joints:
            return ""
        args = {"state": self.state.id, **({"roots": roots} if roots else {}), **({"joints": joints} if joints else {})}
        try:
            out = ToolBox(project, stack, actor="person").call("set_state", args)
        except ToolRefused as e:
            raise ValueError(str(e)) from None
        return out.result["done"]

    # ---- helpers --------------------------------------------------------
    def _root(self, body: str) -> str:
        if self.scene.body(body).is_static:
            raise ValueError(f"{body} is static: edit the scene to move it")
        return self.scene.group_root(body)

    def _set_root(self, root: str, t: np.ndarray) -> Pose:
        pose = self.start.copy()
        pose.roots[root] = [float(x) for x in t]
        self.pose = pose
        return pose


def turn_joint(scene: Scene, state: State, joint: str, delta: float) -> tuple[Pose, str]:
    """The state with `joint` turned by `delta`, stopped at its limit; the message says if it was."""
    j = scene.joint(joint)
    pose = state.pose.completed(scene).copy()
    if j.type in ("fixed", "ball"):
        raise ValueError(f"{joint}: a {j.type} joint does not turn with the wheel; use the Pose dock")
    want = float(pose.joints[joint]) + delta
    value = min(max(want, j.lower), j.upper)
    pose.joints[joint] = value
    unit = "m" if j.type == "prismatic" else "rad"
    if value != want:
        return pose, f"{joint} stopped at its {'upper' if want > j.upper else 'lower'} limit {value:+.3f} {unit}"
    return pose, f"{joint} {value:+.3f} {unit}"


def frame_point(scene: Scene, pose: Pose, name: str) -> np.ndarray:
    """World position of a named frame or a body's origin."""
    if name in scene.body_names:
        return pose_world(scene, pose)[name][:3, 3]
    return frame_pose(scene, pose, name)[:3, 3]

