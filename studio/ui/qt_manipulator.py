"""The viewport's 3D manipulator: arrows to move, rings to turn, on the selected body.

A free body (or any body of a free tree) gets three arrows and three rings
about the world axes through its origin; a jointed body gets arrows at its
handle (its first named frame: a hand, a foot), and dragging one solves the
chain above it by IK within the joints' limits. Ctrl snaps to 1 cm and 5
degrees. The wheel over the selected jointed body turns the joint it hangs
from, up to its limit. Only a key state exactly at the playhead is posed; a
drag previews live (the Pose dock follows) and lands as one undoable command
on release.

Mouse events reach the manipulator through a Qt event filter on the VTK
widget, so a press on a handle never starts a camera orbit, and anything else
passes through to the camera and the body picker as before. Drag geometry is
exact: a move follows the point of the axis nearest the mouse ray, a turn the
angle of the ray's hit on the ring's plane.
"""
from __future__ import annotations

import functools

import math
from typing import Callable

import numpy as np
import pyvista as pv
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from vtkmodules.vtkCommonMath import vtkMatrix4x4
from vtkmodules.vtkRenderingCore import vtkPropCollection, vtkPropPicker

from studio.scene.kinematics import pose_world

from studio.ui.posing import PoseDrag, chain_joints, frame_point, handle_frame, key_at, turn_joint

AXES = np.eye(3)
COLORS = ((0.9, 0.25, 0.25), (0.3, 0.85, 0.3), (0.3, 0.5, 1.0))
ACTIVE = (1.0, 0.85, 0.1)
SCREEN_SIZE = 0.12          # the gizmo's length as a share of the camera's distance: constant on screen
WHEEL_STEP = math.radians(2)


def _arrow(axis: int) -> pv.PolyData:
    return pv.Arrow(start=(0, 0, 0), direction=AXES[axis], scale=1.0, tip_length=0.22, tip_radius=0.07,
                    shaft_radius=0.02)


def _ring(axis: int) -> pv.PolyData:
    ring = pv.ParametricTorus(ringradius=0.75, crosssectionradius=0.022, u_res=64, v_res=8)
    if axis == 0:
        ring = ring.rotate_y(90, inplace=False)
    elif axis == 1:
        ring = ring.rotate_x(90, inplace=False)
    return ring


@functools.lru_cache(maxsize=1)
def handle_meshes() -> tuple[tuple[str, int, pv.PolyData], ...]:
    """The drag handles' meshes, made once per process (the window's preload makes them early)."""
    return tuple((kind, k, mesh) for k in range(3) for kind, mesh in (("move", _arrow(k)), ("turn", _ring(k))))


