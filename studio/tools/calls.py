"""Calls files: a project's edits as tool calls, one JSON object a line,
`{"tool": NAME, "arguments": {...}}`.

`read_calls` checks the whole file before anything runs (its size, UTF-8, each
line's JSON within `LINE_LIMITS`: depth, size, number of values, digits of an
integer; shape, a known tool, arguments matching its schema) and names the
line and field of the first fault.
`replay` applies the calls in order through the same ToolBox a person and the
agent use, as the reviewer kind "replay", and stops at the first refusal: each
call is its own transaction, so the project holds exactly the calls before
it. `history` reads a project's accepted calls back from the audit log (an
undone call drops out, a redone one comes back), in the same format.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from studio.store import json_reading
from studio.store.errors import Refused
from studio.store.project import Project
from studio.store.shown import shown

from studio.tools.errors import ToolRefused
from studio.tools.schemas import catalogue, parse_arguments
from studio.tools.box import CALL, REDO, UNDO, ToolBox, ToolOutcome

REPLAY = "replay"
MAX_FILE_BYTES = 256 << 20               # a calls file
MAX_CALLS = 1_000_000                    # lines of one
LINE_LIMITS = json_reading.Limits(max_bytes=16 << 20, max_depth=32, max_items=200_000, max_digits=30)


class CallsFileError(Refused):
    """A calls file that cannot be read as calls; the message names the file and line."""


class ReplayRefused(Refused):
    """A call the project refused; `line` is its line in the file, every call before it stands."""

    def __init__(self, message: str, line: int, applied: int):
        super().__init__(message)
        self.line, self.applied = line, applied


@dataclass
class Call:
    line: int
    tool: str
    arguments: dict

    def as_json(self) -> str:
        return json.dumps({"tool": self.tool, "arguments": self.arguments}, sort_keys=True, separators=(",", ":"))


def parse_calls(text: str, where: str) -> list[Call]:
    """Every call of a calls file's text; CallsFileError naming the line of the first fault."""
    calls = []
    tools = catalogue()
    lines = text.split("\n")
    if len(lines) > MAX_CALLS:
        raise CallsFileError(f"{where}: {len(lines):,} lines (at most {MAX_CALLS:,} calls in a file); refused")
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        at = f"{where} line {n}"
        try:
            obj = json_reading.loads(raw, at, LINE_LIMITS)
        except json_reading.JsonRefused as e:
            raise CallsFileError(str(e)) from None
        if not isinstance(obj, dict) or set(obj) != {"tool", "arguments"}:
            got = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
            raise CallsFileError(f"{at}: expected an object with exactly 'tool' and 'arguments', got {shown(got)}")
        if obj["tool"] not in tools:
            raise CallsFileError(f"{at}: unknown tool {shown(repr(obj['tool']), 80)}; the tools are "
                                 f"{', '.join(tools)}")
        if not isinstance(obj["arguments"], dict):
            raise CallsFileError(f"{at}: arguments: expected an object")
        try:
            parse_arguments(obj["tool"], obj["arguments"])
        except ToolRefused as e:
            raise CallsFileError(f"{at}: {shown(str(e))}") from None
        calls.append(Call(n, obj["tool"], obj["arguments"]))
    return calls


def read_calls(path: Path) -> list[Call]:
    """A calls file, read within its limits (size, lines, each line's JSON) before anything runs."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise CallsFileError(f"{path}: {size:,} bytes (a calls file holds at most {MAX_FILE_BYTES:,}); "
                                     f"refused before reading it")
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise CallsFileError(f"{path}: cannot read the calls file ({e.strerror or e})") from None
    if len(data) > MAX_FILE_BYTES:
        raise CallsFileError(f"{path}: more than {MAX_FILE_BYTES:,} bytes (the most a calls file holds); refused")
    try:
        text = json_reading.decode(data, str(path))
    except json_reading.JsonRefused as e:
        raise CallsFileError(str(e)) from None
    return parse_calls(text, str(path))


def replay(project: Project, calls: list[Call], where: str = "calls", actor: str = REPLAY,
           on_call: Callable[[Call, ToolOutcome], None] | None = None, box: ToolBox | None = None) -> int:
    """Apply the calls in order; returns how many. ReplayRefused at the first refusal."""
    box = box or ToolBox(project, actor=actor)
    for i, call in enumerate(calls):
        try:
            out = box.call(call.tool, call.arguments)
        except ToolRefused as e:
            raise ReplayRefused(f"{where} line {call.line}: refused: {e}", call.line, i) from None
        if on_call:
            on_call(call, out)
    return len(calls)


def history(project: Project) -> list[Call]:
    """The project's accepted tool calls, in the order they stand (undone calls left out)."""
    rows = project.db.query("SELECT id, action, detail FROM audit WHERE action IN (?, ?, ?) ORDER BY id",
                            [CALL, UNDO, REDO])
    live: dict[int, Call] = {}            # by the row of the original call, in standing order
    undone: dict[int, Call] = {}
    for r in rows:
        d = json.loads(r["detail"] or "{}")
        if r["action"] == CALL:
            live[r["id"]] = Call(0, d["tool"], d["arguments"])
        elif r["action"] == UNDO and d.get("call") in live:
            undone[d["call"]] = live.pop(d["call"])
        elif r["action"] == REDO and d.get("call") in undone:
            live[d["call"]] = undone.pop(d["call"])
    return list(live.values())


CONTENT = ("scene", "plan")               # audit targets that change what a replay reproduces


def outside_edits(project: Project) -> list[dict]:
    """Audit rows that changed the scene, a state, the plan or a segment outside any tool call
    (a revert to an agent step among them)."""
    rows = [dict(r) for r in project.db.query("SELECT id, actor, action, target, detail FROM audit ORDER BY id")]
    covered: set[int] = set()
    for r in rows:
        if r["action"] in (CALL, UNDO, REDO):
            since = json.loads(r["detail"] or "{}").get("since")
            covered.update(range(since + 1, r["id"] + 1) if since is not None else [r["id"]])
    return [r for r in rows if r["id"] not in covered and
            (r["target"] in CONTENT or str(r["target"]).startswith(("state:", "segment:"))
             or r["action"] == "revert agent")]     # a revert puts back rows no call wrote


def write_calls(calls: list[Call]) -> str:
    return "".join(c.as_json() + "\n" for c in calls)
