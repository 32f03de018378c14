"""Errors of the model layer, each a message for the person at the studio."""
from __future__ import annotations

from studio.store.errors import Refused


class AgentError(Refused):
    """The model or the agent could not do what was asked; nothing was changed."""


class ModelMissing(AgentError):
    """No model endpoint is configured (the offline repairer still works)."""
