"""Shared fixtures. GUI tests are marked `gui` and run under Xvfb (pytest-xvfb)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))


@pytest.fixture(autouse=True, scope="session")
def reviewer_keys(tmp_path_factory):
    """Reviewer keys live in a temporary user config, never in the tester's own."""
    config = tmp_path_factory.mktemp("config")
    old = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(config)
    yield config / "keypose-studio" / "keys"
    if old is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = old


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where GUI tests save their screenshots: KEYPOSE_SCREENSHOTS if set, to be looked at."""
    d = Path(os.environ.get("KEYPOSE_SCREENSHOTS") or tmp_path / "shots")
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def tmp_project(tmp_path):
    from studio.store.project import Project
    p = Project.create(tmp_path / "proj", name="test")
    yield p
    p.close()


@pytest.fixture(autouse=True)
def no_leaked_windows(request):
    """A GUI test must close every top-level window it opened (qtbot.addWidget does)."""
    if request.node.get_closest_marker("gui") is None:
        yield
        return
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    before = {id(w) for w in app.topLevelWidgets()} if app else set()
    yield
    app = QApplication.instance()
    if app is None:
        return
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    leaked = [w for w in app.topLevelWidgets() if id(w) not in before and w.isVisible()]
    assert not leaked, f"the test left windows open: {[type(w).__name__ for w in leaked]}"


@pytest.fixture(autouse=True)
def own_settings_file(tmp_path_factory, monkeypatch):
    """Each test its own settings file: what the client finds about an endpoint is written there."""
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(tmp_path_factory.mktemp("settings") / "settings.json"))
