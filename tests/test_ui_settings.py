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
    assert saved["unsandboxed_agent_code"] is False       # agent code only behind the sandbox unless opted in
    again = QtSettings()
    qtbot.addWidget(again)
    assert again.fields["model_name"].text() == "qwen3" and again.engine.currentText() == "CYCLES"


def test_test_connection_fills_in_what_the_endpoint_supports_and_saves_the_profile(qtbot, tmp_path, monkeypatch):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from chat_server import ChatServer
    from PySide6.QtCore import Qt
    path = tmp_path / "settings.json"
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(path))
    monkeypatch.setenv("STUDIO_TEST_KEY", "sk-secret-dialog-value")
    probes = [{"content": "ready"}, {"content": '{"tool_calls": [{"name": "report_ready", "arguments": {"ready": true}}]}'},
              {"content": '{"ready": true}'}]
    with ChatServer(probes, habits={"tools": "model does not support tools", "pieces": 1,
                                    "models": ["qwen3:4b"]}) as chat:
        d = QtSettings()
        qtbot.addWidget(d)
        d.profile.setCurrentText("local-qwen")
        d.fields["model_base_url"].setText(chat.base_url)
        d.fields["model_name"].setText("qwen3:4b")
        d.fields["api_key_env"].setText("STUDIO_TEST_KEY")
        d.prices["input_per_million"].setValue(0.5)
        assert d.caps["tools"].currentText() == "not found yet"
        d.show()
        qtbot.mouseClick(d.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: d.test_button.isEnabled(), timeout=10_000)
        qtbot.wait(50)
        shot = Path(__file__).resolve().parents[1] / ".pytest_cache" / "settings-test-connection.png"
        d.grab().save(str(shot))
    shown = d.test_result.text().splitlines()
    assert shown.pop(0) == "model: listed (/v1/models lists qwen3:4b)"
    assert shown.pop(0).startswith("context: unknown (")
    assert shown[0].startswith("streaming: yes (5 text chunk(s)")
    assert shown[1] == ("tools: no (the server refused tools; they go through the prompt as JSON in text, "
                        "and the model used them)")
    assert shown[2] == "structured output: yes (response_format json_schema accepted)"
    assert d.caps["tools"].currentText() == "no" and d.caps["structured_output"].currentText() == "yes"
    auth = {k.lower(): v for k, v in chat.requests[0]["headers"].items()}["authorization"]
    assert auth == "Bearer sk-secret-dialog-value"
    d.caps["structured_output"].setCurrentText("no")      # a person overrides what was found
    d.save()
    saved = json.loads(path.read_text())
    assert saved["endpoint"] == "local-qwen"
    assert saved["endpoints"]["local-qwen"] == {
        "base_url": chat.base_url, "model": "qwen3:4b", "api_key_env": "STUDIO_TEST_KEY", "timeout": 120.0,
        "capabilities": {"tools": False, "structured_output": False, "streaming": True},
        "prices": {"input_per_million": 0.5}}
    assert "sk-secret-dialog-value" not in path.read_text()


def test_test_connection_to_a_closed_port_says_so(qtbot, tmp_path, monkeypatch):
    import socket
    from PySide6.QtCore import Qt
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(tmp_path / "settings.json"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    d = QtSettings()
    qtbot.addWidget(d)
    d.fields["model_base_url"].setText(f"http://127.0.0.1:{port}/v1")
    qtbot.mouseClick(d.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: d.test_button.isEnabled(), timeout=10_000)
    assert d.test_result.text().startswith(f"cannot reach the model at http://127.0.0.1:{port}/v1")
    assert d.caps["tools"].currentText() == "not found yet"
