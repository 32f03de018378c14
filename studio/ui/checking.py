"""The Checks dock's verification, in a process of its own.

The verifiers are numpy, libigl and Python: run on a thread of the window's process they
hold the interpreter lock through whole compiled calls, and the window stalls while they run.
So the dock starts `python -m studio.ui.checking PROJECT [--state ID ...] [--film]`, reads
the progress lines it prints, and asks it with SIGUSR1 to stop after the check running now.
The reports it stores reach the window as any other process's commits do; what it verified
before a stop is kept. Qt-free: the dock runs `verify_in_child` on a worker thread, which
only waits on the pipe."""
from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from studio.store.project import Project

ENTRY = "studio.ui.checking"


def verify_targets(path, state_ids: list[str] | None, film: bool, state) -> str:
    """Verify the given states (every state when None), then the film if asked and baked.

    Each state is checked by a `run_verifiers` call of the tool layer, as Approve checks one:
    recorded with the project's calls, so a replay of them checks (and may approve) the same
    states."""
    from studio.checks.run import verify_film
    from studio.timeline.film import list_segments
    from studio.timeline.storyboard import list_states
    from studio.tools.box import ToolBox
    with Project.open(path) as project:
        states = [s for s in list_states(project) if state_ids is None or s.id in state_ids]
        steps = len(states) + (1 if film else 0)
        box = ToolBox(project, actor="person")       # on the person's behalf, as the window's other edits
        for i, s in enumerate(states):
            if state.cancelled:
                return f"cancelled: verified {i} of {len(states)} states; the film was not verified"
            state.progress(i / max(1, steps), f"state {s.id}")
            box.call("run_verifiers", {"state": s.id})
        if not film:
            return f"verified {_states(len(states))}"
        if not list_segments(project):
            return f"verified {_states(len(states))} (nothing baked yet)"
        if state.cancelled:
            return f"cancelled: verified {_states(len(states))}; the film was not verified"
        state.progress(len(states) / max(1, steps), "film")
        verify_film(project)
    return f"verified {_states(len(states))} and the film" if state_ids is None or states else "verified the film"


def _states(n: int) -> str:
    return f"{n} state{'' if n == 1 else 's'}"


def child_command(path, state_ids: list[str] | None, film: bool) -> list[str]:
    cmd = [sys.executable, "-m", ENTRY, str(path)]
    if state_ids is not None:
        cmd += ["--only-states", *[a for s in state_ids for a in ("--state", s)]]
    return cmd + (["--film"] if film else [])


def verify_in_child(path, state_ids: list[str] | None, film: bool, state) -> str:
    """`verify_targets` in a child process; progress and cancelling through `state` (a Worker's)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(child_command(path, state_ids, film), stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL)
        asked_to_stop, buffer, answer, started = False, b"", None, [False]
        try:
            while True:
                if state.cancelled and started[0] and not asked_to_stop and proc.poll() is None:
                    proc.send_signal(signal.SIGUSR1)          # stop after the check running now
                    asked_to_stop = True
                ready, _w, _x = select.select([proc.stdout], [], [], 0.2)
                if not ready:
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    answer = _take(line, state, started) or answer
        finally:
            proc.stdout.close()
            code = proc.wait()
        if answer is not None:
            kind, text = answer
            if kind == "done":
                return text
            raise RuntimeError(text)
        err.seek(0)
        last = [ln for ln in err.read().decode(errors="replace").splitlines() if ln.strip()][-1:]
        raise RuntimeError(f"the verifiers' process ended (exit {code}) before it answered"
                           + (f": {last[0].strip()}" if last else ""))


def _take(line: bytes, state, started: list[bool]) -> tuple[str, str] | None:
    """One line from the child: progress is passed on; the answer is returned. Until the child
    says it started (its SIGUSR1 handler in place), it is not signalled: the signal would kill it."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None                                    # not ours (a library printing): ignored
    if not isinstance(msg, dict):
        return None
    if "started" in msg:
        started[0] = True
    if "progress" in msg:
        state.progress(float(msg["progress"]), str(msg.get("what", "")))
        return None
    if "done" in msg:
        return "done", str(msg["done"])
    if "error" in msg:
        return "error", str(msg["error"])
    return None


class _ChildState:
    """What `verify_targets` asks of its caller, in the child: SIGUSR1 sets `cancelled`."""

    def __init__(self) -> None:
        self.cancelled = False
        signal.signal(signal.SIGUSR1, self._stop)

    def _stop(self, *_args) -> None:
        self.cancelled = True

    @staticmethod
    def progress(fraction: float, what: str = "") -> None:
        _say({"progress": fraction, "what": what})


def _say(msg: dict) -> None:
    sys.__stdout__.write(json.dumps(msg) + "\n")
    sys.__stdout__.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {ENTRY}", description="The Checks dock's verification.")
    parser.add_argument("project", type=Path)
    parser.add_argument("--only-states", action="store_true", help="verify only the states named by --state")
    parser.add_argument("--state", action="append", default=[])
    parser.add_argument("--film", action="store_true")
    args = parser.parse_args(argv)
    state = _ChildState()
    _say({"started": os.getpid()})
    sys.stdout = sys.stderr               # anything a library prints stays off the answer's pipe
    try:
        text = verify_targets(args.project, args.state if args.only_states else None, args.film, state)
    except Exception as e:                # one line for the window; the whole story on stderr
        import traceback
        traceback.print_exc()
        _say({"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")})
        return 1
    _say({"done": text})
    return 0


if __name__ == "__main__":
    sys.exit(main())
