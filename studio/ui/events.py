"""A minimal event: models call `emit`, views `connect`; no Qt here, so the
models of the studio window can be tested headless (napari's EventEmitter, smaller)."""
from __future__ import annotations

from typing import Any, Callable


class Event:
    """Callbacks run in connection order; a view disconnects when it closes."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[..., Any]] = []

    def connect(self, callback: Callable[..., Any]) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., Any]) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def clear(self) -> None:
        """Drop every listener: the model is closing and no view may hear from it again."""
        self._callbacks.clear()

    def emit(self, *args: Any) -> None:
        for cb in list(self._callbacks):
            cb(*args)
