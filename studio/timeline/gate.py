"""The hard storyboard gate: no motion edit across a state that is not approved,
passing and current.

A state's status collects every reason it cannot anchor motion: missing,
unreviewed (including a review that is unsigned, or any review at all while
the audit log fails verification: see `trust`), rejected, stale (the scene design or the state's content changed
since review), objects that appeared in its cameras since review, or failing
(its required checks are missing, fail, or were computed for another content
hash). The checks themselves live above this layer; the gate only reads the
reports they stored under "state:<id>".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.meshes import scene_design_id
from studio.scene.reading import read_memo
from studio.store.project import Project
from studio.store.reports import failing_required, load_reports

from studio.timeline.plan import load_plan
from studio.timeline.reviews import by_whom, latest_review, reviewer_kinds, state_visible
from studio.timeline.storyboard import content_hash, get_state, list_states
from studio.timeline.trust import Verdict, verify_project

OK = "approved"


class GateError(ValueError):
    """A motion edit refused by the gate; `.reasons` lists (state_id, reason)."""

    def __init__(self, segment: str, reasons: list[tuple[str, str]]):
        self.segment = segment
        self.reasons = reasons
        lines = "; ".join(f"{sid}: {why}" for sid, why in reasons)
        super().__init__(f"segment {segment}: motion is blocked until its states are approved, "
                         f"passing and current — {lines}")


@dataclass
class StateStatus:
    state_id: str
    status: str                       # approved | missing | unreviewed | rejected | stale | appeared | failing
    reasons: list[str] = field(default_factory=list)
    frame: int | None = None
    reviewed: str = ""                # "approved by ana at ...", or by a studio run, never shown as a person

    @property
    def ok(self) -> bool:
        return not self.reasons


def check_status(project: Project, state_id: str, current_hash: str) -> list[str]:
    """Why the stored checks of a state do not let it pass (empty if they do)."""
    reports, checked = load_reports(project, f"state:{state_id}")
    if not reports:
        return ["failing: checks have not been run"]
    if checked != current_hash:
        return [f"failing: checks were run on another version of the state (hash {checked}, now {current_hash})"]
    bad = failing_required(reports)
    return [f"failing: {', '.join(bad)}"] if bad else []


def state_status(project: Project, state_id: str, scene: Scene | None = None,
                 plan: dict | None = None, trust: Verdict | None = None) -> StateStatus:
    scene = scene or load_scene(project)
    plan = plan if plan is not None else load_plan(project)
    trust = trust or verify_project(project)
    state = get_state(project, state_id)
    if state is None:
        return StateStatus(state_id, "missing", ["missing: no such state has been authored"])
    reasons: list[str] = []
    chash = content_hash(scene, state.pose, state.frame)
    review = latest_review(project, state_id)
    who = by_whom(review.reviewer, reviewer_kinds(project).get(review.reviewer)) if review else ""
    if review is None:
        reasons.append("unreviewed: no one has approved it yet")
    elif not trust.ok:
        reasons.append(f"unreviewed: no review counts while the audit log fails verification at "
                       f"{trust.problem.row} (see studio audit verify)")
    elif not review.signed:
        reasons.append("unreviewed: the review is unsigned (made before reviews were signed); review it again")
    elif review.verdict != "approve":
        reasons.append(f"rejected by {who} at {review.at}: {review.note or 'no note'}")
    else:
        if review.design_id != scene_design_id(scene):
            reasons.append(f"stale: the scene design changed since review ({review.design_id} -> {scene_design_id(scene)})")
        elif review.content_hash != chash:
            reasons.append("stale: the state's pose, frame or cameras changed since review")
        appeared = sorted(set(state_visible(project, scene, plan, state)) - set(review.visible))
        if appeared:
            reasons.append(f"appeared since review: {', '.join(appeared)} now visible")
    reasons += check_status(project, state_id, chash)
    reviewed = f"{'approved' if review.verdict == 'approve' else 'rejected'} by {who} at {review.at}" \
        + (f": “{review.note}”" if review.note else "") if review and review.signed and trust.ok else ""
    return StateStatus(state_id, reasons[0].split(":")[0].split(" ")[0] if reasons else OK, reasons, state.frame,
                       reviewed)


def board_status(project: Project, scene: Scene | None = None) -> list[StateStatus]:
    """Every authored state and every plan state, in frame order, with its status
    (once per read-only pass: the cards, progress and the signals all read it)."""
    scene = scene or load_scene(project)
    memo = read_memo()
    if memo is None:
        return _board_status(project, scene)
    key = ("board", id(project), id(scene))
    if key not in memo:
        memo[key] = (project, scene, _board_status(project, scene))
    return list(memo[key][2])


def _board_status(project: Project, scene: Scene) -> list[StateStatus]:
    plan = load_plan(project)
    trust = verify_project(project)
    out = {s.id: state_status(project, s.id, scene, plan, trust) for s in list_states(project)}
    for s in (plan or {}).get("states", []):
        if s["id"] not in out:
            out[s["id"]] = StateStatus(s["id"], "missing", ["missing: planned but not authored"], s["frame"])
    return sorted(out.values(), key=lambda st: (st.frame if st.frame is not None else 0, st.state_id))


def parse_segment(segment: str) -> tuple[str, str]:
    parts = segment.split("..")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"segment {segment!r}: expected 'A..B' naming two state ids")
    return parts[0], parts[1]


def require_storyboards(project: Project, segment: str, scene: Scene | None = None,
                        first_only: bool = False) -> None:
    """Refuse (GateError) unless the audit log verifies and both bounding states are approved,
    passing and current (with `first_only`, the first: a run that starts there and offers its own
    end as the second state, which is what it would replace)."""
    a, b = parse_segment(segment)
    scene = scene or load_scene(project)
    plan = load_plan(project)
    trust = verify_project(project)
    if not trust.ok:
        raise GateError(segment, [("audit log", f"fails verification at {trust.problem}; no review "
                                                f"counts until it is repaired (see studio audit verify)")])
    reasons = [(st.state_id, why) for sid in ((a,) if first_only else (a, b))
               for st in [state_status(project, sid, scene, plan, trust)] for why in st.reasons]
    if first_only and not reasons and get_state(project, b) is None:
        reasons.append((b, "missing: create it (set_state) at the frame where the run should end"))
    if not reasons:
        sa, sb = get_state(project, a), get_state(project, b)
        if sb.frame <= sa.frame:
            reasons.append((b, f"frame {sb.frame} is not after {a}'s frame {sa.frame}"))
    if reasons:
        raise GateError(segment, reasons)
