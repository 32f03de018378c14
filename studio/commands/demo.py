"""`studio demo` commands."""
from __future__ import annotations


def register(sub) -> None:
    """Adds the demo commands (filled in by its area)."""
