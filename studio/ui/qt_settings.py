"""Settings: the model endpoint and model, the Blender environment or binary,
the render engine and the farm address. They are the user's (studio.store.settings),
never the project's; the API key is named by its environment variable and
never shown, typed or stored here.

The model endpoint can be saved as a named profile (studio.store.endpoints)
with what it supports; "Test connection" asks the endpoint (in a thread, the
window stays live) and fills in what it found, which a person may change."""
from __future__ import annotations

import os
import threading

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QWidget)

from studio.store.endpoints import Endpoint, profiles, save_profile
from studio.store.settings import load_settings, save_settings, settings_path

ENGINES = ("BLENDER_WORKBENCH", "CYCLES")
SUPPORT = (("not found yet", None), ("yes", True), ("no", False))
CAPS = (("tools", "Tool calling"), ("structured_output", "Structured output"))


class _Relay(QObject):
    """Carries the connection test's result from its thread to the dialog."""
    done = Signal(object)
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
        self._profiles = profiles(values) if isinstance(values.get("endpoints"), dict) else {}
        self.profile = QComboBox()
        self.profile.setEditable(True)
        self.profile.addItems(["", *self._profiles])
        self.profile.lineEdit().setPlaceholderText("a name to save this endpoint as a profile (optional)")
        self.profile.setCurrentText(values.get("endpoint") or "")
        self.profile.currentTextChanged.connect(self._show_profile)
        form.addRow("Endpoint profile", self.profile)
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
            if key == "api_key_env":
                self.key_status = QLabel("")
                edit.textChanged.connect(self._show_key_status)
                form.addRow("", self.key_status)
                self._endpoint_rows(form)
        self.engine = QComboBox()
        self.engine.addItems(ENGINES)
        self.engine.setCurrentText(str(values.get("render_engine", ENGINES[0])))
        form.addRow("Render engine", self.engine)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 16)
        self.concurrency.setValue(int(values.get("local_concurrency", 1) or 1))
        form.addRow("Local render jobs at once", self.concurrency)
        self.unsandboxed = QCheckBox("where bubblewrap cannot run, run agent code without the OS sandbox (logged)")
        self.unsandboxed.setChecked(bool(values.get("unsandboxed_agent_code", False)))
        form.addRow("Agent code", self.unsandboxed)
        form.addRow("Saved in", QLabel(str(settings_path())))
        form.addRow(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._show_key_status()
        self._show_profile(self.profile.currentText())

    def _endpoint_rows(self, form: QFormLayout) -> None:
        self.caps: dict[str, QComboBox] = {}
        for key, label in CAPS:
            box = QComboBox()
            box.addItems([t for t, _ in SUPPORT])
            self.caps[key] = box
            form.addRow(label, box)
        prices = QHBoxLayout()
        self.prices: dict[str, QDoubleSpinBox] = {}
        for key, label in (("input_per_million", "in"), ("output_per_million", "out")):
            spin = QDoubleSpinBox()
            spin.setRange(0.0, 1000.0)
            spin.setDecimals(3)
            spin.setSpecialValueText("not set")
            spin.setPrefix(f"{label} ")
            self.prices[key] = spin
            prices.addWidget(spin)
        form.addRow("Price per million tokens", prices)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        form.addRow("", self.test_button)
        self.test_result = QLabel("")
        self.test_result.setWordWrap(True)
        self.test_result.setMinimumHeight(self.test_result.fontMetrics().lineSpacing() * 5)
        form.addRow("", self.test_result)
        self._relay = _Relay(self)
        self._relay.done.connect(self._show_test)
        self._streaming: bool | None = None
        self._test_thread: threading.Thread | None = None

    def _show_profile(self, name: str) -> None:
        ep = self._profiles.get(name)
        if ep is None:
            return
        self.fields["model_base_url"].setText(ep.base_url)
        self.fields["model_name"].setText(ep.model)
        self.fields["api_key_env"].setText(ep.api_key_env)
        for key, box in self.caps.items():
            box.setCurrentIndex([v for _, v in SUPPORT].index(ep.capabilities.get(key)))
        self._streaming = ep.capabilities.get("streaming")
        for key, spin in self.prices.items():
            spin.setValue(float(ep.prices.get(key) or 0.0))

    def endpoint(self) -> Endpoint:
        """The endpoint as the dialog shows it now."""
        caps = {key: SUPPORT[box.currentIndex()][1] for key, box in self.caps.items()}
        if self._streaming is not None:
            caps["streaming"] = self._streaming
        prices = {k: s.value() for k, s in self.prices.items() if s.value() > 0}
        return Endpoint(self.profile.currentText().strip() or "default", self.fields["model_base_url"].text().strip(),
                        self.fields["model_name"].text().strip(),
                        self.fields["api_key_env"].text().strip() or "OPENAI_API_KEY",
                        capabilities={k: v for k, v in caps.items() if v is not None}, prices=prices)

    def test_connection(self) -> None:
        """Ask the endpoint what it supports, away from the GUI thread."""
        ep = self.endpoint()
        if not ep.base_url:
            self.test_result.setText("no endpoint: fill in the base URL first")
            return
        self.test_button.setEnabled(False)
        self.test_result.setText(f"asking {ep.base_url} …")
        relay = self._relay

        def run() -> None:
            from studio.agent.client import ModelClient
            from studio.agent.endpoint_check import check_endpoint
            from studio.agent.errors import AgentError
            try:
                client = ModelClient(ep.base_url, ep.model, ep.api_key(), timeout=30.0, max_retries=0)
                result: object = check_endpoint(client)
            except AgentError as e:
                result = str(e)
            try:
                relay.done.emit(result)
            except RuntimeError:      # the dialog was closed meanwhile
                pass

        self._test_thread = threading.Thread(target=run, daemon=True)
        self._test_thread.start()

    def _show_test(self, result: object) -> None:
        self.test_button.setEnabled(True)
        if isinstance(result, str):
            self.test_result.setText(result)
            self.test_result.setStyleSheet("color: #d1453b")
            self.adjustSize()
            return
        self.test_result.setStyleSheet("")
        self.test_result.setText("\n".join(" ".join(line.split()) for line in result.lines()))
        for key, box in self.caps.items():
            box.setCurrentIndex([v for _, v in SUPPORT].index(result.capabilities.get(key)))
        self._streaming = result.capabilities.get("streaming")
        self.adjustSize()

    def _browse(self, edit: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose an executable")
        if path:
            edit.setText(path)

    def _show_key_status(self) -> None:
        var = self.fields["api_key_env"].text().strip() or "OPENAI_API_KEY"
        self.key_status.setText(f"${var} is set" if os.environ.get(var) else f"${var} is not set in this environment")

    def values(self) -> dict:
        out = {k: e.text().strip() for k, e in self.fields.items()}
        out["endpoint"] = self.profile.currentText().strip()
        out["render_engine"] = self.engine.currentText()
        out["local_concurrency"] = self.concurrency.value()
        out["unsandboxed_agent_code"] = self.unsandboxed.isChecked()
        return out

    def save(self) -> None:
        try:
            save_settings(self.values())
            if self.profile.currentText().strip():
                save_profile(self.endpoint(), make_active=True)
        except (OSError, ValueError) as e:
            self.error.setText(f"{settings_path()}: cannot save ({e})")
            return
        self.accept()
