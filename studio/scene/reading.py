"""Read-only passes: the window's refresh, the board, progress and the signals
read the same project many times over without writing it. Inside
`reading_scenes()` derived values are computed once per pass: `load_scene`
returns one Scene object per project, and its design id and the film hash are
memoised. Nothing may be written or edited inside a pass; every memo entry
holds its objects, so an id() is never reused for another object meanwhile.
Thread-local: a worker's pass does not share the window's.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

_READ = threading.local()


@contextlib.contextmanager
def reading_scenes() -> Iterator[None]:
    outer = getattr(_READ, "memo", None)
    if outer is None:
        _READ.memo = {}
    try:
        yield
    finally:
        if outer is None:
            _READ.memo = None


def read_memo() -> dict | None:
    """The memo of the current pass, or None outside one."""
    return getattr(_READ, "memo", None)
