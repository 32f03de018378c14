"""`studio verify` commands."""
from __future__ import annotations


def register(sub) -> None:
    """Adds the verify commands (filled in by its area)."""
