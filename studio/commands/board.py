"""`studio board` commands."""
from __future__ import annotations


def register(sub) -> None:
    """Adds the board commands (filled in by its area)."""
