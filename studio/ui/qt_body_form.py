"""The Scene dock's Body form: a name, what the body is made of (a box,
cylinder, sphere or capsule with its sizes, any CAD part with a form made from
its parameter schema, or a mesh file), its kind, material and mass, and where
it goes: placed on the floor plan by position and a turn about Z, or joined to
a parent body on a joint with its type, axis, origin and limits. "Add body"
is one create_body call (see building.py)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QStackedWidget, QVBoxLayout, QWidget)

from studio.scene.ir import BODY_KINDS, JOINT_TYPES
from studio.tools.context import MESH_TYPES

from studio.ui import building
from studio.ui.qt_schema_form import FormError, SchemaForm

SOURCES = (("box", "Box"), ("cylinder", "Cylinder"), ("sphere", "Sphere"), ("capsule", "Capsule"),
           ("part", "CAD part"), ("mesh", "Mesh file"))
JOINT_SCHEMA = {"type": "object", "properties": {
    "axis": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "default": [0, 0, 1],
             "description": "the joint's axis in the parent's frame"},
    "origin": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "default": [0, 0, 0],
               "description": "where the joint sits in the parent's frame, metres"},
    "lower": {"type": "number", "minimum": -100, "maximum": 100, "default": -1.57,
              "description": "lower limit: radians (revolute, ball: the largest turn), metres (prismatic)"},
    "upper": {"type": "number", "minimum": -100, "maximum": 100, "default": 1.57,
              "description": "upper limit: radians (revolute, ball: the largest turn), metres (prismatic)"}}}
PLACE_SCHEMA = {"type": "object", "properties": {
    "position": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "default": [0, 0, 0],
                 "description": "where the body's origin rests, metres"},
    "turn": {"type": "number", "default": 0, "description": "a turn about Z, degrees"},
    "offset": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "default": [0, 0, 0],
               "description": "where the shape sits in the body's own frame (e.g. half a link's length "
                              "along X, so it turns about its end)"},
    "mass": {"type": "number", "minimum": 0, "maximum": 100000, "default": 1.0,
             "description": "kilograms; 0 for static scenery"}}}


def _values(form: SchemaForm) -> dict:
    """The form's values with its defaults filled in (a body's placement is always said)."""
    out = {k: p.get("default") for k, p in form.props.items()}
    out.update(form.values())
    return out


class QtBodyForm(QWidget):
    message = Signal(str)
    added = Signal(str)

    def __init__(self, session, stack_of, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.stack_of = session, stack_of
        self.name = QLineEdit()
        self.name.setPlaceholderText("the body's name")
        self.source = QComboBox()
        for key, label in SOURCES:
            self.source.addItem(label, key)
        self.sizes = QStackedWidget()
        self.size_forms: dict[str, SchemaForm] = {}
        for shape in building.SHAPES:
            self.size_forms[shape] = SchemaForm(building.SHAPE_SCHEMAS[shape])
            self.sizes.addWidget(self.size_forms[shape])
        part_page = QWidget()
        self.part = QComboBox()
        self.part.addItems(building.part_names())
        self.part_host = QVBoxLayout(part_page)
        self.part_host.setContentsMargins(0, 0, 0, 0)
        self.part_host.addWidget(self.part)
        self.part_doc = QLabel("")
        self.part_doc.setWordWrap(True)
        self.part_host.addWidget(self.part_doc)
        self.part_form: SchemaForm | None = None
        self.sizes.addWidget(part_page)
        mesh_page = QWidget()
        row = QHBoxLayout(mesh_page)
        row.setContentsMargins(0, 0, 0, 0)
        self.mesh = QLineEdit()
        self.mesh.setPlaceholderText("a mesh file in the project folder (" + ", ".join(MESH_TYPES) + ")")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.choose_mesh)
        row.addWidget(self.mesh, 1)
        row.addWidget(browse)
        self.sizes.addWidget(mesh_page)
        self.kind = QComboBox()
        self.kind.addItems(list(BODY_KINDS))
        self.kind.setToolTip("ground: the floor; static: fixed scenery; link: part of a jointed assembly")
        self.material = QComboBox()
        self.place = SchemaForm(PLACE_SCHEMA)
        self.parent_body = QComboBox()
        self.joint_name = QLineEdit()
        self.joint_name.setPlaceholderText("the joint's name")
        self.joint_type = QComboBox()
        self.joint_type.addItems([t for t in JOINT_TYPES])
        self.joint = SchemaForm(JOINT_SCHEMA)
        self.joint_box = QGroupBox("Joint to the parent")
        jl = QFormLayout(self.joint_box)
        jl.addRow("name", self.joint_name)
        jl.addRow("type", self.joint_type)
        jl.addRow(self.joint)
        self.add_button = QPushButton("Add body")
        self.add_button.clicked.connect(self.add)
        form = QFormLayout()
        form.addRow("name", self.name)
        form.addRow("made of", self.source)
        form.addRow(self.sizes)
        form.addRow("kind", self.kind)
        form.addRow("material", self.material)
        form.addRow("joined to", self.parent_body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(form)
        lay.addWidget(self.joint_box)
        lay.addWidget(self.place)
        lay.addWidget(self.add_button)
        self.source.currentIndexChanged.connect(self._on_source)
        self.part.currentTextChanged.connect(self._on_part)
        self.parent_body.currentIndexChanged.connect(self._on_parent)
        self.kind.currentTextChanged.connect(lambda _k: self._propose_name())
        self._on_part(self.part.currentText())
        self.reload()
        self._on_source()

    # ---- the form follows the scene ------------------------------------------
    def reload(self) -> None:
        scene = self.session.scene
        for combo, items, first in ((self.material, [m.name for m in scene.materials], "none"),
                                    (self.parent_body, scene.body_names, "none (placed freely)")):
            keep = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(first, "")
            for name in items:
                combo.addItem(name, name)
            combo.setCurrentIndex(max(0, combo.findData(keep)))
            combo.blockSignals(False)
        self._on_parent()
        if not self.name.hasFocus():
            self._propose_name()

    def _propose_name(self) -> None:
        base = self.part.currentText() if self.source.currentData() == "part" else self.source.currentData()
        if self.kind.currentText() == "ground":
            base = "floor"
        self.name.setText(building.free_name(self.session.scene, base or "body"))

    def _on_source(self) -> None:
        self.sizes.setCurrentIndex(self.source.currentIndex())
        self._propose_name()

    def _on_part(self, part: str) -> None:
        if self.part_form is not None:
            self.part_host.removeWidget(self.part_form)
            self.part_form.deleteLater()
        schema = building.part_form_schema(part)
        self.part_doc.setText(schema.get("title", ""))
        self.part_form = SchemaForm(schema)
        self.part_host.addWidget(self.part_form)
        if self.source.currentData() == "part":
            self._propose_name()

    def _on_parent(self) -> None:
        joined = bool(self.parent_body.currentData())
        self.joint_box.setVisible(joined)
        for name in ("position", "turn"):
            self.place.fields[name].setEnabled(not joined)
            self.place.labels[name].setEnabled(not joined)
        if joined and not self.joint_name.text():
            self.joint_name.setText(building.free_name(self.session.scene, f"{self.name.text() or 'body'}_joint"))

    def choose_mesh(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A mesh for the body", str(self.session.project.path),
                                              "Meshes (" + " ".join(f"*{t}" for t in MESH_TYPES) + ")")
        if path:
            self.mesh.setText(self.bring_mesh(Path(path)))

    def bring_mesh(self, path: Path) -> str:
        """A mesh chosen outside the project's assets/ is copied in, by content (the person named it);
        the body names the copy, relative to the project."""
        project = self.session.project
        root = project.path.resolve()
        path = path.resolve()
        if path.is_relative_to(root / "assets"):
            return str(path.relative_to(root))
        name = project.put_asset(path.read_bytes(), path.suffix.lstrip(".").lower())
        self.message.emit(f"copied {path.name} into the project's assets/")
        return str(project.asset_path(name).relative_to(root))

    # ---- adding ------------------------------------------------------------
    def arguments(self) -> dict:
        """The create_body call the form says; FormError / ValueError naming the field otherwise."""
        source = self.source.currentData()
        place = _values(self.place)
        joint = None
        if self.parent_body.currentData():
            j = _values(self.joint)
            joint = {"name": self.joint_name.text().strip(), "type": self.joint_type.currentText(),
                     "axis": j["axis"], "origin": j["origin"]}
            if joint["type"] != "fixed":
                joint.update(lower=j["lower"], upper=j["upper"])
        sizes = _values(self.size_forms[source]) if source in building.SHAPES else None
        params = self.part_form.values() if source == "part" else None
        return building.body_arguments(
            self.name.text().strip(), shape=source, sizes=sizes, part=self.part.currentText(), params=params,
            mesh=self.mesh.text().strip(), kind=self.kind.currentText(), material=self.material.currentData(),
            mass=place["mass"], position=place["position"], yaw_deg=place["turn"], offset=place["offset"],
            parent=self.parent_body.currentData(), joint=joint)

    def add(self) -> str | None:
        try:
            args = self.arguments()
            building.call(self.session.project, self.stack_of(), "create_body", args)
        except (FormError, ValueError) as e:
            self.message.emit(str(e))
            return None
        self.session.refresh()
        self.message.emit(f"Added {args['name']}" + (f" on {args['joint']['name']}" if "joint" in args else ""))
        self.added.emit(args["name"])
        self.joint_name.clear()
        self.reload()
        return args["name"]
