"""Why a repair could not be proposed, verified or applied."""
from __future__ import annotations

from studio.store.errors import Refused


class RepairError(Refused):
    """A repair that cannot be proposed or applied as asked (a stale proposal, an unknown id)."""


class Cancelled(RepairError):
    """The person cancelled; proposals verified and saved before then stay."""
