"""The Scene dock: build the scene in the window, from an empty project on.

An outline of what the scene holds (bodies with their shape and joint, named
frames, cameras, materials, allowed overlaps) above one form per thing to
add: a Body (qt_body_form), a named Frame placed by clicking on a surface
(qt_frame_pick, its axes drawn), a Camera from the view or framing the action
(qt_camera_form), a Material (added, or given to the selected bodies), an
allowed Overlap. Every button is one tool call on the window's stack
(building.py), so Edit › Undo takes it back and the project's calls replay it.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QLabel, QLineEdit, QPushButton, QScrollArea,
                               QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from studio.ui import building
from studio.ui.qt_body_form import QtBodyForm
from studio.ui.qt_camera_form import QtCameraForm
from studio.ui.qt_frame_pick import FrameAxes, FramePicker
from studio.ui.qt_schema_form import FormError, SchemaForm

MATERIAL_SCHEMA = {"type": "object", "properties": {
    "color": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}, "minItems": 4,
              "maxItems": 4, "default": [0.7, 0.7, 0.7, 1.0], "description": "red, green, blue, alpha: 0..1"},
    "roughness": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
    "metallic": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.0}}}


def _scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setWidget(widget)
    return area


class QtBuild(QWidget):
    message = Signal(str)

    def __init__(self, qsession, playhead, viewport, stack_of, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead, self.viewport, self.stack_of = qsession.session, playhead, viewport, stack_of
        self.outline = QTreeWidget()
        self.outline.setHeaderLabels(["name", "what"])
        self.outline.setColumnWidth(0, 120)
        self.outline.itemClicked.connect(self._on_item)
        self.tabs = QTabWidget()
        self.tabs.setUsesScrollButtons(True)
        self.body_form = QtBodyForm(self.session, stack_of)
        self.body_form.message.connect(self.message)
        self.tabs.addTab(_scrolled(self.body_form), "Body")
        self.tabs.addTab(_scrolled(self._frame_tab()), "Frame")
        self.camera_form = QtCameraForm(self.session, viewport, playhead, stack_of)
        self.camera_form.message.connect(self.message)
        self.tabs.addTab(_scrolled(self.camera_form), "Camera")
        self.tabs.addTab(_scrolled(self._material_tab()), "Material")
        self.tabs.addTab(_scrolled(self._overlap_tab()), "Overlap")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.outline, 1)
        lay.addWidget(self.tabs, 3)
        qsession.scene_changed.connect(self.reload)
        # the axes follow the bodies as drawn: a new frame, a new film, another Show mode, a rebuilt scene
        playhead.frame_changed.connect(lambda _f: self.axes.update())
        qsession.film_changed.connect(self.axes.update)
        qsession.changed.connect(self.axes.update)
        viewport.show_mode.currentIndexChanged.connect(lambda _i: self.axes.update())
        viewport.meshes_shown.connect(lambda _n: self.axes.update())
        self.reload()

    # ---- tabs ----------------------------------------------------------------
    def _frame_tab(self) -> QWidget:
        page = QWidget()
        self.frame_name = QLineEdit()
        self.pick_button = QPushButton("Place on a surface…")
        self.pick_button.setToolTip("Then click a body in the viewport: the frame sits there, Z along the "
                                    "surface's normal")
        self.pick_button.clicked.connect(self.arm_frame)
        self.show_axes = QCheckBox("Show frames' axes")
        self.show_axes.setToolTip("Every named frame's axes in the viewport: X red, Y green, Z blue")
        self.show_axes.toggled.connect(lambda on: self.axes.set_shown(on))
        self.picker = FramePicker(self.viewport, self)
        self.picker.message.connect(self.message)
        self.picker.picked.connect(self.add_frame)
        self.axes = FrameAxes(self.viewport, self.session)
        form = QFormLayout(page)
        form.addRow("frame name", self.frame_name)
        form.addRow(self.pick_button)
        form.addRow(self.show_axes)
        hint = QLabel("A named frame is a place on a body a motion tool can name: a hand's grip, a handle, a "
                      "point to reach.")
        hint.setWordWrap(True)
        form.addRow(hint)
        return page

    def _material_tab(self) -> QWidget:
        page = QWidget()
        self.material_name = QLineEdit()
        self.material_form = SchemaForm(MATERIAL_SCHEMA)
        self.material_button = QPushButton("Add material")
        self.material_button.clicked.connect(self.add_material)
        self.assign_button = QPushButton("Give it to the selected bodies")
        self.assign_button.clicked.connect(self.assign_material)
        form = QFormLayout(page)
        form.addRow("material name", self.material_name)
        form.addRow(self.material_form)
        form.addRow(self.material_button)
        form.addRow(self.assign_button)
        return page

    def _overlap_tab(self) -> QWidget:
        page = QWidget()
        self.overlap_a, self.overlap_b = QComboBox(), QComboBox()
        self.overlap_reason = QLineEdit("construction")
        self.overlap_button = QPushButton("Allow these two to overlap")
        self.overlap_button.clicked.connect(self.allow_overlap)
        form = QFormLayout(page)
        form.addRow("body", self.overlap_a)
        form.addRow("and body", self.overlap_b)
        form.addRow("because", self.overlap_reason)
        form.addRow(self.overlap_button)
        return page

    # ---- following the scene ---------------------------------------------------
    def reload(self) -> None:
        scene = self.session.scene
        self.outline.clear()
        for section, rows in building.scene_rows(scene):
            top = QTreeWidgetItem([f"{section} ({len(rows)})", ""])
            self.outline.addTopLevelItem(top)
            for name, what in rows:
                item = QTreeWidgetItem([name, what])
                item.setToolTip(1, what)
                top.addChild(item)
            top.setExpanded(True)
        self.body_form.reload()
        self.camera_form.reload()
        for combo in (self.overlap_a, self.overlap_b):
            keep = combo.currentText()
            combo.clear()
            combo.addItems(scene.body_names)
            combo.setCurrentIndex(max(0, combo.findText(keep)))
        if not self.frame_name.hasFocus():
            self.frame_name.setText(building.free_name(scene, "mark"))
        if not self.material_name.hasFocus():
            taken = {m.name for m in scene.materials}
            name, n = "paint", 2
            while name in taken:
                name, n = f"paint_{n}", n + 1
            self.material_name.setText(name)
        self.axes.update()

    def _on_item(self, item, _col) -> None:
        parent = item.parent()
        if parent is not None and parent.text(0).startswith("Bodies"):
            self.playhead.select((item.text(0),))

    # ---- actions -----------------------------------------------------------------
    def arm_frame(self) -> None:
        name = self.frame_name.text().strip()
        if not self.session.scene.bodies:
            self.message.emit("A named frame sits on a body: add a body first")
            return
        self.show_axes.setChecked(True)
        self.picker.arm(name)

    def add_frame(self, args: dict) -> None:
        if self._call("add_frame", args):
            self.message.emit(f"Placed frame {args['name']} on {args['body']} (Z along the surface)")

    def material_arguments(self) -> dict:
        return {"name": self.material_name.text().strip(), **{k: v for k, v in {
            **{k: p["default"] for k, p in self.material_form.props.items()}, **self.material_form.values()}.items()}}

    def add_material(self) -> None:
        try:
            args = self.material_arguments()
        except FormError as e:
            self.message.emit(str(e))
            return
        if self._call("add_material", args):
            self.message.emit(f"Added material {args['name']}")

    def assign_material(self) -> None:
        name = self.material_name.text().strip()
        bodies = [b for b in self.playhead.selected if b in self.session.scene.body_names]
        if not bodies:
            self.message.emit("Select the bodies in the viewport (or the outline) to give them a material")
            return
        if name not in {m.name for m in self.session.scene.materials}:
            self.message.emit(f"No material named {name!r}: add it first")
            return
        for body in bodies:           # one create_body per body: each its own undoable step
            args = {**building.body_arguments_of(self.session.scene, body), "material": name}
            if not self._call("create_body", args):
                return
        self.message.emit(f"Gave {name} to {', '.join(bodies)}")

    def allow_overlap(self) -> None:
        args = {"a": self.overlap_a.currentText(), "b": self.overlap_b.currentText(),
                "reason": self.overlap_reason.text().strip() or "construction"}
        if args["a"] == args["b"]:
            self.message.emit("An allowed overlap is between two different bodies")
            return
        if self._call("allow_overlap", args):
            self.message.emit(f"{args['a']} and {args['b']} may overlap: {args['reason']}")

    def _call(self, tool: str, args: dict) -> bool:
        try:
            building.call(self.session.project, self.stack_of(), tool, args)
        except ValueError as e:
            self.message.emit(str(e))
            return False
        self.session.refresh()
        return True

    def close_view(self) -> None:
        self.picker.detach()
