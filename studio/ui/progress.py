"""The project progress figure in the status bar, read from the session's cards,
baked segments and failures: how far the film is from a verified render."""
from __future__ import annotations

from .session import Session


def progress_text(session: Session) -> str:
    cards = session.cards
    if not cards:
        return "no key states yet"
    approved = sum(c.status == "approved" for c in cards)
    segs = [c for c in cards if c.segment]
    baked = sum(c.segment_status in ("baked", "passing", "failing") for c in segs)
    passing = sum(c.segment_status == "passing" for c in segs)
    pct = round(100 * (approved + baked + passing) / max(1, len(cards) + 2 * len(segs)))
    fails = len(session.failures_at)
    return (f"progress {pct}%  ·  states approved {approved}/{len(cards)}  ·  segments baked {baked}/{len(segs)}"
            f", passing {passing}/{len(segs)}  ·  {fails} failing frame{'s' if fails != 1 else ''}")
