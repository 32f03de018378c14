"""A form made from a JSON schema: one row per property, its default shown.

A choice (`enum`) is a drop-down; a yes/no a check box; a number, a word or a
short list of numbers a text field ("0.2, 0.2, 0.5"); anything deeper (lists
of objects, maps) a text field of JSON, its shape in the placeholder. Nothing
is clamped or guessed: `values()` reads every field, checks the whole object
against the schema, and raises `FormError` naming the field ("blend: -3 is
less than the minimum of 0"), which the form also shows in red beside it. A
field left at its default is left out, so the tool's own default applies.
"""
from __future__ import annotations

import json

import jsonschema
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QLineEdit, QWidget

UNSET = "(not set)"


class FormError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


def _flat_numbers(prop: dict) -> bool:
    items = prop.get("items", {})
    return prop.get("type") == "array" and isinstance(items, dict) and items.get("type") in ("number", "integer")


def _text(value) -> str:
    if isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}"
    return "" if value is None else str(value)


def _kind(prop: dict) -> str:
    if "enum" in prop:
        return "choice"
    t = prop.get("type")
    if t == "boolean":
        return "flag"
    if t in ("number", "integer", "string"):
        return t
    if _flat_numbers(prop):
        return "numbers"
    return "json"


class SchemaForm(QWidget):
    """The fields of one object schema; `values()` the checked object."""

    def __init__(self, schema: dict, values: dict | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.schema = schema
        self.props: dict = dict(schema.get("properties", {}))
        self.required = set(schema.get("required", []))
        self.fields: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        lay = self.form = QFormLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        for name, prop in self.props.items():
            w = self._field(name, prop)
            self.fields[name] = w
            label = QLabel(name + (" *" if name in self.required else ""))
            label.setToolTip(prop.get("description", ""))
            w.setToolTip(prop.get("description", ""))
            self.labels[name] = label
            lay.addRow(label, w)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d1453b")
        lay.addRow(self.error)
        if not self.props:
            lay.insertRow(0, QLabel("<i>no parameters</i>"))
        self.set_values(values or {})

    def _field(self, name: str, prop: dict) -> QWidget:
        kind = _kind(prop)
        if kind == "choice":
            w = QComboBox()
            if "default" not in prop and name not in self.required:
                w.addItem(UNSET, None)
            for v in prop["enum"]:
                w.addItem(str(v) + (" (default)" if prop.get("default") == v else ""), v)
            return w
        if kind == "flag":
            return QCheckBox()
        w = QLineEdit()
        if "default" not in prop:
            shape = {"numbers": "numbers, comma separated", "json": "JSON " + self._shape(prop)}.get(kind, "")
            w.setPlaceholderText("required" if name in self.required else (shape or "tool's default"))
        return w

    @staticmethod
    def _shape(prop: dict) -> str:
        t = prop.get("type")
        if t == "array":
            return "[…]"
        if t == "object":
            return "{…}"
        return ""

    # ---- reading and writing ------------------------------------------------
    def set_values(self, values: dict) -> None:
        """Show `values`; a field they leave out shows its default."""
        for name, prop in self.props.items():
            value = values.get(name, prop.get("default"))
            w = self.fields[name]
            if isinstance(w, QComboBox):
                i = w.findData(value)
                w.setCurrentIndex(i if i >= 0 else 0)
            elif isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            else:
                w.setText(_text(value))
        self.show_error(None)

    def set_text(self, name: str, text: str) -> None:
        """Type into a text field, as a person would (tests, and forms that fill one field)."""
        self.fields[name].setText(text)

    def raw_values(self) -> dict:
        """Every field read as typed (text parsed), defaults left out; FormError on unreadable text."""
        out = {}
        for name, prop in self.props.items():
            w = self.fields[name]
            if isinstance(w, QComboBox):
                value = w.currentData()
                if value is None:
                    continue
            elif isinstance(w, QCheckBox):
                value = w.isChecked()
            else:
                text = w.text().strip()
                if not text:
                    continue
                value = self._parse(name, prop, text)
            if "default" in prop and value == prop["default"]:
                continue
            out[name] = value
        return out

    def _parse(self, name: str, prop: dict, text: str):
        kind = _kind(prop)
        try:
            if kind == "string":
                return text
            if kind in ("number", "integer"):
                v = float(text)
                if kind == "integer":
                    if v != int(v):
                        raise FormError(name, f"expected a whole number, got {text!r}")
                    return int(v)
                return v
            if kind == "numbers":
                parts = [p for p in text.replace("[", "").replace("]", "").replace(",", " ").split()]
                as_int = prop.get("items", {}).get("type") == "integer"
                return [int(p) if as_int else float(p) for p in parts]
            return json.loads(text)
        except FormError:
            raise
        except (ValueError, json.JSONDecodeError):
            want = {"number": "a number", "integer": "a whole number", "numbers": "numbers separated by commas",
                    "json": "JSON"}.get(kind, "a value")
            raise FormError(name, f"expected {want}, got {text!r}") from None

    def values(self) -> dict:
        """The checked object; FormError naming the first field that does not hold."""
        try:
            out = self.raw_values()
            full = {**{k: p["default"] for k, p in self.props.items() if "default" in p}, **out}
            e = jsonschema.exceptions.best_match(jsonschema.validators.validator_for(self.schema)(
                self.schema).iter_errors(full))
            if e is not None:
                where = "".join(f"[{p}]" if isinstance(p, int) else (p if i == 0 else f".{p}")
                                for i, p in enumerate(e.absolute_path))
                if not where and e.validator == "required":     # a required field left empty: name it
                    where = next((r for r in self.schema.get("required", []) if r not in full), "")
                raise FormError(where, e.message)
        except FormError as e:
            self.show_error(e)
            raise
        self.show_error(None)
        return out

    def show_error(self, e: FormError | None) -> None:
        for name, label in self.labels.items():
            bad = e is not None and (e.field == name or e.field.startswith(name + ".") or
                                     e.field.startswith(name + "["))
            label.setStyleSheet("color: #d1453b; font-weight: bold" if bad else "")
        self.error.setText("" if e is None else str(e))
