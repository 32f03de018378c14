"""Shared fixtures. GUI tests are marked `gui` and run under Xvfb (pytest-xvfb)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))


@pytest.fixture
def tmp_project(tmp_path):
    from studio.store.project import Project
    p = Project.create(tmp_path / "proj", name="test")
    yield p
    p.close()
