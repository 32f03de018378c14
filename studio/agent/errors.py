"""Errors of the agent layer, each a message for the person at the studio."""
from __future__ import annotations


class AgentError(Exception):
    """The model or the agent could not do what was asked; nothing was changed."""


class ModelMissing(AgentError):
    """No model endpoint is configured (the offline repairer still works)."""


class ToolRefused(AgentError):
    """A tool call with bad arguments, or one the gate or a check refuses."""


class SandboxMissing(ToolRefused):
    """The OS sandbox cannot run here and the person has not opted in to running without it."""


class Cancelled(AgentError):
    """The person cancelled; proposals verified and saved before then stay."""
