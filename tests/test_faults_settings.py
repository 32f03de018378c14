"""A settings file that does not parse is kept aside, the person is told, and the
defaults are used; it is never silently replaced."""
from __future__ import annotations

import json
import stat

from faults_files import studio
from studio.store.settings import DEFAULTS, load_settings, save_settings

BROKEN = '{"render_engine": "CYCLES", "model_name": "local-llm",\n'     # cut short by a crash


def test_a_broken_settings_file_is_kept_as_bad_and_the_defaults_are_used(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text(BROKEN)
    assert studio("new", tmp_path / "p").returncode == 0
    env = {"KEYPOSE_SETTINGS": str(settings)}
    out = studio("jobs", tmp_path / "p", "list", env=env)
    assert out.returncode == 0, out.stderr
    kept = list(tmp_path.glob("settings.json.bad-*"))
    assert len(kept) == 1 and kept[0].read_text() == BROKEN
    assert not settings.exists()
    assert "does not parse" in out.stderr and str(kept[0]) in out.stderr and "default settings" in out.stderr
    assert "Traceback" not in out.stderr
    again = studio("jobs", tmp_path / "p", "list", env=env)       # told once: the file is out of the way
    assert again.returncode == 0 and again.stderr == ""


def test_loading_a_settings_file_holding_a_list_uses_defaults(tmp_path, monkeypatch, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text("[1, 2, 3]")
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(settings))
    loaded = load_settings()
    assert loaded["render_engine"] == DEFAULTS["render_engine"] and loaded["model_name"] == DEFAULTS["model_name"]
    err = capsys.readouterr().err
    assert "expected a JSON object, got list" in err
    assert [p.read_text() for p in tmp_path.glob("settings.json.bad-*")] == ["[1, 2, 3]"]


def test_saving_over_a_broken_file_keeps_it_aside_and_writes_only_for_the_user(tmp_path, monkeypatch, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text(BROKEN)
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(settings))
    save_settings({"render_engine": "CYCLES"})
    assert json.loads(settings.read_text()) == {"render_engine": "CYCLES"}
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert [p.read_text() for p in tmp_path.glob("settings.json.bad-*")] == [BROKEN]
    assert "does not parse" in capsys.readouterr().err
