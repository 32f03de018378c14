"""A warm worker: one long-lived Blender process that takes specs one after
another, so a storyboard still costs a render, not Blender's start-up.

It is the same worker script in `--serve` mode (one spec path per line on
stdin). Its outputs follow the same rules as a job's; a caller that wants the
done contract checks them with `contract.check_done` like any job.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from studio.jobs.worker_process import _worker_env, stop_group, worker_command


class WorkerGone(RuntimeError):
    """The warm worker exited; the message carries the last thing it said."""


class WarmWorker:
    def __init__(self, settings: dict | None = None):
        self.proc = subprocess.Popen(worker_command(settings, serve=True), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                     start_new_session=True, env=_worker_env())
        self._until(("ready",))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _until(self, stages: tuple[str, ...]) -> list[dict]:
        import json
        events, last = [], ""
        for line in self.proc.stdout:
            last = line
            if line.startswith("{"):
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue
                events.append(e)
                if e.get("stage") in stages:
                    return events
        raise WorkerGone(f"the warm worker exited (code {self.proc.wait()}); last line: {last.strip()}")

    def run(self, spec_path: Path) -> list[dict]:
        """Do one spec; return its progress events, the last being `done` or `error`."""
        if self.proc.poll() is not None:
            raise WorkerGone(f"the warm worker has exited (code {self.proc.returncode})")
        self.proc.stdin.write(f"{Path(spec_path).resolve()}\n")
        self.proc.stdin.flush()
        return self._until(("done", "error"))

    def close(self) -> None:
        """Let the worker finish (EOF on stdin); stop its process group if it lingers."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                stop_group(self.proc)
        self.proc.stdout.close()

    def __enter__(self) -> "WarmWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
