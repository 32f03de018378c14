"""Settings: the model endpoint and model, the Blender environment or binary,
the render engine and the farm address. They are the user's (studio.store.settings),
never the project's; the API key is named by its environment variable and
never shown, typed or stored here."""
from __future__ import annotations

import os

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QSpinBox, QWidget)

from studio.store.settings import load_settings, save_settings, settings_path

ENGINES = ("BLENDER_WORKBENCH", "CYCLES")
TEXT_FIELDS = (("model_base_url", "Model endpoint (base URL)", "empty: no model; stored plans and the offline repairer"),
               ("model_name", "Model", ""),
               ("api_key_env", "API key from environment variable", "the key itself is never stored here"),
               ("blender_python", "Blender Python (.venv-blender)", "empty: the studio's .venv-blender"),
               ("blender_binary", "Blender binary", "a Blender executable, used instead when set"),
               ("farm_address", "Farm address (Ray dashboard)", "e.g. http://127.0.0.1:8265; empty: this machine"))


class QtSettings(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.error = QLabel("")
        self.error.setStyleSheet("color: #d1453b")
        try:
            values = load_settings()
        except ValueError as e:      # a broken settings file: say so, start from defaults
            self.error.setText(str(e))
            from studio.store.settings import DEFAULTS
            values = dict(DEFAULTS)
        form = QFormLayout(self)
        self.fields: dict[str, QLineEdit] = {}
        for key, label, hint in TEXT_FIELDS:
            edit = QLineEdit(str(values.get(key, "") or ""))
            edit.setPlaceholderText(hint)
            self.fields[key] = edit
            if key in ("blender_python", "blender_binary"):
                row = QHBoxLayout()
                row.addWidget(edit, 1)
                browse = QPushButton("…")
                browse.clicked.connect(lambda _=False, e=edit: self._browse(e))
                row.addWidget(browse)
                form.addRow(label, row)
            else:
                form.addRow(label, edit)
        self.key_status = QLabel("")
        self.fields["api_key_env"].textChanged.connect(self._show_key_status)
        form.addRow("", self.key_status)
        self.engine = QComboBox()
        self.engine.addItems(ENGINES)
        self.engine.setCurrentText(str(values.get("render_engine", ENGINES[0])))
        form.addRow("Render engine", self.engine)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 16)
        self.concurrency.setValue(int(values.get("local_concurrency", 1) or 1))
        form.addRow("Local render jobs at once", self.concurrency)
        form.addRow("Saved in", QLabel(str(settings_path())))
        form.addRow(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._show_key_status()

    def _browse(self, edit: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose an executable")
        if path:
            edit.setText(path)

    def _show_key_status(self) -> None:
        var = self.fields["api_key_env"].text().strip() or "OPENAI_API_KEY"
        self.key_status.setText(f"${var} is set" if os.environ.get(var) else f"${var} is not set in this environment")

    def values(self) -> dict:
        out = {k: e.text().strip() for k, e in self.fields.items()}
        out["render_engine"] = self.engine.currentText()
        out["local_concurrency"] = self.concurrency.value()
        return out

    def save(self) -> None:
        try:
            save_settings(self.values())
        except OSError as e:
            self.error.setText(f"{settings_path()}: cannot save ({e})")
            return
        self.accept()
