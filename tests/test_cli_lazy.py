"""`studio` imports only the module of the sub-command it runs, and says the same as the full parser."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from studio.cli import build_parser
from studio.commands import COMMANDS


def subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_command_table_matches_what_the_modules_register():
    full = subparsers(build_parser())
    listed = [(a.dest, a.help) for a in full._choices_actions]
    assert listed == [(name, help_) for name, _, help_ in COMMANDS]


def test_studio_help_is_the_same_without_importing_the_commands():
    assert build_parser([]).format_help() == build_parser().format_help()
    assert build_parser(["--help"]).format_help() == build_parser().format_help()


@pytest.mark.parametrize("name", [row[0] for row in COMMANDS])
def test_each_sub_command_help_is_the_same_when_loaded_alone(name):
    full = subparsers(build_parser()).choices[name]
    alone = subparsers(build_parser([name])).choices[name]
    assert alone.format_help() == full.format_help()
    for action in (a for a in full._actions if isinstance(a, argparse._SubParsersAction)):
        other = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction))
        for sub_name, p in action.choices.items():
            assert other.choices[sub_name].format_help() == p.format_help()


def test_verify_starts_without_the_heavy_libraries(tmp_path):
    code = ("import sys; from studio.cli import main; code = main(['verify', sys.argv[1]]); "
            "heavy = {'trimesh', 'scipy', 'build123d', 'ray', 'openai', 'PySide6', 'vtk', 'mujoco', 'fcl'}; "
            "print(code, sorted({m.split('.')[0] for m in sys.modules} & heavy))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "absent.glb")], capture_output=True, text=True)
    assert out.stdout.split() == ["2", "[]"], out.stdout + out.stderr
    assert "absent.glb: no such project folder or .glb file" in out.stderr


def test_open_says_in_one_line_what_is_missing_before_any_window(tmp_path):
    """A missing folder is bad input (2); a machine without a display lacks something (3); no Qt abort."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    absent = subprocess.run([sys.executable, "-m", "studio", "open", str(tmp_path / "absent")],
                            capture_output=True, text=True, env=env)
    assert absent.returncode == 2 and absent.stderr.strip() == f"studio: {tmp_path / 'absent'}: no such project folder"
    (tmp_path / "proj").mkdir()
    headless = subprocess.run([sys.executable, "-m", "studio", "open", str(tmp_path / "proj")],
                              capture_output=True, text=True, env=env)
    assert headless.returncode == 3 and len(headless.stderr.strip().splitlines()) == 1
    assert "no display" in headless.stderr and "xvfb-run" in headless.stderr
