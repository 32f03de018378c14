"""Click a body in the viewport to select it.

VTK observers on the viewport's interactor, so picking runs on the GUI thread
with the interactor's own event positions (display pixels, origin bottom-left).
A left press and release within a few pixels is a click: the prop under the
cursor is found with a vtkPropPicker (a render-based pick, exact for the
drawn triangles, user matrices included) and its body goes to the playhead's
selection; Shift+click adds or removes it; a click on empty space clears the
selection. A drag still orbits the camera as before.
"""
from __future__ import annotations

from typing import Callable

from vtkmodules.vtkRenderingCore import vtkPropPicker

from studio.ui.playhead import Playhead

CLICK_PX = 3


class BodyPicker:
    def __init__(self, plotter, bodies: Callable[[], dict[str, object]], playhead: Playhead):
        self.plotter, self.bodies, self.playhead = plotter, bodies, playhead
        self.picker = vtkPropPicker()
        self._pressed: tuple[int, int] | None = None
        self._detached = False
        # The interactor swallows release events under a camera style; pyvista then observes the
        # style instead (pyvista issue 4976), so both go through its add_observer.
        self._press = plotter.iren.add_observer("LeftButtonPressEvent", self._on_press)
        self._release = plotter.iren.add_observer("LeftButtonReleaseEvent", self._on_release)

    def _on_press(self, _obj, _event) -> None:
        if self._detached:
            return
        self._pressed = tuple(self.plotter.iren.interactor.GetEventPosition())

    def _on_release(self, _obj, _event) -> None:
        pressed, self._pressed = self._pressed, None
        if self._detached:
            return
        iren = self.plotter.iren.interactor
        x, y = iren.GetEventPosition()
        if pressed is None or abs(x - pressed[0]) > CLICK_PX or abs(y - pressed[1]) > CLICK_PX:
            return                       # a drag: the camera moved, nothing is selected
        name = self.body_at(x, y)
        if iren.GetShiftKey():
            current = list(self.playhead.selected)
            if name in current:
                current.remove(name)
            elif name:
                current.append(name)
            self.playhead.select(current)
        else:
            self.playhead.select((name,) if name else ())

    def body_at(self, x: int, y: int) -> str | None:
        """The body drawn at display pixel (x, y), origin bottom-left; None over empty space."""
        renderer = self.plotter.renderer
        if not self.picker.PickProp(x, y, renderer):
            return None
        prop = self.picker.GetViewProp()
        for name, actor in self.bodies().items():
            if actor is prop:
                return name
        return None

    def detach(self) -> None:
        """Stop selecting and let go of the viewport: the interactor's observers hold this picker,
        and through it the plotter, in a cycle Python's collector cannot see."""
        self._detached = True
        for tag in (self._press, self._release):
            try:
                self.plotter.iren.remove_observer(tag)
            except Exception:   # the interactor may already be finalised by plotter.close()
                pass
        self.plotter, self.bodies = None, (lambda: {})
