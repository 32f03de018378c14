"""`studio render` commands."""
from __future__ import annotations


def register(sub) -> None:
    """Adds the render commands (filled in by its area)."""
