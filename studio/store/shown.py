"""Text that came from outside the studio, as the studio prints it.

A project, a calls file, a model's reply and agent code can all hold text
meant for a terminal rather than a person: escape sequences that retitle the
window, move the cursor or rewrite a line already printed, newlines that
forge a line of the studio's own output, right-to-left overrides, or a value
of sixty megabytes. What the studio prints of such text has every control or
invisible character escaped (`\\x1b`, `\\n`, `\\u202e`) and is cut to a few
hundred characters with a note of its full size. What is stored is kept
exactly as given; only the printing changes.
"""
from __future__ import annotations

import re

LIMIT = 300                      # characters of one value
LINE_LIMIT = 1000                # characters of one printed line, whatever it holds

# C0 and C1 controls, DEL, lone surrogates, and the invisible format characters that reorder or hide text.
_INVISIBLE = "\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff"
UNSAFE = re.compile(f"[\x00-\x1f{_INVISIBLE}]")
UNSAFE_IN_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")       # newline and tab kept


def _escape(m: re.Match) -> str:
    c = m.group()
    code = ord(c)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escaped(text: str, keep_lines: bool = False) -> str:
    """`text` with every control or invisible character written as an escape (newlines and tabs
    kept when `keep_lines`)."""
    return (UNSAFE_IN_LINES if keep_lines else UNSAFE).sub(_escape, text)


def size_note(n: int) -> str:
    return f"... ({n:,} characters in all)"


def shown(value, limit: int = LIMIT) -> str:
    """One value as printed: escaped onto one line and cut to `limit` characters with a note
    of its full size."""
    text = value if isinstance(value, str) else str(value)
    head = escaped(text[: limit + 1])
    if len(text) <= limit and len(head) <= limit:
        return head
    return head[:limit] + size_note(len(text))


def shown_block(text: str, line_limit: int = LIMIT, max_lines: int = 60) -> str:
    """Many lines (a program's output) as printed: each escaped and cut, the last `max_lines` kept."""
    lines = text.splitlines()
    out = [shown(line, line_limit) for line in lines[-max_lines:]]
    if len(lines) > max_lines:
        out.insert(0, f"... ({len(lines) - max_lines:,} earlier lines not shown)")
    return "\n".join(out)


class GuardedStream:
    """A text stream that escapes control characters (keeping newlines and tabs) and cuts every
    line past LINE_LIMIT characters with a note of its full size: the CLI's stdout and stderr."""

    def __init__(self, stream, line_limit: int = LINE_LIMIT):
        self.stream, self.line_limit = stream, line_limit
        self.column = 0

    def write(self, text: str) -> int:
        out = []
        for i, piece in enumerate(text.split("\n")):
            if i:
                if self.column > self.line_limit:
                    out.append(size_note(self.column))
                out.append("\n")
                self.column = 0
            room = self.line_limit - self.column
            if room > 0:
                out.append(escaped(piece[:room], keep_lines=True))
            self.column += len(piece)
        self.stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def finish(self) -> None:
        """End a last line left without a newline (its note, if it was cut)."""
        if self.column > self.line_limit:
            self.stream.write(size_note(self.column) + "\n")
        self.column = 0
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)
