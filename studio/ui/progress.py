"""The status bar's three signals, side by side and never blended: completion
(do the film's required checks pass), progress (the prerequisite-gated figure
and the first thing still missing) and coverage (what was checked on what;
the tooltip lists what nothing certifies)."""
from __future__ import annotations

from studio.ui.session import Session


def progress_text(session: Session) -> str:
    value, missing = session.progress
    approved = sum(c.status == "approved" for c in session.cards)
    fails = len(session.failures_at)
    sig = session.signals
    parts = [f"{'complete' if sig.complete else 'not complete'}: {sig.completion}" if sig else "no scene yet",
             f"progress {value:.0%}", f"states approved {approved}/{len(session.cards)}",
             f"{fails} failing frame{'s' if fails != 1 else ''}"]
    if sig:
        parts.append(f"coverage: {sig.coverage.text()}")
    if missing:
        parts.append(f"next: {missing[0]}")
    return "  ·  ".join(parts)


def coverage_tip(session: Session) -> str:
    sig = session.signals
    if sig is None:
        return ""
    return "Not certified by any check:\n" + "\n".join(f"• {u}" for u in sig.coverage.uncertified)
