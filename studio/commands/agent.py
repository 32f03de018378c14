"""`studio agent` commands."""
from __future__ import annotations


def register(sub) -> None:
    """Adds the agent commands (filled in by its area)."""
