"""What the `studio` command says when a command fails: one line a person can
act on and an exit code, never a traceback. Known faults (a read-only project,
a full disk, a held lock, bad input) are named; anything unexpected is one line
naming what failed and the log that holds the full traceback, exit 3. The log
is the project's `logs/studio.log` when the project can be written, else the
user's `~/.local/state/keypose-studio/studio.log`."""
from __future__ import annotations

import datetime as _dt
import errno
import os
import sqlite3
import sys
import traceback
from pathlib import Path

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, CommandError

LOG_NAME = "studio.log"


def user_log() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "keypose-studio" / LOG_NAME


def project_of(args) -> Path | None:
    """The project folder a command was pointed at, if any."""
    for name in ("path", "film"):
        value = getattr(args, name, None)
        if value is not None and (Path(value) / "studio.db").is_file():
            return Path(value).absolute()
    return None


def write_log(args, argv: list[str], exc: BaseException) -> Path | None:
    """Append the traceback to the project's log (or the user's); return where it went."""
    project = project_of(args)
    candidates = ([project / "logs" / LOG_NAME] if project else []) + [user_log()]
    stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    text = (f"--- {stamp} pid {os.getpid()}: studio {' '.join(argv)}\n"
            + "".join(traceback.format_exception(exc)))
    for log in candidates:
        made = not log.parent.exists()
        try:
            if project is not None and log.is_relative_to(project):
                from studio.store.beneath import append_beneath
                append_beneath(project, log.relative_to(project), text)     # logs/ never through a link
                return log
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "a") as f:
                f.write(text)
            return log
        except OSError:
            if made:
                try:
                    log.parent.rmdir()      # leave no empty folder behind (a full disk still makes folders)
                except OSError:
                    pass
    return None


def explain(exc: BaseException, args, argv: list[str]) -> tuple[str, int]:
    """(one line for the person, exit code) for an exception that ended a command."""
    try:
        known = _known(exc, args)
    except Exception:      # the explaining must not fail louder than the fault
        known = None
    if known is not None:
        return known
    log = write_log(args, argv, exc)
    where = f"the full report is in {log}" if log else "no log could be written"
    command = " ".join(a for a in argv[:2] if not a.startswith("-")) or "studio"
    detail = " ".join(str(exc).split())[:200]
    return (f"`studio {command}` failed unexpectedly ({type(exc).__name__}: {detail}); {where}",
            EXIT_ENVIRONMENT)


def _known(exc: BaseException, args) -> tuple[str, int] | None:
    if isinstance(exc, CommandError):       # a refusal needs none of the store's modules
        return str(exc), exc.code
    from studio.scene.ir import IRError
    from studio.store.project import ProjectError
    from studio.store.space import is_disk_full

    if isinstance(exc, ProjectError):
        return str(exc), getattr(exc, "exit_code", EXIT_BAD_INPUT)
    if is_disk_full(exc):
        where = getattr(exc, "filename", None) or project_of(args) or "the disk"
        return f"disk full: cannot write {where} ({exc}); free some space and try again", EXIT_ENVIRONMENT
    if isinstance(exc, sqlite3.OperationalError) and project_of(args) and \
            any(w in str(exc) for w in ("disk I/O error", "readonly")):
        from studio.store.space import disk_full, free_bytes
        if free_bytes(project_of(args)) < (1 << 20):      # a project opened for reading on a full disk
            return f"{disk_full(project_of(args), 1 << 20)}; free some space and try again", EXIT_ENVIRONMENT
    if isinstance(exc, sqlite3.OperationalError):
        text, project = str(exc), project_of(args) or "the project"
        if "readonly" in text or "read-only" in text:
            return f"{project}: the project is read-only; this command changes it, so it did not run", EXIT_BAD_INPUT
        if "locked" in text or "busy" in text:
            return (f"{project}: another process kept the project's write lock too long ({text}); "
                    f"try again when it has finished"), EXIT_ENVIRONMENT
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return f"{exc.filename or 'the destination'}: read-only file system; cannot write there", EXIT_BAD_INPUT
    if isinstance(exc, PermissionError):
        return f"{exc.filename or 'a file'}: permission denied ({exc.strerror})", EXIT_BAD_INPUT
    if isinstance(exc, (IRError, ValueError, KeyError, FileNotFoundError)):
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return str(msg), EXIT_BAD_INPUT
    return None


def report(exc: BaseException, args, argv: list[str]) -> int:
    from studio.store.secrets import scrub
    message, code = explain(exc, args, argv)
    print(f"studio: {scrub(message)}", file=sys.stderr)
    return code
