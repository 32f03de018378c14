"""Strokes drawn over the viewport, as a review tool draws on a frame.

While drawing is on, a Qt event filter on the VTK widget takes the left
button: a press starts a stroke, moves add to it, the release ends it (the
camera does not orbit meanwhile). Points are kept in the image of the shot
camera the viewport looks through, (u, v) from the top-left, 0..1: in the
Shot camera view the viewport's height is the image's height (its vertical
angle is the render's) and the image is centred across its width, so a point
maps to the same place of a render of that frame at any size. Points outside
the image belong to no frame and are not kept (the pen leaves no trace there).

Strokes are drawn in VTK as 2D lines (so screenshots hold them): the ones
being drawn, and those of the notes on the frame shown.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData, vtkPolyLine
from vtkmodules.vtkRenderingCore import vtkActor2D, vtkCoordinate, vtkPolyDataMapper2D

from studio.timeline.notes import Stroke

MIN_STEP = 0.002          # of the image: closer points add nothing to a stroke


def image_box(width: float, height: float, resolution) -> tuple[float, float, float]:
    """(left, image width, image height) in widget pixels of the shot camera's image in the viewport."""
    w, h = resolution
    iw = height * w / h
    return (width - iw) / 2, iw, height


def to_image(x: float, y: float, width: float, height: float, resolution) -> tuple[float, float]:
    left, iw, ih = image_box(width, height, resolution)
    return (x - left) / iw, y / ih


def to_viewport(u: float, v: float, width: float, height: float, resolution) -> tuple[float, float]:
    """Normalised viewport coordinates (0..1, origin bottom-left) of an image point."""
    left, iw, ih = image_box(width, height, resolution)
    return (left + u * iw) / width, 1.0 - v * ih / height


