"""Why a tool call was refused: bad arguments, or an edit the gate or a check refuses."""
from __future__ import annotations

from studio.store.errors import Refused


class ToolRefused(Refused):
    """A tool call with bad arguments, or one the gate or a check refuses; nothing was changed.

    `offer` is what the refusal offers instead, when it does: a simulation's own end state, which
    the `adopt_end_state` tool takes (see `studio.timeline.motion.EndStateOffered`)."""

    def __init__(self, message: str, offer: dict | None = None):
        super().__init__(message)
        self.offer = offer
