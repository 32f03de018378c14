"""Storyboard cards: what the timeline shows for each key state — its frame,
still, review status and why — and for each segment to the next state,
whether it is baked for its states as they are and passing on checks of its
tracks as they are now. Read from the timeline's gate and the stored reports
(a report counts only where its checked hash is what is there now); nothing
is decided here."""
from __future__ import annotations

from dataclasses import dataclass, field

from studio.scene.ir import Scene
from studio.store.project import Project
from studio.store.reports import load_reports, required_checks_pass
from studio.timeline.bake import bounds_hash
from studio.timeline.film import film_hash, list_segments, segment_id
from studio.timeline.gate import board_status
from studio.timeline.storyboard import State

from studio.ui.failures import Failure, current_failures

# The gate's statuses, in the words of the storyboard.
CARD_STATUS = {"approved": "approved", "unreviewed": "pending", "missing": "pending", "rejected": "rejected",
               "stale": "stale", "appeared": "stale", "failing": "failing"}


@dataclass
class Card:
    state_id: str
    frame: int
    status: str                            # pending | approved | rejected | stale | failing
    reasons: list[str] = field(default_factory=list)
    description: str = ""
    shot: str = ""
    still: str = ""                        # asset name, "" if never rendered
    authored: bool = True
    segment: str = ""                      # segment to the next card, if any
    segment_status: str = ""               # not baked | stale | baked | passing | failing
    reviewed: str = ""                     # who approved or rejected it; a studio run is never shown as a person


def segment_status(project: Project, segment: str, row: dict | None, current_bounds: str,
                   film_current: bool, failing_frames: set[int]) -> str:
    """not baked | stale (baked for other states, or cut by a key) | failing | passing | baked.
    A verdict counts only if it was reached on the tracks as they are now: the segment's own
    reports whose checked hash is its tracks' hash, else the current film's reports over its frames."""
    if row is None:
        return "not baked"
    if row["bounds_hash"] != current_bounds:
        return "stale"
    reports, checked = load_reports(project, f"segment:{segment}")
    if reports and checked == row["hash"]:
        return "passing" if required_checks_pass(reports) else "failing"
    if film_current:
        return "failing" if any(row["start"] <= f <= row["end"] for f in failing_frames) else "passing"
    return "baked"


def board_cards(project: Project, scene: Scene, states: list[State],
                failures: list[Failure] | None = None) -> list[Card]:
    """The cards; `failures` are the current ones (studio.ui.failures), read when omitted."""
    by_id = {s.id: s for s in states}
    cards = []
    for st in board_status(project, scene):
        s = by_id.get(st.state_id)
        cards.append(Card(st.state_id, int(st.frame if st.frame is not None else (s.frame if s else 0)),
                          CARD_STATUS.get(st.status, st.status), list(st.reasons),
                          s.description if s else "", s.shot if s else "", s.still if s else "", s is not None,
                          reviewed=st.reviewed))
    rows = {r["segment"]: r for r in list_segments(project)}
    if failures is None:
        failures = [f for f in current_failures(project, scene, states) if not f.stale]
    _, checked = load_reports(project, "film")
    film_current = checked is not None and checked == film_hash(project)
    failing = {f.frame for f in failures if f.target == "film" and f.required}
    for a, b in zip(cards, cards[1:]):
        a.segment = segment_id(a.state_id, b.state_id)
        row = rows.get(a.segment)
        a.segment_status = segment_status(project, a.segment, row,
                                          bounds_hash(project, a.segment, scene) if row else "",
                                          film_current, failing)
    return cards
