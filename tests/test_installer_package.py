"""Fast checks of the installer's parts (the long freeze + .deb build is installers/build.sh,
and installers/smoke.sh runs the built package; neither is part of pytest)."""
from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALLERS = ROOT / "installers"
sys.path.insert(0, str(INSTALLERS))
import freeze_set  # noqa: E402


def spec_analysis_call() -> ast.Call:
    tree = ast.parse((INSTALLERS / "keypose-studio.spec").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Analysis"]
    assert len(calls) == 1
    return calls[0]


def test_spec_hidden_imports_are_the_vtk_studio_and_collada_lists():
    kw = {k.arg: ast.unparse(k.value) for k in spec_analysis_call().keywords}
    # and the COLLADA reader trimesh imports by name when a robot's description names a .dae mesh
    assert kw["hiddenimports"] == ("vtk_modules() + studio_modules() + "
                                   "['collada', 'lxml.etree', 'trimesh.exchange.dae']")
    assert kw["excludes"] == "EXCLUDES"
    assert kw["module_collection_mode"] == "{'studio': 'pyz+py'}"   # CAD part source hashes need the .py files
    spec = (INSTALLERS / "keypose-studio.spec").read_text()
    assert '"studio" / "blender"), "studio/blender")' in spec   # the worker ships as source


def test_vtk_hidden_imports_cover_rendering_and_exist():
    names = freeze_set.vtk_modules()
    for factory in ("vtkmodules.vtkRenderingOpenGL2", "vtkmodules.vtkInteractionStyle",
                    "vtkmodules.vtkRenderingFreeType", "vtkmodules.vtkRenderingUI",
                    "vtkmodules.util.data_model", "vtkmodules.util.numpy_support"):
        assert factory in names
    missing = [n for n in names if importlib.util.find_spec(n) is None]
    assert missing == [], f"hidden imports that VTK {__import__('vtkmodules').__version__} lacks: {missing}"
    assert len(names) == len(set(names))


def test_every_vtk_module_pyvista_loads_lazily_is_listed_or_deliberately_left_out():
    from pyvista import _vtk as lazy
    tables = {**lazy._CORE_MODULES, **lazy._PLOTTING_MODULES, **lazy._OPENGL_MODULES}
    names = set(freeze_set.vtk_modules())
    unlisted = sorted(f"vtkmodules.{m}" for m in tables if f"vtkmodules.{m}" not in names)
    assert all(n.startswith(freeze_set.VTK_UNUSED_PREFIXES) for n in unlisted), unlisted
    assert "vtkmodules.vtkIOExodus" in unlisted      # readers the studio never uses stay out


def test_excludes_leave_out_ray_and_the_all_in_one_vtk_but_not_what_the_app_imports():
    ex = set(freeze_set.EXCLUDES)
    assert {"ray", "tkinter", "pytest", "vtk", "studio.blender"} <= ex
    assert not ex & {"PySide6", "pyvista", "pyvistaqt", "build123d", "OCP", "trimesh", "numpy", "sklearn"}


def test_studio_modules_lists_commands_and_ui_but_never_the_blender_side():
    mods = freeze_set.studio_modules()
    assert {"studio.cli", "studio.commands.selftest", "studio.ui.app", "studio.jobs.worker_process"} <= set(mods)
    assert not [m for m in mods if m.startswith("studio.blender")]


def test_desktop_entry_is_valid_and_names_the_launcher_and_icon():
    path = INSTALLERS / "deb" / "keypose-studio.desktop"
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read(path)
    entry = cp["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Name"] == "Keypose Studio"
    assert entry["Exec"].split()[0] == "keypose-studio" == entry["TryExec"]
    assert (ROOT / "resources" / f"{entry['Icon']}.png").is_file()
    assert entry["Categories"].endswith(";") and "Graphics" in entry["Categories"].split(";")
    validate = shutil.which("desktop-file-validate")
    if validate:
        r = subprocess.run([validate, str(path)], capture_output=True, text=True)
        assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr


def test_icon_is_a_square_png_with_transparent_corners():
    from PIL import Image
    with Image.open(ROOT / "resources" / "keypose-studio.png") as img:
        assert img.size == (256, 256) and img.mode == "RGBA"
        assert img.getpixel((0, 0))[3] == 0 and img.getpixel((128, 128))[3] == 255
        assert len(img.getcolors(1 << 16)) > 20


def test_build_script_installs_the_launcher_desktop_entry_and_icon_where_the_desktop_looks():
    text = (INSTALLERS / "build.sh").read_text()
    for where in ('"$stage/usr/bin/keypose-studio"', '"$stage/usr/share/applications/"',
                  '"$stage/usr/share/icons/hicolor/256x256/apps/"', "dpkg-deb --root-owner-group"):
        assert where in text
    launcher = (INSTALLERS / "deb" / "launcher.sh").read_text()
    assert 'exec /opt/keypose-studio/app/keypose-studio "$@"' in launcher


@pytest.mark.parametrize("action", ["remove", "purge"])
def test_uninstall_removes_the_install_folder_and_keeps_users_projects(tmp_path, action):
    opt = tmp_path / "opt" / "keypose-studio"
    (opt / "blender-env" / "lib" / "__pycache__").mkdir(parents=True)
    (opt / "blender-env" / "lib" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (opt / "app").mkdir()
    (opt / "app" / "keypose-studio").write_text("binary")
    project = tmp_path / "home" / "artist" / "KeyposeStudio" / "doorway"
    project.mkdir(parents=True)
    (project / "studio.db").write_bytes(b"the user's work")
    settings = tmp_path / "home" / "artist" / ".config" / "keypose-studio" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{}")
    env = {**os.environ, "DPKG_ROOT": str(tmp_path)}
    for script in ("prerm", "postrm"):
        r = subprocess.run(["sh", str(INSTALLERS / "deb" / script), action], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert not opt.exists()
    assert (project / "studio.db").read_bytes() == b"the user's work"
    assert settings.read_text() == "{}"


def test_control_template_fills_every_field_dpkg_needs():
    text = (INSTALLERS / "deb" / "control.in").read_text()
    fields = dict(line.split(": ", 1) for line in text.splitlines() if line and not line.startswith(" "))
    assert {"Package", "Version", "Architecture", "Maintainer", "Description", "Depends", "Installed-Size"} <= set(fields)
    assert fields["Package"] == "keypose-studio" and fields["Architecture"] == "amd64"


def test_libraries_loaded_by_path_are_collected():
    from PyInstaller.utils.hooks import collect_dynamic_libs
    spec = (INSTALLERS / "keypose-studio.spec").read_text()
    assert "collect_dynamic_libs(package)" in spec and "BINARY_PACKAGES" in spec
    found = {p: [Path(src).name for src, _ in collect_dynamic_libs(p)] for p in freeze_set.BINARY_PACKAGES}
    assert "lib3mf.so" in found["lib3mf"]                 # build123d imports lib3mf, which dlopens it
    assert "libglfw.so" in found["glfw"]                  # mujoco imports glfw
    assert "libsensor.so" in found["mujoco"]              # MuJoCo loads its plugin folder at import
