"""The settings dialog writes the user's settings file, never a key, never into the project."""
from __future__ import annotations

import json

import pytest

from studio.ui.qt_settings import QtSettings

pytestmark = pytest.mark.gui


def test_settings_saved_to_the_user_file_without_the_key(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(path))
    monkeypatch.setenv("STUDIO_TEST_KEY", "sk-secret-value")
    d = QtSettings()
    qtbot.addWidget(d)
    assert d.engine.currentText() == "BLENDER_WORKBENCH"
    d.fields["model_base_url"].setText("http://127.0.0.1:11434/v1")
    d.fields["model_name"].setText("qwen3")
    d.fields["api_key_env"].setText("STUDIO_TEST_KEY")
    d.fields["farm_address"].setText("http://127.0.0.1:8265")
    d.engine.setCurrentText("CYCLES")
    d.concurrency.setValue(2)
    assert d.key_status.text() == "$STUDIO_TEST_KEY is set"
    d.save()
    assert d.result() == QtSettings.DialogCode.Accepted
    saved = json.loads(path.read_text())
    assert saved["model_base_url"] == "http://127.0.0.1:11434/v1" and saved["model_name"] == "qwen3"
    assert saved["render_engine"] == "CYCLES" and saved["local_concurrency"] == 2
    assert saved["farm_address"] == "http://127.0.0.1:8265" and saved["api_key_env"] == "STUDIO_TEST_KEY"
    assert "sk-secret-value" not in path.read_text() and "api_key" not in saved
    again = QtSettings()
    qtbot.addWidget(again)
    assert again.fields["model_name"].text() == "qwen3" and again.engine.currentText() == "CYCLES"
