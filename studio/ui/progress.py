"""The status bar: the verdict first (ready to export, or the real reason not,
as the export gate says it), then the project's progress, approvals, the
failing frames of the film as it is now (or that its verdicts are stale) and
coverage; the tooltip lists what nothing certifies. Completion, progress and
coverage stay side by side, never blended."""
from __future__ import annotations

from studio.ui.session import Session


def progress_text(session: Session, verifying: bool = False) -> str:
    value, _missing = session.progress
    approved = sum(c.status == "approved" for c in session.cards)
    sig, verdict = session.signals, session.verdict
    if sig is None:
        return "no scene yet"
    fails = len(session.failures_at)
    if verdict.stale and session.film is not None:
        frames = "film verdicts stale: verifying…" if verifying else "film verdicts stale: verify the film"
    else:
        frames = f"{fails} failing frame{'s' if fails != 1 else ''}"
    parts = [verdict.headline(verifying), f"progress {value:.0%}", f"states approved {approved}/{len(session.cards)}",
             frames, f"coverage: {sig.coverage.text()}"]
    return "  ·  ".join(parts)


def coverage_tip(session: Session) -> str:
    sig = session.signals
    if sig is None:
        return ""
    reasons = session.verdict.reasons
    head = ("Why the film may not leave yet:\n" + "\n".join(f"• {r}" for r in reasons) + "\n\n") if reasons else ""
    return head + "Not certified by any check:\n" + "\n".join(f"• {u}" for u in sig.coverage.uncertified)
