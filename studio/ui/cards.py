"""Storyboard cards: what the timeline shows for each key state — its frame,
still, review status and why — and for each segment to the next state,
whether it is baked and passing. Read from the timeline's gate and the
stored reports; nothing is decided here."""
from __future__ import annotations

from dataclasses import dataclass, field

from studio.scene.ir import Scene
from studio.store.project import Project
from studio.store.reports import load_reports, required_checks_pass
from studio.timeline.film import list_segments, segment_id
from studio.timeline.gate import board_status
from studio.timeline.storyboard import State

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
    segment_status: str = ""               # not baked | baked | passing | failing
    reviewed: str = ""                     # who approved or rejected it; a studio run is never shown as a person


def segment_status(project: Project, segment: str, baked: set[str]) -> str:
    if segment not in baked:
        return "not baked"
    reports, _ = load_reports(project, f"segment:{segment}")
    if not reports:
        return "baked"
    return "passing" if required_checks_pass(reports) else "failing"


def board_cards(project: Project, scene: Scene, states: list[State]) -> list[Card]:
    by_id = {s.id: s for s in states}
    cards = []
    for st in board_status(project, scene):
        s = by_id.get(st.state_id)
        cards.append(Card(st.state_id, int(st.frame if st.frame is not None else (s.frame if s else 0)),
                          CARD_STATUS.get(st.status, st.status), list(st.reasons),
                          s.description if s else "", s.shot if s else "", s.still if s else "", s is not None,
                          reviewed=st.reviewed))
    baked = {r["segment"] for r in list_segments(project)}
    for a, b in zip(cards, cards[1:]):
        a.segment = segment_id(a.state_id, b.state_id)
        a.segment_status = segment_status(project, a.segment, baked)
    return cards
