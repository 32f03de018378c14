"""Starting and stopping the Blender worker as a child process.

The worker runs in its own process group (a new session), so cancel can stop
it and everything it started at once: SIGTERM to the group, then SIGKILL
after a grace period. Its stdout carries JSON progress lines, which go to
`on_event`; every line, JSON or not, goes to the job's log.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Callable

from studio.store.settings import load_settings

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "studio" / "blender" / "worker.py"
GRACE_SECONDS = 5.0


class BlenderMissing(RuntimeError):
    """No Blender to run the worker with; the message says what to configure."""


def worker_command(settings: dict | None = None, serve: bool = False) -> list[str]:
    """The command line that runs the worker: the configured Blender binary with
    `-b --python`, else the configured bpy Python, else <repo>/.venv-blender/bin/python."""
    s = settings if settings is not None else load_settings()
    tail = ["--serve"] if serve else []
    binary = s.get("blender_binary") or ""
    if binary:
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise BlenderMissing(f"settings blender_binary: {binary} is not an executable file")
        return [binary, "-b", "--factory-startup", "--python-exit-code", "1", "--python", str(WORKER), "--", *tail]
    python = s.get("blender_python") or str(REPO / ".venv-blender" / "bin" / "python")
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise BlenderMissing(f"no Blender Python at {python}; run scripts/setup.sh to make .venv-blender "
                             f"(bpy 5.0.1), or set blender_python or blender_binary in the settings")
    return [python, str(WORKER), *tail]


class WorkerRun:
    """One run of the worker on one spec; `wait` streams its output until it exits."""

    def __init__(self, command: list[str], spec_path: Path, log_path: Path):
        self.spec_path, self.log_path = Path(spec_path), Path(log_path)
        self.cancelled = False
        self._log = open(self.log_path, "a", buffering=1)
        self.proc = subprocess.Popen([*command, str(spec_path)], cwd=str(self.spec_path.parent),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1,
                                     start_new_session=True, env=_worker_env())
        self.pid = self.proc.pid

    def wait(self, on_event: Callable[[dict], None], on_line: Callable[[str], None] | None = None) -> int:
        try:
            for line in self.proc.stdout:
                self._write_log(line)
                if on_line:
                    on_line(line)
                text = line.strip()
                if text.startswith("{"):
                    try:
                        event = json.loads(text)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(event, dict) and "stage" in event:
                        on_event(event)
            return self.proc.wait()
        finally:
            self.proc.stdout.close()
            self._close_log()

    def _write_log(self, line: str) -> None:
        """Keep the full log; on a full disk the log stops there and the events still count."""
        if self._log is None:
            return
        try:
            self._log.write(line)
        except OSError:
            self._close_log()

    def _close_log(self) -> None:
        log, self._log = self._log, None
        if log is not None:
            try:
                log.close()
            except OSError:
                pass

    def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Terminate the worker's whole process group; kill it if it lingers past `grace`."""
        self.cancelled = True
        stop_group(self.proc, grace)


def stop_group(proc: subprocess.Popen, grace: float = GRACE_SECONDS) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    timer = threading.Timer(grace, kill_process_group, [proc])
    timer.daemon = True
    timer.start()
    try:
        proc.wait()
    finally:
        timer.cancel()
    kill_process_group(proc)   # anything the worker started and left in its group


def kill_process_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _worker_env() -> dict:
    """The worker's environment, without the studio's secrets; it names this studio's pid
    so that the worker ends itself if the studio dies (no orphan renders on its own)."""
    env = {k: v for k, v in os.environ.items()
           if not any(s in k.upper() for s in ("API_KEY", "TOKEN", "SECRET", "PASSWORD"))}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONUNBUFFERED"] = "1"
    env["KEYPOSE_STUDIO_PID"] = str(os.getpid())
    return env