def _ray(renderer, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
    """The mouse ray at display pixel (x, y): origin on the near plane, unit direction."""
    pts = []
    for z in (0.0, 1.0):
        renderer.SetDisplayPoint(x, y, z)
        renderer.DisplayToWorld()
        w = np.array(renderer.GetWorldPoint(), float)
        pts.append(w[:3] / w[3])
    d = pts[1] - pts[0]
    return pts[0], d / np.linalg.norm(d)


def axis_param(origin, axis, ray_o, ray_d) -> float | None:
    """Parameter along the axis line of the point nearest the ray (None when they are parallel)."""
    w = np.asarray(ray_o) - np.asarray(origin)
    b = float(np.dot(axis, ray_d))
    den = 1.0 - b * b
    if den < 1e-6:
        return None
    return float((np.dot(w, axis) - np.dot(w, ray_d) * b) / den)


def plane_hit(origin, normal, ray_o, ray_d) -> np.ndarray | None:
    den = float(np.dot(normal, ray_d))
    if abs(den) < 1e-6:
        return None
    return ray_o + ray_d * float(np.dot(np.asarray(origin) - ray_o, normal)) / den


class Manipulator(QObject):
    message = Signal(str)
    previewed = Signal(object)          # the previewed Pose, or None when a drag ends

    def __init__(self, viewport, stack_of: Callable):
        super().__init__(viewport)
        self.vp, self.stack_of = viewport, stack_of
        self.plotter = viewport.plotter
        self.picker = vtkPropPicker()
        self.handles: list[tuple[object, str, int]] = []          # (actor, "move" | "turn", axis)
        for kind, k, mesh in handle_meshes():
            actor = self.plotter.add_mesh(mesh, color=COLORS[k], lighting=False,
                                          name=f"gizmo:{kind}{k}", render=False, reset_camera=False)
            actor.mapper.SetResolveCoincidentTopologyToPolygonOffset()
            actor.mapper.SetRelativeCoincidentTopologyPolygonOffsetParameters(0, -66000)
            actor.SetUserMatrix(vtkMatrix4x4())
            actor.SetVisibility(False)
            self.handles.append((actor, kind, k))
        self._pickable = vtkPropCollection()
        self.target: tuple[str, str, str] | None = None        # (state id, body, "root" | "ik")
        self._said = ""
        self.origin = np.zeros(3)
        self.scale = 1.0
        self._drag: PoseDrag | None = None
        self._grab: tuple[str, int, float | np.ndarray] | None = None
        self.updates = 0
        viewport.plotter.interactor.installEventFilter(self)
        playhead = viewport.playhead
        playhead.selection_changed.connect(lambda _b: self.refresh())
        playhead.frame_changed.connect(lambda _f: self.refresh())

    # ---- what is manipulated ---------------------------------------------
    def _choose(self) -> tuple[tuple[str, str, str] | None, str]:
        session, selected = self.vp.session, self.vp.playhead.selected
        if len(selected) != 1 or not self.vp.actors:
            return None, ""
        body = selected[0]
        scene = session.scene
        if body not in scene.body_names:
            return None, ""
        if scene.body(body).is_static:
            return None, f"{body} is static: edit the scene to move it"
        state = key_at(session.states, self.vp.playhead.frame)
        if state is None:
            return None, f"no key at frame {self.vp.playhead.frame}: Key this frame (I) to pose {body} here"
        mode = "root" if scene.joint_of_child(body) is None or not chain_joints(scene, body) else "ik"
        return (state.id, body, mode), ""

    def refresh(self) -> None:
        """Place (or hide) the gizmo for the current selection and frame."""
        if self._drag is not None:
            return
        target, why = self._choose()
        if why and why != self._said:            # said once, not on every frame of a playback
            self.message.emit(why)
        self._said = why
        if target is None and self.target is None:
            return                               # nothing shown, nothing to hide: no extra render per frame
        self.target = target
        self._place(None)

    def _place(self, pose) -> None:
        visible = self.target is not None
        if visible:
            state_id, body, mode = self.target
            session = self.vp.session
            if pose is None:
                state = next(s for s in session.states if s.id == state_id)
                pose = state.pose.completed(session.scene)
            self.origin = (frame_point(session.scene, pose, handle_frame(session.scene, body)) if mode == "ik"
                           else pose_world(session.scene, pose)[body][:3, 3])
            cam = np.array(self.plotter.camera.position)
            self.scale = SCREEN_SIZE * max(float(np.linalg.norm(cam - self.origin)), 1e-3)
            m = np.eye(4)
            m[:3, :3] *= self.scale
            m[:3, 3] = self.origin
        self._pickable.RemoveAllItems()
        for actor, kind, _k in self.handles:
            show = visible and (kind == "move" or self.target[2] == "root")
            actor.SetVisibility(show)
            if show:
                actor.GetUserMatrix().DeepCopy(m.ravel())
                self._pickable.AddItem(actor)
        self.plotter.render()

    @property
    def visible_handles(self) -> list[str]:
        return [f"{kind}{'xyz'[k]}" for actor, kind, k in self.handles if actor.GetVisibility()]

    # ---- mouse -----------------------------------------------------------
    def _display(self, e) -> tuple[float, float]:
        w = self.plotter.interactor
        r = w.devicePixelRatioF()
        pos = e.position()
        return pos.x() * r, (w.height() - pos.y()) * r

    def handle_at(self, x: float, y: float) -> tuple[str, int] | None:
        if self.target is None or not self._pickable.GetNumberOfItems():
            return None
        if not self.picker.PickProp(x, y, self.plotter.renderer, self._pickable):
            return None
        prop = self.picker.GetViewProp()
        return next(((kind, k) for actor, kind, k in self.handles if actor is prop), None)

    def eventFilter(self, obj, e) -> bool:
        t = e.type()
        if t == QEvent.Type.MouseButtonPress and e.button() == Qt.MouseButton.LeftButton:
            return self._press(*self._display(e))
        if t == QEvent.Type.MouseMove and self._drag is not None:
            self._move(*self._display(e), bool(e.modifiers() & Qt.KeyboardModifier.ControlModifier))
            return True
        if t == QEvent.Type.MouseButtonRelease and self._drag is not None:
            self._release()
            return True
        if t == QEvent.Type.Wheel:
            return self._wheel(*self._display(e), e.angleDelta().y(),
                               bool(e.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        return False

    def _press(self, x: float, y: float) -> bool:
        hit = self.handle_at(x, y)
        if hit is None:
            return False
        state_id, body, mode = self.target
        session = self.vp.session
        if self.vp.showing == "film":            # what is posed is the key, so show the key
            self.vp.set_showing("state")
        state = next(s for s in session.states if s.id == state_id)
        self._drag = PoseDrag(session.scene, state)
        kind, k = hit
        ray_o, ray_d = _ray(self.plotter.renderer, x, y)
        if kind == "move":
            start = axis_param(self.origin, AXES[k], ray_o, ray_d)
        else:
            start = plane_hit(self.origin, AXES[k], ray_o, ray_d)
        if start is None:                        # looking straight down that axis: nothing to grab
            self._drag = None
            return True
        self._grab = (kind, k, start)
        self._start_origin = self.origin.copy()
        for actor, hk, kk in self.handles:
            actor.prop.color = ACTIVE if (hk, kk) == hit else COLORS[kk]
        return True

    def _move(self, x: float, y: float, snap: bool) -> None:
        kind, k, start = self._grab
        _state_id, body, mode = self.target
        ray_o, ray_d = _ray(self.plotter.renderer, x, y)
        drag = self._drag
        try:
            if kind == "move":
                t = axis_param(self._start_origin, AXES[k], ray_o, ray_d)
                if t is None:
                    return
                delta = AXES[k] * (t - start)
                if mode == "ik":
                    pose = drag.reach(handle_frame(drag.scene, body), self._start_origin + delta, snap)
                else:
                    pose = drag.move(body, delta, snap)
            else:
                hit = plane_hit(self._start_origin, AXES[k], ray_o, ray_d)
                if hit is None:
                    return
                v0, v1 = start - self._start_origin, hit - self._start_origin
                angle = math.atan2(float(np.dot(np.cross(v0, v1), AXES[k])), float(np.dot(v0, v1)))
                pose = drag.turn(body, AXES[k], angle, snap)
        except ValueError as err:
            self.message.emit(str(err))
            return
        self.vp.set_world(pose_world(drag.scene, pose), render=False)
        self._place(pose)
        self.updates += 1
        self.previewed.emit(pose)
        if mode == "ik" and drag.stopped:
            self.message.emit(f"stopped by joint limits: {', '.join(drag.stopped)}"
                              + (f" (hand {drag.error * 1000:.0f} mm short)" if drag.error > 1e-3 else ""))

    def _release(self) -> None:
        drag, self._drag, self._grab = self._drag, None, None
        for actor, _kind, k in self.handles:
            actor.prop.color = COLORS[k]
        self.previewed.emit(None)
        if drag is None or not drag.changed:
            self.refresh()
            return
        try:
            done = drag.commit(self.vp.session.project, self.stack_of())
        except ValueError as err:
            self.message.emit(str(err))
            self.vp.show_frame()
            self.refresh()
            return
        self.vp.session.refresh()
        self.refresh()
        limits = f"; stopped by limits: {', '.join(drag.stopped)}" if drag.stopped else ""
        self.message.emit(f"{done}{limits}")

    def _wheel(self, x: float, y: float, delta: int, fine: bool) -> bool:
        """Over the selected jointed body: turn the joint it hangs from. Elsewhere: the camera zooms."""
        if self.target is None or self._drag is not None or not delta:
            return False
        state_id, body, _mode = self.target
        session = self.vp.session
        if self.vp.picker.body_at(int(x), int(y)) != body:
            return False
        joint = session.scene.joint_of_child(body)
        if joint is None or joint.type in ("fixed", "ball"):
            return False
        state = next(s for s in session.states if s.id == state_id)
        step = (WHEEL_STEP / 4 if fine else WHEEL_STEP) * (1 if delta > 0 else -1)
        if joint.type == "prismatic":
            step = (0.0025 if fine else 0.01) * (1 if delta > 0 else -1)
        pose, said = turn_joint(session.scene, state, joint.name, step)
        if pose.joints[joint.name] == state.pose.completed(session.scene).joints[joint.name]:
            self.message.emit(said)
            return True
        drag = PoseDrag(session.scene, state)
        drag.pose = pose
        try:
            drag.commit(session.project, self.stack_of())
        except ValueError as err:
            self.message.emit(str(err))
            return True
        session.refresh()
        self.refresh()
        self.message.emit(said)
        return True

    def detach(self) -> None:
        self.vp.plotter.interactor.removeEventFilter(self)
        self.target = None
