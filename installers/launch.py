"""The installed app's entry point: `keypose-studio [COMMAND ...]`, the `studio` CLI frozen.

With no command it opens the studio window on the user's copy of the example
project (copied from <install>/projects to ~/KeyposeStudio/examples on first
run: the install folder is read-only); with a folder alone it opens that
folder (the .desktop entry passes one). Before running a command that needs
Blender it finds the render worker: the user's settings (blender_binary or
blender_python) win; otherwise the worker environment shipped next to the app
(<install>/blender-env, a Python 3.11 venv with bpy 5.0.1) is used; if neither
is there, it says what is missing and how to get it, once per command.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

NEEDS_WORKER = {"open", "render", "selftest", "demo", "export", "board"}
PYTHON_FLAGS = {"-I", "-u", "-B", "-E", "-s", "-S"}


def install_root() -> Path:
    """/opt/keypose-studio when frozen (the app lives in <root>/app/), else the checkout."""
    if getattr(sys, "frozen", False):
        return Path(sys.executable).resolve().parent.parent
    return Path(__file__).resolve().parent.parent


def bundled_worker_python(root: Path) -> Path:
    return root / "blender-env" / "bin" / "python"


def missing_worker_message(root: Path, settings_file: Path) -> str:
    lock = root / "share" / "blender.lock"
    return (
        "keypose-studio: the Blender render worker is missing.\n"
        f"  looked for: {bundled_worker_python(root)} (not found)\n"
        f"  and for blender_binary / blender_python in {settings_file} (not set)\n"
        "  renders, stills and exports will fail until one of these is there:\n"
        "  - reinstall the keypose-studio package built with the worker (the default build), or\n"
        f"  - create the worker (Python 3.11 + bpy 5.0.1) with uv:\n"
        f"      uv venv -p python3.11 ~/.local/share/keypose-studio/blender-env\n"
        f"      uv pip install -p ~/.local/share/keypose-studio/blender-env/bin/python -r {lock}\n"
        f"    and set \"blender_python\": \"~/.local/share/keypose-studio/blender-env/bin/python\" in {settings_file}, or\n"
        f"  - set \"blender_binary\": \"/path/to/blender\" (Blender 5.0) in {settings_file}"
    )


def choose_worker(command: str | None) -> None:
    """Point the studio at the shipped worker unless the user chose one; say so if there is none."""
    from studio.store.settings import load_settings, settings_path

    try:
        settings = load_settings()
    except ValueError as e:
        print(f"keypose-studio: {e}", file=sys.stderr)
        return
    if settings.get("blender_binary") or settings.get("blender_python"):
        return
    root = install_root()
    shipped = bundled_worker_python(root)
    user_env = Path.home() / ".local" / "share" / "keypose-studio" / "blender-env" / "bin" / "python"
    for candidate in (shipped, user_env):
        if candidate.exists():
            os.environ["KEYPOSE_BLENDER_PYTHON"] = str(candidate)
            return
    if getattr(sys, "frozen", False) and command in NEEDS_WORKER:
        print(missing_worker_message(root, settings_path()), file=sys.stderr)


def restore_library_path() -> None:
    """Give child processes (Blender, ffmpeg) the user's LD_LIBRARY_PATH, not the bundle's.

    PyInstaller's bootloader prepends the app's folder to LD_LIBRARY_PATH and keeps
    the original in LD_LIBRARY_PATH_ORIG; a Blender worker that inherited the bundle's
    libpython or libstdc++ could fail to start.
    """
    if not getattr(sys, "frozen", False):
        return
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original:
        os.environ["LD_LIBRARY_PATH"] = original
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)


def examples_home() -> Path:
    return Path.home() / "KeyposeStudio" / "examples"


def first_example(root: Path) -> Path | None:
    """The user's copy of the shipped example (doorway first), made once and never overwritten."""
    import shutil

    shipped = sorted((root / "projects").glob("*/studio.db"), key=lambda p: (p.parent.name != "doorway", p))
    if not shipped:
        return None
    src = shipped[0].parent
    dest = examples_home() / src.name
    if not (dest / "studio.db").exists():
        try:
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("studio.db-wal", "studio.db-shm"))
        except OSError as e:
            print(f"keypose-studio: could not copy the example {src} to {dest}: {e}", file=sys.stderr)
            return None
        print(f"keypose-studio: your copy of the example project is {dest}", file=sys.stderr)
    return dest


def studio_argv(argv: list[str]) -> list[str]:
    """What the studio CLI gets: `open` on the example with no arguments, `open DIR` for a project folder alone."""
    if not argv:
        example = first_example(install_root()) if getattr(sys, "frozen", False) else None
        return ["open", str(example)] if example else ["open"]
    if len(argv) == 1 and (Path(argv[0]) / "studio.db").is_file():
        return ["open", argv[0]]
    return argv


def run_as_python(argv: list[str]) -> int:
    """`keypose-studio [-I] -c CODE ...` or `-m MODULE ...`: the bundle's Python, for
    code the studio runs in a child process with `sys.executable` (agent CAD scripts)."""
    import runpy

    while argv and argv[0] in PYTHON_FLAGS:
        argv = argv[1:]
    if len(argv) < 2 or argv[0] not in ("-c", "-m"):
        print("keypose-studio: expected -c CODE or -m MODULE", file=sys.stderr)
        return 2
    if argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    restore_library_path()
    if argv and (argv[0] in PYTHON_FLAGS or argv[0] in ("-c", "-m")):
        return run_as_python(argv)
    argv = studio_argv(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    choose_worker(command)
    from studio.cli import main as studio_main
    return studio_main(argv)


if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()
    sys.exit(main())
