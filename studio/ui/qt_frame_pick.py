"""Named frames in the viewport: placing one by clicking on a body's surface,
and drawing every frame's axes (X red, Y green, Z blue) where the shown pose
puts them.

While armed, a Qt event filter on the VTK widget takes the next left click
(a press and release within a few pixels; a drag still orbits the camera):
a vtkCellPicker finds the body, the point and the surface's normal there, and
the frame is one add_frame call at that point with its Z axis along the
normal, in the body's own frame (building.frame_on_surface). The picker then
disarms; Esc disarms it too.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from vtkmodules.vtkRenderingCore import vtkCellPicker

from studio.scene.kinematics import frame_world

from studio.ui import building

CLICK_PX = 4
AXIS_COLORS = ((0.95, 0.25, 0.25), (0.3, 0.9, 0.3), (0.35, 0.55, 1.0))
AXIS_SHARE = 0.04          # of the scene's size: long enough to read, short enough not to clutter


class FramePicker(QObject):
    picked = Signal(dict)          # the add_frame arguments of the click
    message = Signal(str)

    def __init__(self, viewport, parent: QObject | None = None):
        super().__init__(parent)
        self.viewport = viewport
        self.name = ""
        self.armed = False
        self._pressed = None
        self.picker = vtkCellPicker()
        self.picker.SetTolerance(0.0005)
        viewport.plotter.interactor.installEventFilter(self)

    def arm(self, name: str) -> None:
        self.name, self.armed = name, True
        self.viewport.plotter.interactor.setCursor(Qt.CursorShape.CrossCursor)
        self.message.emit(f"Click on a body's surface to place {name} (Esc cancels)")

    def disarm(self) -> None:
        self.armed, self._pressed = False, None
        self.viewport.plotter.interactor.unsetCursor()

    def eventFilter(self, obj, e) -> bool:      # noqa: N802 (Qt's name)
        if not self.armed:
            return False
        t = e.type()
        if t == QEvent.Type.KeyPress and e.key() == Qt.Key.Key_Escape:
            self.disarm()
            self.message.emit("Placing a frame cancelled")
            return True
        if t == QEvent.Type.MouseButtonPress and e.button() == Qt.MouseButton.LeftButton:
            self._pressed = e.position()
            return False                       # a drag still orbits
        if t == QEvent.Type.MouseButtonRelease and e.button() == Qt.MouseButton.LeftButton and self._pressed:
            d = e.position() - self._pressed
            self._pressed = None
            if abs(d.x()) <= CLICK_PX and abs(d.y()) <= CLICK_PX:
                self.click(e.position().x(), e.position().y())
                return True
        return False

    def click(self, x: float, y: float) -> dict | None:
        """Pick at widget pixel (x, y), origin top-left; emits `picked` with the frame's arguments."""
        widget = self.viewport.plotter.interactor
        ratio = widget.devicePixelRatioF()
        dx, dy = x * ratio, (widget.height() - y) * ratio
        hit = self.pick(dx, dy)
        if hit is None:
            self.message.emit(f"No body under the cursor there: click on a surface to place {self.name}")
            return None
        body, point, normal = hit
        world = self.viewport.shown_world()[body]
        args = building.frame_on_surface(self.name, body, world, point, normal)
        self.disarm()
        self.picked.emit(args)
        return args

    def pick(self, dx: float, dy: float):
        """(body, world point, world normal) under display pixel (dx, dy), origin bottom-left."""
        renderer = self.viewport.plotter.renderer
        if not self.picker.Pick(dx, dy, 0, renderer):
            return None
        actor = self.picker.GetActor()
        body = next((n for n, a in self.viewport.actors.items() if a is actor), None)
        if body is None:
            return None
        return body, np.array(self.picker.GetPickPosition()), np.array(self.picker.GetPickNormal())

    def detach(self) -> None:
        self.armed = False
        try:                                 # the viewport may be closed already
            self.viewport.plotter.interactor.removeEventFilter(self)
        except (RuntimeError, AttributeError):
            pass


class FrameAxes:
    """Every named frame's axes in the viewport, following the shown pose."""

    def __init__(self, viewport, session):
        self.viewport, self.session = viewport, session
        self.shown = False
        self._names: list[str] = []

    def set_shown(self, shown: bool) -> None:
        self.shown = shown
        self.update()

    def update(self) -> None:
        plotter = self.viewport.plotter
        if plotter is None or not self.shown and not self._names:
            return                          # nothing drawn, nothing to take away
        for axis in range(3):
            plotter.remove_actor(f"frame-axes-{axis}", render=False)
        self._names = []
        scene = self.session.scene
        world = self.viewport.shown_world()
        frames = [f for f in scene.frames if f.body in world] if self.shown else []
        if frames:
            length = AXIS_SHARE * self.viewport.scene_size()
            mats = [frame_world(scene, world, f.name) for f in frames]
            for axis in range(3):
                pts = np.array([[m[:3, 3], m[:3, 3] + m[:3, axis] * length] for m in mats]).reshape(-1, 3)
                lines = np.hstack([[2, 2 * i, 2 * i + 1] for i in range(len(mats))])
                plotter.add_mesh(pv.PolyData(pts, lines=lines), color=AXIS_COLORS[axis], line_width=3,
                                 name=f"frame-axes-{axis}", render=False, reset_camera=False, lighting=False)
            self._names = [f.name for f in frames]
        plotter.render()

    @property
    def drawn(self) -> list[str]:
        return list(self._names)
