"""Why agent code was refused or stopped, each a message for the person at the studio."""
from __future__ import annotations

from studio.store.errors import Refused


class SandboxRefused(Refused):
    """Agent code, or a path it names, that the sandbox will not run or hand back."""


class SandboxMissing(SandboxRefused):
    """The OS sandbox cannot run here and the person has not opted in to running without it."""
