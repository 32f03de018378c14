"""The Scene dock's Camera form: a camera made from the viewport's current view
(add_camera: its position, target and lens, so a render sees what the view
sees), and "Frame the action": a camera that keeps the chosen bodies whole in
view over a frame range, looking the way the current view looks (frame_action,
which checks every frame with the reviews' visibility test and refuses, by
name, a body that would leave the image)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFormLayout, QGroupBox, QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem,
                               QPushButton, QSpinBox, QVBoxLayout, QWidget)

from studio.ui import building


def _spin(lo: int, hi: int, value: int) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setValue(value)
    return s


class QtCameraForm(QWidget):
    message = Signal(str)

    def __init__(self, session, viewport, playhead, stack_of, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.viewport, self.playhead, self.stack_of = session, viewport, playhead, stack_of
        self.name = QLineEdit()
        self.width_box, self.height_box = _spin(16, 8192, 640), _spin(16, 8192, 360)
        size = QHBoxLayout()
        size.addWidget(self.width_box)
        size.addWidget(self.height_box)
        self.from_view_button = QPushButton("Add camera from view")
        self.from_view_button.setToolTip("A camera where the viewport's view is now (Free orbit to choose it)")
        self.from_view_button.clicked.connect(self.add_from_view)
        self.bodies = QListWidget()
        self.bodies.setMaximumHeight(110)
        self.first, self.last = _spin(0, 10_000_000, 1001), _spin(0, 10_000_000, 1001)
        frames = QHBoxLayout()
        frames.addWidget(self.first)
        frames.addWidget(self.last)
        self.range_button = QPushButton("In/out or film")
        self.range_button.setToolTip("The playhead's in/out range, else the baked film's, else the keys'")
        self.range_button.clicked.connect(self.take_range)
        frames.addWidget(self.range_button)
        self.frame_button = QPushButton("Frame the action")
        self.frame_button.setToolTip("A camera looking the way the view looks, far enough back that the checked "
                                     "bodies stay whole in view on every frame of the range")
        self.frame_button.clicked.connect(self.frame_action)
        form = QFormLayout()
        form.addRow("camera name", self.name)
        form.addRow("resolution", size)
        action = QGroupBox("Frame the action")
        af = QFormLayout(action)
        af.addRow("bodies", self.bodies)
        af.addRow("frames", frames)
        af.addRow(self.frame_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(form)
        lay.addWidget(self.from_view_button)
        lay.addWidget(action)
        lay.addStretch(1)
        self.reload()
        self.take_range()

    def reload(self) -> None:
        scene = self.session.scene
        checked = set(self.checked_bodies())
        self.bodies.clear()
        for b in scene.bodies:
            if b.is_static:
                continue
            item = QListWidgetItem(b.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if b.name in checked else Qt.CheckState.Unchecked)
            self.bodies.addItem(item)
        if scene.cameras and self.width_box.value() == 640 and self.height_box.value() == 360:
            w, h = scene.cameras[0].resolution          # new cameras match the scene's first by default
            self.width_box.setValue(w)
            self.height_box.setValue(h)
        if not self.name.hasFocus():
            self.name.setText(building.free_name(scene, "cam"))

    def checked_bodies(self) -> list[str]:
        return [self.bodies.item(i).text() for i in range(self.bodies.count())
                if self.bodies.item(i).checkState() == Qt.CheckState.Checked]

    def check_bodies(self, names) -> None:
        for i in range(self.bodies.count()):
            item = self.bodies.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in names else Qt.CheckState.Unchecked)

    def take_range(self) -> None:
        s = self.session
        if self.playhead.in_out:
            a, b = self.playhead.in_out
        elif s.film is not None and s.film.n_frames:
            a, b = s.film.frame_start, s.film.frame_end
        elif s.states:
            a, b = s.states[0].frame, s.states[-1].frame
        else:
            a = b = s.project.frame_start
        self.first.setValue(a)
        self.last.setValue(b)

    def _resolution(self) -> list[int]:
        return [self.width_box.value(), self.height_box.value()]

    def add_from_view(self) -> None:
        cam = self.viewport.plotter.camera
        args = building.camera_from_view(self.name.text().strip(), cam.position, cam.focal_point, cam.view_angle,
                                         self._resolution())
        self._call("add_camera", args, f"Added camera {args['name']} from the view")

    def frame_action(self) -> None:
        bodies = self.checked_bodies()
        if not bodies:
            self.message.emit("Frame the action: check the bodies to keep in view")
            return
        cam = self.viewport.plotter.camera
        direction = [f - p for f, p in zip(cam.focal_point, cam.position)]
        args = {"name": self.name.text().strip(), "bodies": bodies, "frames": [self.first.value(), self.last.value()],
                "direction": [float(v) for v in direction], "resolution": self._resolution()}
        out = self._call("frame_action", args, "")
        if out is not None:
            self.message.emit(f"Camera {args['name']}: {out.result['in_view']} ({args['frames'][0]}–{args['frames'][1]})")

    def _call(self, tool: str, args: dict, done: str):
        try:
            out = building.call(self.session.project, self.stack_of(), tool, args)
        except ValueError as e:
            self.message.emit(str(e))
            return None
        self.session.refresh()
        if done:
            self.message.emit(done)
        return out
