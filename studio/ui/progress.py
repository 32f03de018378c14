"""The project progress figure in the status bar: the timeline's progress
(studio.timeline.progress) and the first thing still missing."""
from __future__ import annotations

from .session import Session


def progress_text(session: Session) -> str:
    value, missing = session.progress
    approved = sum(c.status == "approved" for c in session.cards)
    fails = len(session.failures_at)
    parts = [f"progress {value:.0%}", f"states approved {approved}/{len(session.cards)}",
             f"{fails} failing frame{'s' if fails != 1 else ''}"]
    if missing:
        parts.append(f"next: {missing[0]}")
    return "  ·  ".join(parts)
