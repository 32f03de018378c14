"""`studio agent replay PROJECT CALLS.jsonl` and `studio agent log PROJECT --calls [OUT]`:
a project's edits as a file of tool calls, and that file applied again."""
from __future__ import annotations

import sys
from pathlib import Path

from studio.store.project import Project, write_atomic
from studio.store.shown import shown

from studio.commands import EXIT_BAD_INPUT, EXIT_FAILED, CommandError


def add_replay(asub) -> None:
    q = asub.add_parser("replay", help="apply a file of tool calls (one JSON object a line), gate enforced")
    q.add_argument("path", type=Path)
    q.add_argument("calls", type=Path)
    q.add_argument("--quiet", action="store_true", help="no line per call")
    q.set_defaults(func=cmd_replay)


def cmd_replay(args) -> int:
    from studio.tools.calls import CallsFileError, ReplayRefused, read_calls, replay
    try:
        calls = read_calls(args.calls)
    except CallsFileError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None

    def said(call, out) -> None:
        if not args.quiet:
            print(f"line {call.line}: {call.tool}: {shown(out.result.get('done', 'ok'))}", flush=True)

    with Project.open(args.path) as project:
        try:
            n = replay(project, calls, str(args.calls), on_call=said)
        except ReplayRefused as e:
            print(f"studio: {shown(str(e), 600)}", file=sys.stderr)
            print(f"studio: the project holds the {e.applied} call(s) before line {e.line}", file=sys.stderr)
            return EXIT_FAILED
    print(f"replayed {n} call(s) from {args.calls} into {args.path}")
    return 0


def write_history(project_path: Path, out: str | None) -> int:
    from studio.tools.calls import history, outside_edits, write_calls
    with Project.open(project_path) as project:
        calls = history(project)
        outside = outside_edits(project)
    text = write_calls(calls)
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        write_atomic(Path(out), text.encode())
        print(f"wrote {len(calls)} call(s) to {out}", file=sys.stderr)
    if outside:
        first = outside[0]
        print(f"studio: warning: {len(outside)} edit(s) of {project_path} were made outside the tool layer "
              f"and are not in the calls (first: audit row {first['id']}, {first['action']!r} on "
              f"{first['target']} by {first['actor']}); a replay will not reproduce them", file=sys.stderr)
    return 0
