"""`studio selftest` command."""
from __future__ import annotations


def register(sub) -> None:
    """Adds the selftest command (filled in by its area)."""
