"""One verdict on screen: what the status bar, the scrubber, the Checks dock and the
export refusal all say about the film, read from the export gate.

Qt-free. The gate's reasons come in the order a person acts on them: a state not
approved and current first, then a segment baked for other states, then the
film's reports (missing, older than the film, or failing). So the first reason
is the real one, and each view leads with it. The film's verdicts are "current"
only while their checked hash is the film as it is now; after a bake or an edit
they are "stale" until verified again, and are never shown as a pass or a fail.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from studio.jobs.export_gate import film_gate
from studio.store.project import Project
from studio.store.reports import failing_required, load_reports

FILM_STATES = ("none", "unverified", "stale", "current")


@dataclass
class Verdict:
    ready: bool                                  # the export gate lets this film out
    reasons: list[str] = field(default_factory=list)   # why not, the real reason first
    film: str = "none"                          # none (nothing baked) | unverified | stale | current
    failing: list[str] = field(default_factory=list)   # required checks failing on the current film
    film_hash: str | None = None                # the film as it is now (tracks, design, plan)

    @property
    def stale(self) -> bool:
        """The film's stored verdicts are older than the film (or there are none)."""
        return self.film in ("unverified", "stale")

    def headline(self, verifying: bool = False) -> str:
        if self.ready:
            return "ready to export: every state approved, the required checks pass"
        more = f" (+{len(self.reasons) - 1} more)" if len(self.reasons) > 1 else ""
        text = f"not ready: {self.reasons[0]}{more}" if self.reasons else "not ready"
        if verifying and self.stale:
            text += " · verifying the film…"
        return text

    def next_step(self) -> str:
        """What to do about the first reason, in the window's words."""
        first = self.reasons[0] if self.reasons else ""
        if first.startswith("state "):
            sid = first.split(":")[0][len("state "):]
            return (f"Next: review {sid} on the storyboard (approve it when it reads well; if it does not, "
                    f"fix it, verify it and approve it), then export again.")
        if first.startswith("segment "):
            seg = first.split(":")[0][len("segment "):]
            return f"Next: Bake motion (Jobs) so {seg} is baked for its states as they are, then export again."
        if first.startswith("no baked tracks"):
            return "Next: bake the motion between approved states (Jobs › Bake motion)."
        if self.stale:
            return ("Next: Verify the film (the Checks dock verifies it by itself after a bake or an edit), "
                    "then export again.")
        return ""


def read_verdict(project: Project) -> Verdict:
    """The export gate's answer for the film as it is now, with the state of the film's verdicts."""
    try:
        gate = film_gate(project)
    except ValueError as e:                      # segments that do not join
        return Verdict(False, [f"film: {e}"], "none")
    if gate.tracks_hash is None:                 # nothing baked
        return Verdict(False, list(gate.reasons), "none")
    reports, checked = load_reports(project, "film")
    now = gate.tracks_hash
    film = "unverified" if not reports else "current" if checked == now else "stale"
    return Verdict(gate.ok, list(gate.reasons), film, failing_required(reports) if film == "current" else [], now)