class Sketch(QObject):
    stroke_added = Signal(int)          # how many strokes are pending now
    message = Signal(str)

    def __init__(self, viewport, parent: QObject | None = None):
        super().__init__(parent)
        self.viewport = viewport
        self.drawing = False
        self.color = "#ff3b30"
        self.width = 3.0
        self.pending: list[Stroke] = []
        self.camera = None                  # the camera the pending strokes are drawn through
        self.shown: list[Stroke] = []       # the strokes of the notes on the frame shown
        self._current: list[list[float]] | None = None
        self._actors: list[vtkActor2D] = []
        viewport.plotter.interactor.installEventFilter(self)

    # ---- drawing ------------------------------------------------------------
    def start(self) -> bool:
        """Drawing on: the viewport looks through the shot camera (strokes belong to its image)."""
        cam = self.viewport.session.camera_at(self.viewport.playhead.frame)
        if cam is None:
            self.message.emit("Drawing on a frame needs a camera: add one in the Scene dock")
            return False
        if self.viewport.camera_mode.currentIndex() != 0:
            self.viewport.camera_mode.setCurrentIndex(0)
        if self.camera is not None and self.camera.name != cam.name and self.pending:
            self.pending.clear()
        self.camera, self.drawing = cam, True
        self.viewport.plotter.interactor.setCursor(Qt.CursorShape.CrossCursor)
        self.message.emit(f"Drawing on frame {self.viewport.playhead.frame} through {cam.name}")
        return True

    def stop(self) -> None:
        self.drawing, self._current = False, None
        self.viewport.plotter.interactor.unsetCursor()

    def clear(self) -> None:
        self.pending.clear()
        self.redraw()
        self.stroke_added.emit(0)

    def eventFilter(self, obj, e) -> bool:      # noqa: N802 (Qt's name)
        t = e.type()
        if t == QEvent.Type.Resize:
            self.redraw(render=False)
            return False
        if not self.drawing or self.camera is None:
            return False
        if t == QEvent.Type.MouseButtonPress and e.button() == Qt.MouseButton.LeftButton:
            self._current = []
            self._add(e.position().x(), e.position().y())
            return True
        if t == QEvent.Type.MouseMove and self._current is not None:
            self._add(e.position().x(), e.position().y())
            return True
        if t == QEvent.Type.MouseButtonRelease and e.button() == Qt.MouseButton.LeftButton and self._current is not None:
            self._add(e.position().x(), e.position().y())
            self._end()
            return True
        return False

    def _add(self, x: float, y: float) -> None:
        widget = self.viewport.plotter.interactor
        u, v = to_image(x, y, widget.width(), widget.height(), self.camera.resolution)
        if not (0 <= u <= 1 and 0 <= v <= 1):       # off the image: end the piece drawn so far
            self._end(keep_going=True)
            return
        pts = self._current
        if pts and abs(pts[-1][0] - u) < MIN_STEP and abs(pts[-1][1] - v) < MIN_STEP:
            return
        pts.append([round(u, 5), round(v, 5)])
        self.redraw(live=pts)

    def _end(self, keep_going: bool = False) -> None:
        pts = self._current
        if pts and len(pts) >= 2:
            self.pending.append(Stroke(pts, self.color, self.width))
            self.stroke_added.emit(len(self.pending))
        elif pts and len(pts) == 1:            # a dot
            self.pending.append(Stroke(pts * 2, self.color, self.width))
            self.stroke_added.emit(len(self.pending))
        self._current = [] if keep_going else None
        self.redraw()

    # ---- showing -------------------------------------------------------------
    def show_strokes(self, strokes: list[Stroke], camera=None) -> None:
        """The stored notes' strokes on the frame shown, drawn through `camera` (theirs) in the Shot view."""
        self.shown, self._shown_camera = list(strokes), camera
        if not strokes and not self._actors:
            return                              # nothing drawn before or now: no render for a frame without notes
        self.redraw(render=False)
        self.viewport.request_render()          # drawn with the frame's own render, not one more

    _shown_camera = None

    def redraw(self, live: list | None = None, render: bool = True) -> None:
        renderer = self.viewport.plotter.renderer
        for a in self._actors:
            renderer.RemoveViewProp(a)
        self._actors = []
        widget = self.viewport.plotter.interactor
        W, H = max(1, widget.width()), max(1, widget.height())
        items = []
        if self.viewport.camera_mode.currentIndex() == 0 and self._shown_camera is not None:
            items += [(s, self._shown_camera) for s in self.shown]
        if self.camera is not None:
            items += [(s, self.camera) for s in self.pending]
            if live:
                items.append((Stroke(live, self.color, self.width), self.camera))
        for stroke, cam in items:
            self._actors.append(self._actor(stroke, W, H, cam.resolution))
            renderer.AddViewProp(self._actors[-1])
        if render:
            self.viewport.plotter.render()

    @staticmethod
    def _actor(stroke: Stroke, W: int, H: int, resolution) -> vtkActor2D:
        pts = vtkPoints()
        line = vtkPolyLine()
        line.GetPointIds().SetNumberOfIds(len(stroke.points))
        for i, (u, v) in enumerate(stroke.points):
            x, y = to_viewport(u, v, W, H, resolution)
            pts.InsertNextPoint(x, y, 0.0)
            line.GetPointIds().SetId(i, i)
        cells = vtkCellArray()
        cells.InsertNextCell(line)
        poly = vtkPolyData()
        poly.SetPoints(pts)
        poly.SetLines(cells)
        coord = vtkCoordinate()
        coord.SetCoordinateSystemToNormalizedViewport()
        mapper = vtkPolyDataMapper2D()
        mapper.SetInputData(poly)
        mapper.SetTransformCoordinate(coord)
        actor = vtkActor2D()
        actor.SetMapper(mapper)
        c = QColor(stroke.color)
        actor.GetProperty().SetColor(c.redF(), c.greenF(), c.blueF())
        actor.GetProperty().SetLineWidth(max(1.0, stroke.width * H / 360))
        return actor

    @property
    def drawn_actors(self) -> int:
        return len(self._actors)

    def detach(self) -> None:
        self.drawing = False
        try:                                 # the viewport may be closed already
            self.viewport.plotter.interactor.removeEventFilter(self)
        except (RuntimeError, AttributeError):
            pass
