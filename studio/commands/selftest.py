"""`studio selftest PATH`: does this installation work end to end, without a display?

It opens a copy of a project (the installed examples are read-only, and a test
must not change a person's project), verifies one storyboard state, renders one
still through the Blender worker, and prints each step with what it found.
Exit 0 when every step worked, 1 when one failed, 3 when the machine lacks
something (no Blender worker), with the step that says what.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from studio import __version__

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED, EXIT_OK, CommandError

SKIP = ("jobs", "renders", "exports", "studio.db-wal", "studio.db-shm")


class StepFailed(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILED):
        super().__init__(message)
        self.code = code


def register(sub) -> None:
    p = sub.add_parser("selftest", help="check this installation: open a project copy, verify a state, render a still")
    p.add_argument("path", type=Path, help="a project folder (it is copied, never changed)")
    p.add_argument("--state", help="the storyboard state to verify and render (default: the first)")
    p.add_argument("--resolution", default="320x180", help="still size WxH (default 320x180)")
    p.add_argument("--work", type=Path, help="keep the project copy and the still in this folder")
    p.add_argument("--no-render", action="store_true", help="skip the Blender still")
    p.set_defaults(func=cmd_selftest)


def cmd_selftest(args) -> int:
    if not (args.path / "studio.db").is_file():
        raise CommandError(f"{args.path}: not a project folder (expected {args.path / 'studio.db'})", EXIT_BAD_INPUT)
    resolution = _resolution(args.resolution)
    work = args.work or Path(tempfile.mkdtemp(prefix="keypose-selftest-"))
    copy = work / args.path.resolve().name
    frozen = " (installed app)" if getattr(sys, "frozen", False) else ""
    print(f"studio {__version__}{frozen}, python {sys.version.split()[0]}")
    code = EXIT_OK
    try:
        project = _step("copy", lambda: _copy_project(args.path, copy))
        with project:
            state_id = _step("open", lambda: _open(project, args.state))
            _step("verify", lambda: _verify(project, state_id))
            if not args.no_render:
                command = _step("worker", _worker)
                _step("render", lambda: _render(project, state_id, resolution, command))
    except StepFailed as e:
        code = e.code
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print("selftest: " + ("every step worked" if code == EXIT_OK else "FAILED (see the step above)"))
    return code


def _step(name: str, fn):
    """Run one step, print `ok`/`FAIL` with its time and what it found."""
    t0 = time.perf_counter()
    try:
        result = fn()
    except StepFailed as e:
        print(f"  FAIL {name:<7} {e}  ({time.perf_counter() - t0:.2f} s)")
        raise
    except Exception as e:   # a crash in a step is that step's failure, reported, not a traceback
        print(f"  FAIL {name:<7} {type(e).__name__}: {e}  ({time.perf_counter() - t0:.2f} s)")
        raise StepFailed(str(e)) from e
    detail = result[1] if isinstance(result, tuple) else ""
    print(f"  ok   {name:<7} {detail}  ({time.perf_counter() - t0:.2f} s)")
    return result[0] if isinstance(result, tuple) else result


def _resolution(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CommandError(f"--resolution {text!r}: expected WxH, e.g. 320x180", EXIT_BAD_INPUT) from None
    return w, h


def _copy_project(src: Path, dest: Path):
    from studio.store.project import Project
    shutil.copytree(src, dest, ignore=lambda d, names: [n for n in names if Path(d) == src and n in SKIP])
    return Project.open(dest), f"{src} -> {dest}"


def _open(project, wanted: str | None):
    from studio.scene.io import load_scene
    from studio.timeline.storyboard import list_states
    scene = load_scene(project)
    states = list_states(project)
    if not states:
        raise StepFailed(f"{project.path}: the storyboard has no states to verify")
    ids = [s.id for s in states]
    if wanted and wanted not in ids:
        raise StepFailed(f"--state {wanted!r}: the project's states are {', '.join(ids)}")
    state_id = wanted or ids[0]
    return state_id, (f"{project.name}: {len(scene.bodies)} bodies, {len(scene.joints)} joints, "
                      f"{len(scene.cameras)} cameras, {len(states)} states; checking {state_id!r}")


def _verify(project, state_id: str):
    from studio.store.reports import failing_required, required_checks_pass
    try:
        from studio.checks.run import verify_state
    except ImportError as e:
        raise StepFailed(f"the verifiers are not installed ({e})") from None
    reports = verify_state(project, state_id)
    verdicts = ", ".join(f"{r.name} {r.verdict}" for r in reports)
    if not required_checks_pass(reports):
        failing = ", ".join(failing_required(reports)) or "a required check is missing"
        raise StepFailed(f"state {state_id!r}: required checks fail: {failing} [{verdicts}]")
    return None, f"state {state_id!r}: {verdicts}"


def _worker():
    from studio.jobs.worker_process import BlenderMissing, worker_command
    from studio.store.settings import load_settings
    try:
        command = worker_command(load_settings())
    except BlenderMissing as e:
        raise StepFailed(f"no Blender worker: {e}", EXIT_ENVIRONMENT) from None
    return command, " ".join(command[:1] + [Path(c).name for c in command[1:2]])


def _render(project, state_id: str, resolution: tuple[int, int], command: list[str]):
    from studio.jobs.dispatch import run_submitted
    from studio.jobs.queue import submit
    from studio.jobs.spec import still_spec
    from studio.scene.io import load_scene
    from studio.store.settings import load_settings

    camera = load_scene(project).cameras[0].name
    job = submit(project, "still", lambda folder: still_spec(project, folder, [state_id], [camera],
                                                            resolution=resolution), actor="selftest")
    job = run_submitted(project, job.id, load_settings(), farm_address="")   # this machine, not the farm
    if job.state != "succeeded":
        raise StepFailed(f"still job {job.id} {job.state}: {job.error}")
    still = project.path / "renders" / "stills" / f"{state_id}_{camera}.png"
    if not still.is_file():
        raise StepFailed(f"still job {job.id} succeeded but {still} is missing")
    from PIL import Image
    with Image.open(still) as img:
        size, colours = img.size, len(img.convert("RGB").getcolors(1 << 20) or [])
    if size != resolution:
        raise StepFailed(f"{still}: {size[0]}x{size[1]}, expected {resolution[0]}x{resolution[1]}")
    if colours < 2:
        raise StepFailed(f"{still}: the still is blank (one colour)")
    return still, f"{still} ({size[0]}x{size[1]}, {colours} colours, camera {camera})"
