"""The words under a progress bar: what is running, how far, and the time left,
estimated from the pace so far (Qt-free; the panels put it in their bars)."""
from __future__ import annotations

import time


def eta_text(seconds: float) -> str:
    if seconds < 1:
        return "under a second left"
    if seconds < 90:
        return f"about {seconds:.0f} s left"
    return f"about {seconds / 60:.0f} min left"


class JobProgress:
    """Fraction done and the time it took so far give the time left."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.started = clock()

    def start(self) -> None:
        self.started = self.clock()

    def eta(self, fraction: float) -> float | None:
        """Seconds left at the pace so far; None until there is a pace to go by."""
        spent = self.clock() - self.started
        if fraction <= 0.02 or spent <= 0:
            return None
        return spent * (1 - fraction) / fraction

    def text(self, fraction: float, what: str) -> str:
        eta = self.eta(fraction)
        return f"{what} — {fraction:.0%}" + (f", {eta_text(eta)}" if eta is not None else "")
