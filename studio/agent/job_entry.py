"""The agent job's process: plan from a prompt, or build the scene and key states
from the stored plan, then write out/agent.json and the finish marker.

Every step is recorded in the project as it happens (so the window's agent log
grows live) and printed as a JSON line with its tokens and seconds. While the
model streams, `progress.json` in the job folder says which kind of reply it
is, the tokens so far, the seconds taken and the client's last notice (a
wait, a retry, a continuation), rewritten at most twice a second: the agent
panel reads it. A model
that is missing, refuses to answer usefully or breaks a rule ends the job as
failed with the reason; whatever the model did is in its recorded steps and can
be reverted.
"""
from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

from studio.jobs.agent_spec import OUTPUT
from studio.jobs.contract import emit, finish
from studio.store.errors import Refused
from studio.store.project import Project, write_atomic

from studio.agent.client import ModelClient
from studio.agent.loop import BUILD_TOOLS, run_tools
from studio.agent.planner import make_plan

BUILD_TASK = "Build the scene this plan needs and author its key states."


PROGRESS = "progress.json"


class ProgressFile:
    """The model's progress as the job folder's progress.json, for the window to read."""

    def __init__(self, folder: Path):
        self.path, self.state, self.written = folder / PROGRESS, {}, 0.0

    def progress(self, kind: str, tokens: int, seconds: float, done: bool) -> None:
        self.state.update(kind=kind, tokens=tokens, seconds=round(seconds, 1), done=done)
        self._write(force=done)

    def status(self, message: str) -> None:
        self.state["notice"] = message
        emit(stage="status", message=message)
        self._write(force=True)

    def _write(self, force: bool) -> None:
        now = time.monotonic()
        if force or now - self.written >= 0.5:
            self.written = now
            try:
                write_atomic(self.path, json.dumps(self.state).encode())
            except OSError:
                pass                # progress only: the job's outcome is written elsewhere


def run(spec_path: str | Path) -> int:
    spec_path = Path(spec_path)
    folder = spec_path.parent
    spec = json.loads(spec_path.read_text())
    action = spec["action"]
    t0 = time.monotonic()
    shown = ProgressFile(folder)
    client = ModelClient.from_settings(on_progress=shown.progress, on_status=shown.status)
    emit(stage="start", action=action, endpoint=client.base_url, model=client.model)
    with Project.open(spec["project"]) as project:
        if action == "plan":
            result = make_plan(project, client, spec["prompt"])
            summary = {"action": "plan", "step": result.step, "tokens": result.tokens, "attempts": result.attempts,
                       "states": [s["id"] for s in result.plan["states"]]}
            emit(stage="step", message=f"plan stored as step {result.step}: {len(result.plan['states'])} key "
                                       f"states, {result.attempts} attempt(s)", tokens=result.tokens,
                 seconds=round(time.monotonic() - t0, 2))
        else:
            said = lambda m: emit(stage="step", message=m, seconds=round(time.monotonic() - t0, 2))  # noqa: E731
            loop = run_tools(project, client, BUILD_TASK, max_turns=int(spec.get("max_turns", 12)), on_event=said,
                             tools=BUILD_TOOLS)
            summary = {"action": "build", "steps": loop.steps, "turns": loop.turns, "tokens": loop.tokens,
                       "refused": loop.refused, "final": loop.final_text}
            emit(stage="step", message=f"built in {loop.turns} turn(s): {len(loop.steps)} step(s), "
                                       f"{len(loop.refused)} call(s) refused", tokens=loop.tokens,
                 seconds=round(time.monotonic() - t0, 2))
    return finish(folder, OUTPUT, summary, {"action": action})


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m studio.agent.job_entry SPEC.json", file=sys.stderr)
        return 2
    try:
        return run(argv[0])
    except Refused as e:                # the model missing, its replies or a tool call refused: the job says why
        emit(stage="error", message=str(e))
        return 1
    except Exception as e:              # the log keeps the trace; the job's error is one line
        traceback.print_exc(file=sys.stdout)
        emit(stage="error", message=f"{type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
