"""Why a tool call was refused: bad arguments, or an edit the gate or a check refuses."""
from __future__ import annotations

from studio.store.errors import Refused


class ToolRefused(Refused):
    """A tool call with bad arguments, or one the gate or a check refuses; nothing was changed."""
