"""JSON from outside the studio, read within limits.

Calls files, the settings, the JSON the project stores (plans, poses,
reports) and a model's tool arguments are all written by someone else, and
Python's reader will follow a document wherever it goes: 100,000 nested
brackets end in RecursionError, a 5,000-digit integer in the interpreter's own
limit, a `\\ud800` escape in a string no encoder accepts, a 60 MB value in a
60 MB message. `loads` checks the nesting before parsing and everything else
while it parses, and every refusal is one `JsonRefused` line that names
where the document came from (a file and line, or a table, row and field),
the field inside it, and what was wrong.

The limits (`Limits`) are generous for anything the studio writes itself.

The checks cost far more than the parse (they walk the document in Python), and
the window reads the same plan and reports again after every commit, so a text
that passed them is remembered (`_PASSED`, the last few large texts, with their
limits): the same text under the same limits passes again, and is parsed by
Python's reader alone, which gives the same document where no number needed
the long-literal hook.
"""
from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass

from studio.store.shown import shown


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 16 << 20         # one document
    max_depth: int = 64               # nested objects and lists
    max_items: int = 1_000_000        # values in one document
    max_digits: int = 30              # digits of one integer (a frame, a count, an id)


DEFAULT = Limits()
_PASSED: dict[tuple[str, Limits], None] = {}     # texts that passed, oldest first
_PASSED_LOCK = threading.Lock()                  # the window reads on a worker and on its own thread
_PASSED_KEPT = 32
_PASSED_CHARS = (2048, 1 << 20)                  # remembered sizes: below, the checks cost little
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


class JsonRefused(ValueError):
    """A JSON document past a limit or not JSON; the message names where and the field."""


def _check_depth(text: str, where: str, limit: int) -> None:
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - text.rfind("\n", 0, m.start())
                at = f"line {line} column {col}" if "\n" in text else f"column {col}"
                raise JsonRefused(f"{where}: nested deeper than {limit} levels (at {at}); refused")
        elif c in "]}":
            depth -= 1


def _number_hooks(where: str, limits: Limits, seen_long: list):
    def parse_int(s: str) -> int:
        digits = len(s.lstrip("-"))
        if digits > limits.max_digits:
            raise JsonRefused(f"{where}: an integer of {digits:,} digits (at most {limits.max_digits}); refused")
        return int(s)

    def parse_float(s: str) -> float:
        if len(s) > 400:
            seen_long.append(s)
        v = float(s[:400]) if len(s) > 400 else float(s)
        if not math.isfinite(v):
            raise JsonRefused(f"{where}: the number {shown(s, 40)} is not finite; refused")
        return v

    def parse_constant(s: str):
        raise JsonRefused(f"{where}: {s} is not a JSON number; refused")
    return parse_int, parse_float, parse_constant


def _field(path: list) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(the document)"


def _check_values(doc, where: str, limits: Limits) -> None:
    """Every string is text (no lone surrogate) and the document holds at most max_items values."""
    count = 0
    stack = [(doc, [])]
    while stack:
        value, path = stack.pop()
        count += 1
        if count > limits.max_items:
            raise JsonRefused(f"{where}: more than {limits.max_items:,} values; refused")
        if isinstance(value, dict):
            for k, v in value.items():
                _check_text(k, where, path + [k], "a key")
                stack.append((v, path + [k]))
        elif isinstance(value, list):
            stack.extend((v, path + [i]) for i, v in enumerate(value))
        elif isinstance(value, str):
            _check_text(value, where, path, "the string")


def _check_text(s: str, where: str, path: list, what: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = s[e.start]
        raise JsonRefused(f"{where}: {shown(_field(path), 120)}: {what} holds a lone surrogate "
                          f"(\\u{ord(bad):04x}), which is not text; refused") from None


def loads(text: str | bytes, where: str, limits: Limits = DEFAULT):
    """The document in `text`, or JsonRefused naming `where`, the field and the fault."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limits.max_bytes:
            raise JsonRefused(f"{where}: {len(text):,} bytes (at most {limits.max_bytes:,}); refused")
        text = decode(bytes(text), where)
    if len(text) > limits.max_bytes:
        raise JsonRefused(f"{where}: {len(text):,} characters (at most {limits.max_bytes:,}); refused")
    key = (text, limits)
    if key in _PASSED:
        return json.loads(text)
    _check_depth(text, where, limits.max_depth)
    seen_long: list[str] = []
    parse_int, parse_float, parse_constant = _number_hooks(where, limits, seen_long)
    try:
        doc = json.loads(text, parse_int=parse_int, parse_float=parse_float, parse_constant=parse_constant)
    except json.JSONDecodeError as e:
        at = f"line {e.lineno} column {e.colno}" if "\n" in text.strip() else f"column {e.colno}"
        raise JsonRefused(f"{where}: not valid JSON ({e.msg} at {at})") from None
    except RecursionError:        # nesting the bracket count could not see (it counts outside strings)
        raise JsonRefused(f"{where}: nested too deep to read; refused") from None
    _check_values(doc, where, limits)
    if _PASSED_CHARS[0] <= len(text) <= _PASSED_CHARS[1] and not seen_long:
        with _PASSED_LOCK:
            _PASSED[key] = None
            while len(_PASSED) > _PASSED_KEPT:
                del _PASSED[next(iter(_PASSED))]
    return doc


def decode(data: bytes, where: str) -> str:
    """`data` as UTF-8, or JsonRefused naming the line and column of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise JsonRefused(f"{where}: byte 0x{data[e.start]:02x} at line {line} column {col} is not UTF-8 "
                          f"text; refused") from None


def stored(value: str | None, dbfile, table: str, row, field: str, default=None, limits: Limits = DEFAULT):
    """A JSON column of one row of studio.db, read within the limits; a refusal names the row."""
    if value is None or value == "":
        return default
    return loads(value, f"{dbfile}: {table} row {shown(row, 80)}, field {field}", limits)
