"""Switching projects in the real application: the views of a closed project are
disconnected from every shared model, so nothing reaches a closed database, no
Qt object is deleted twice, and the process exits 0 without a warning."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]
FILMS = ["doorway", "marble_run", "dog_paper", "doorway-single-pass", "marble_run-single-pass"]


def test_five_projects_opened_in_a_row_with_settings_between_exit_cleanly(tmp_path):
    folders = []
    for name in FILMS:
        shutil.copytree(ROOT / "projects" / name, tmp_path / name)
        folders.append(str(tmp_path / name))
    folders.append(folders[0])                       # and back to the first
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), QT_FATAL_WARNINGS="0")
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "ui_switch_script.py"), *folders],
                         capture_output=True, text=True, timeout=150, env=env, cwd=tmp_path)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    opened = [ln for ln in run.stdout.splitlines() if ln.startswith("opened")]
    assert [ln.split()[1] for ln in opened] == [Path(f).name for f in folders]
    assert all(ln.split()[2] == "True" for ln in opened)
    assert run.stdout.count("settings closed") == 4
    for bad in ("Traceback", "Cannot operate on a closed database", "already deleted",
                "QObject", "Segmentation"):
        assert bad not in run.stderr, run.stderr[-3000:]
