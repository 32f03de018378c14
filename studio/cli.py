"""The `studio` command. Exit codes: 0 done, 1 refused or a check failed,
2 bad input (the message names it), 3 something the machine lacks."""
from __future__ import annotations

import argparse
import signal
import sys

from studio import __version__


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The `studio` parser. Given the command line, only the module of the sub-command it names is
    imported (the others are listed by name and help), so a command starts without the libraries
    of the rest."""
    from studio import commands
    parser = argparse.ArgumentParser(prog="studio", description="Keypose Studio: pose-to-pose 4D authoring.")
    parser.add_argument("--version", action="version", version=f"studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = {name for name, _, _ in commands.COMMANDS}
    only = argv[0] if argv and argv[0] in names else None
    commands.register_all(sub, only, everything=argv is None)
    return parser


def main(argv: list[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE") and argv is None:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)    # `studio score ... | head` ends quietly
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        print(f"studio {__version__}")     # answered before the sub-commands load their libraries
        return 0
    from studio.commands import EXIT_BAD_INPUT
    from studio.commands.failures import report
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    guarded = _guard(args)
    try:
        code = args.func(args)
    except KeyboardInterrupt:
        print("studio: interrupted", file=sys.stderr)
        return 130
    except Exception as e:      # one line for the person; a traceback only in the log
        return report(e, args, argv)
    finally:
        _unguard(guarded)
    return int(code or 0)


def _guard(args) -> tuple | None:
    """Put the terminal guard on stdout and stderr (control characters escaped, each line cut at
    a thousand characters with its size): text from a project, a calls file, a model or agent code
    reaches the terminal only so. Output meant for a program (--json, a calls file on stdout) is
    JSON, which carries no control character, and is left whole."""
    if getattr(args, "json", None) is True or getattr(args, "calls", None) == "-":
        return None
    from studio.store.shown import GuardedStream
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = GuardedStream(old[0]), GuardedStream(old[1])
    return old


def _unguard(old: tuple | None) -> None:
    if old is None:
        return
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "finish"):
            stream.finish()
    sys.stdout, sys.stderr = old


if __name__ == "__main__":
    sys.exit(main())
