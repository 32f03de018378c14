"""The layer contracts: only studio/ui touches Qt, only studio/blender touches bpy."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    exe = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"Contracts: (\d+) kept, 0 broken", out.stdout)
    assert int(re.search(r"Contracts: (\d+) kept", out.stdout).group(1)) >= 3


def test_no_qt_or_bpy_import_outside_their_packages():
    offenders = []
    for path in (ROOT / "studio").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        if not rel.startswith("studio/ui/") and re.search(r"^\s*(from|import)\s+(PySide6|pyvistaqt|qtpy)", text, re.M):
            offenders.append(rel)
        if not rel.startswith("studio/blender/") and re.search(r"^\s*(from|import)\s+(bpy|mathutils)\b", text, re.M):
            offenders.append(rel)
    assert offenders == []


def test_model_packages_import_without_qt():
    code = ("import sys, studio.scene.kinematics, studio.store.project, studio.timeline.storyboard, "
            "studio.checks.report, studio.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyvistaqt', 'bpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
