"""The installed app's entry point: which Blender worker it picks, what it says when there is
none, the clean library path it hands to children, and its Python mode for agent code."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "installers"))
import launch  # noqa: E402


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A fake /opt/keypose-studio whose app is 'frozen', a fresh home and no settings."""
    root = tmp_path / "opt" / "keypose-studio"
    (root / "app").mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(root / "app" / "keypose-studio"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KEYPOSE_SETTINGS", str(tmp_path / "home" / "settings.json"))
    for key in ("KEYPOSE_BLENDER_PYTHON", "KEYPOSE_BLENDER_BINARY"):
        monkeypatch.setenv(key, "")      # recorded, so whatever choose_worker sets is undone after the test
        monkeypatch.delenv(key)
    return root


def make_python(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_install_root_is_two_levels_above_the_frozen_executable(installed):
    assert launch.install_root() == installed.resolve()


def test_shipped_worker_is_chosen_when_the_user_chose_none(installed, monkeypatch, capsys):
    shipped = make_python(installed / "blender-env" / "bin" / "python")
    launch.choose_worker("render")
    import os
    assert os.environ["KEYPOSE_BLENDER_PYTHON"] == str(shipped.resolve())
    assert capsys.readouterr().err == ""


def test_the_users_blender_binary_wins_over_the_shipped_worker(installed, tmp_path, monkeypatch):
    make_python(installed / "blender-env" / "bin" / "python")
    blender = make_python(tmp_path / "blender-5.0" / "blender")
    Path(tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"blender_binary": str(blender)}))
    launch.choose_worker("render")
    import os
    assert "KEYPOSE_BLENDER_PYTHON" not in os.environ


def test_a_worker_made_in_the_users_home_is_found(installed, tmp_path):
    user_env = make_python(tmp_path / "home" / ".local" / "share" / "keypose-studio" / "blender-env" / "bin" / "python")
    launch.choose_worker("selftest")
    import os
    assert os.environ["KEYPOSE_BLENDER_PYTHON"] == str(user_env)


def test_no_worker_says_what_is_missing_and_how_to_get_it(installed, tmp_path, capsys):
    launch.choose_worker("open")
    err = capsys.readouterr().err
    assert "the Blender render worker is missing" in err
    assert str(installed.resolve() / "blender-env" / "bin" / "python") in err
    assert str(tmp_path / "home" / "settings.json") in err
    assert "share/blender.lock" in err and '"blender_binary"' in err
    launch.choose_worker("info")          # commands that never render stay quiet
    assert capsys.readouterr().err == ""


def test_children_get_the_users_library_path_not_the_bundles(installed, monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/keypose-studio/app/_internal:/usr/local/cuda/lib64")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/local/cuda/lib64")
    launch.restore_library_path()
    import os
    assert os.environ["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64"
    assert "LD_LIBRARY_PATH_ORIG" not in os.environ
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/keypose-studio/app/_internal")
    launch.restore_library_path()      # the user had none: children get none
    assert "LD_LIBRARY_PATH" not in os.environ


def run_launch(*args, **kw):
    return subprocess.run([sys.executable, str(ROOT / "installers" / "launch.py"), *args],
                          capture_output=True, text=True, timeout=60, **kw)


def test_python_mode_runs_code_like_the_agent_sandbox_calls_it(tmp_path):
    r = run_launch("-I", "-c", "import sys, numpy; print(sys.argv, numpy.add(2, 3))", str(tmp_path), "part.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"['-c', '{tmp_path}', 'part.py'] 5"
    r = run_launch("-m", "json.tool", "--compact", input='{"a":  [1,  2]}')
    assert r.stdout.strip() == '{"a":[1,2]}'


def test_version_goes_to_the_studio_cli():
    from studio import __version__
    r = run_launch("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"studio {__version__}"


def test_first_run_opens_the_users_copy_of_the_example_and_never_overwrites_it(installed, tmp_path):
    from studio.store.project import Project
    for name in ("aaa", "doorway"):
        Project.create(installed / "projects" / name, name=name).close()
    assert launch.studio_argv([]) == ["open", str(tmp_path / "home" / "KeyposeStudio" / "examples" / "doorway")]
    copy = tmp_path / "home" / "KeyposeStudio" / "examples" / "doorway" / "studio.db"
    copy.write_bytes(b"the user's edits")
    assert launch.studio_argv([])[0] == "open"
    assert copy.read_bytes() == b"the user's edits"


def test_a_project_folder_alone_opens_it_and_commands_pass_through(installed, tmp_path):
    from studio.store.project import Project
    Project.create(tmp_path / "mine", name="mine").close()
    assert launch.studio_argv([str(tmp_path / "mine")]) == ["open", str(tmp_path / "mine")]
    assert launch.studio_argv(["info", str(tmp_path / "mine")]) == ["info", str(tmp_path / "mine")]
    assert launch.studio_argv([str(tmp_path)]) == [str(tmp_path)]    # not a project: the CLI says so
