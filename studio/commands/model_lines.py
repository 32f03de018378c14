"""What the command line shows while the model works: one updating line.

On a terminal the line is rewritten in place as tokens stream in ("  plan:
412 tokens, 38 s"), and left standing with the final count when the reply is
done; the client's notices (a wait on a busy server, a continuation, a
conversation fitted to the context) print on lines of their own above it.
Where stderr is not a terminal (a log, a pipe) only the finished replies and
the notices are written, one line each.
"""
from __future__ import annotations

import sys

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, CommandError


class ModelLines:
    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._open = False

    def progress(self, kind: str, tokens: int, seconds: float, done: bool) -> None:
        words = f"{tokens} token{'' if tokens == 1 else 's'}"
        if done:
            self._write(f"  {kind} reply: {words} in {seconds:.1f} s\n")
            return
        if self.tty:
            self.stream.write(f"\r\033[K  {kind}: {words}, {seconds:.0f} s")
            self.stream.flush()
            self._open = True

    def status(self, message: str) -> None:
        self._write(f"  {message}\n")

    def _write(self, text: str) -> None:
        if self._open:
            self.stream.write("\r\033[K")
            self._open = False
        self.stream.write(text)
        self.stream.flush()


def model_client(settings=None, **kw):
    """The configured model's client, its progress and notices on one updating stderr line;
    CommandError when no model is configured (exit 3) or the settings do not hold (exit 2)."""
    from studio.agent.client import ModelClient
    from studio.agent.errors import ModelMissing
    lines = ModelLines()
    try:
        return ModelClient.from_settings(settings, on_status=lines.status, on_progress=lines.progress, **kw)
    except ModelMissing as e:
        raise CommandError(str(e), EXIT_ENVIRONMENT) from None
    except ValueError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None
