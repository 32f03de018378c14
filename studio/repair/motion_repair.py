"""Repairs of baked motion: proposals for runs of failing frames, verified on a
scratch copy before anyone sees them, applied by a person as one command.

A proposal's target is `film:<segment>`; its changes are the plan edits of
`motion_trial` (insert a key state, set a segment's tool and parameters). It
is stored only when `FilmTrial.judge` finds that it removes the run's failure
and adds no required one, with that effect in words, and with the basis it
was verified on (each touched segment's tracks hash and plan entry, each
bounding state's content) so that approving it later on a film that moved on
is refused as stale, with the reason.

Approving is one `ApplyFilmRepair` on the command stack: the edits go through
the tool layer as the reviewer (set_state and run_verifiers for a new key
state, set_plan, review_state for the key state the reviewer saw,
drop_segment for the segment it splits, author_segment for each touched
segment only), so undo puts
back the exact plan, states, reviews and tracks.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

from studio.scene.io import load_scene
from studio.scene.ir import canonical_hash
from studio.store.project import Project
from studio.timeline import film
from studio.timeline.commands import Command, CommandStack
from studio.timeline.gate import parse_segment
from studio.timeline.plan import PlanError, load_plan, segment_entry, validate_plan
from studio.timeline.storyboard import content_hash, get_state

from studio.repair.errors import RepairError

from studio.tools.errors import ToolRefused
from studio.repair.film_failures import FailingRun, failing_runs
from studio.repair.motion_candidates import candidates
from studio.repair.motion_trial import FilmTrial, RepairUnfit, plan_after
from studio.repair.proposals import (Proposal, _set_status, get_proposal, list_proposals, report_progress, save_proposal,
                      stop_requested)

PREFIX = "film:"


def basis(project: Project, changes: list[dict]) -> dict:
    """What a proposal was verified on: the segments it touches, their plan entries and bounding states."""
    plan = load_plan(project)
    _, touched, dropped = plan_after(plan, changes)
    named = {c["segment"] for c in changes if c["kind"] == "segment"} | \
        {c["split"] for c in changes if c["kind"] == "insert_state" and c.get("split")}
    rows = {r["segment"]: r for r in film.list_segments(project)}
    scene = load_scene(project)
    out = {}
    for seg in sorted(named | set(dropped)):
        if seg not in rows:
            continue
        states = {}
        for sid in parse_segment(seg):
            st = get_state(project, sid)
            states[sid] = content_hash(scene, st.pose, st.frame) if st else None
        out[seg] = {"tracks": rows[seg]["hash"], "entry": canonical_hash(segment_entry(plan, seg))[:16],
                    "states": states}
    return out


def staleness(project: Project, p: Proposal) -> str:
    """Why a proposal no longer fits the film (empty if it still does)."""
    was = p.verified.get("basis") or {}
    now = basis(project, p.changes)
    for seg, b in was.items():
        cur = now.get(seg)
        if cur is None:
            return f"segment {seg} is no longer baked"
        if cur["tracks"] != b["tracks"]:
            return f"segment {seg} was re-baked since the proposal (tracks {b['tracks'][:10]}, now {cur['tracks'][:10]})"
        if cur["entry"] != b["entry"]:
            return f"segment {seg}'s tool or parameters changed in the plan since the proposal"
        for sid, h in b["states"].items():
            if cur["states"].get(sid) != h:
                return f"key state {sid} of segment {seg} changed since the proposal"
    for c in p.changes:
        if c["kind"] == "insert_state" and get_state(project, c["state"]) is not None:
            return f"a key state {c['state']!r} exists now"
    return ""


@dataclass
class FilmProposals:
    proposals: list[Proposal] = field(default_factory=list)
    unsolved: list[str] = field(default_factory=list)
    runs: list[FailingRun] = field(default_factory=list)
    tried: int = 0
    seconds: float = 0.0


def rejected_changes(project: Project, segment: str) -> list[list[dict]]:
    return [p.changes for p in list_proposals(project, "rejected") if p.target == f"{PREFIX}{segment}"]


def waiting(run: FailingRun, runs: list[FailingRun]) -> str:
    """The failing event an unmet event waits for ('must follow X, which never holds'), if any:
    repairing X is what helps."""
    m = re.match(r"(?:must follow )?'([^']+)',? (?:which )?never holds", str(run.evidence.get("reason", "")))
    if run.check != "EventsSatisfied" or not m:
        return ""
    return m.group(1) if any(r.evidence.get("event") == m.group(1) for r in runs) else ""


def propose_film(project: Project, interval: tuple[int, int] | None = None, per_run: int = 2,
                 store: bool = True, trial: FilmTrial | None = None,
                 on_event: Callable[[str], None] | None = None, state=None,
                 batch: bool = False) -> FilmProposals:
    """Verified proposals for the film's failing runs (inside `interval` if given). For a batch
    run, only required failures and one proposal per segment: only one can be applied before
    the film is verified again; and where no candidate removes a run in a segment, the one that
    removes most of a run's frames while adding no required failure, said to narrow it (the next
    round takes it from there).

    `state` (optional, a worker's) gets progress per run and stops the search between
    candidates when cancelled: proposals saved by then stay, the rest are not tried."""
    t0 = time.perf_counter()
    report_progress(state, 0.0, "verifying the film as it is")
    trial = trial or FilmTrial(project)
    try:                      # a repair is applied through set_plan, which refuses a plan that does not hold
        validate_plan(trial.plan, trial.scene)
    except PlanError as e:
        raise RepairError(f"{project.path}: the stored plan does not hold ({e}); repairs change the plan "
                         f"through set_plan, so correct the plan first") from None
    out = FilmProposals(runs=failing_runs(trial.base_reports, trial.segments, interval=interval,
                                          tracks=trial.base_tracks))
    done: set[str] = set()
    narrowest: dict[str, tuple] = {}
    for i, run in enumerate(out.runs):
        if stop_requested(state):
            break
        if batch and (not run.required or run.segment in done):
            continue
        report_progress(state, (i + 1) / (len(out.runs) + 1), run.label)
        dep = waiting(run, out.runs)
        if dep:
            out.unsolved.append(f"{run.label}: waits for event {dep}")
            continue
        kinds: set[str] = set()
        for kind, summary, changes in candidates(trial, run, rejected_changes(project, run.segment)):
            if stop_requested(state):
                break
            if kind in kinds:
                continue
            out.tried += 1
            try:
                result = trial.judge(run, changes, narrow=batch)
            except RepairUnfit as e:
                if on_event:
                    on_event(f"  not baked: {summary}: {e}")
                continue
            if not result.ok:
                if on_event:
                    on_event(f"  refused: {summary}: {result.effect}")
                if batch and result.narrows and result.removed > narrowest.get(run.segment, (0,))[0]:
                    narrowest[run.segment] = (result.removed, run, summary, changes, result)
                continue
            p = Proposal(f"{PREFIX}{run.segment}", run.check, list(run.key), f"{summary} — {result.effect}",
                         changes, "offline", {**result.verified(), "run": [run.start, run.end],
                                              "basis": basis(project, changes)})
            out.proposals.append(save_proposal(project, p) if store else p)
            kinds.add(kind)
            done.add(run.segment)
            if len(kinds) >= per_run:
                break
        if not kinds and not stop_requested(state):
            out.unsolved.append(f"{run.label}: no candidate repair passed verification")
    for segment, (_, run, summary, changes, result) in narrowest.items():   # a batch run goes on by steps
        if segment in done:
            continue
        p = Proposal(f"{PREFIX}{run.segment}", run.check, list(run.key),
                     f"{summary} — narrows the run: {result.effect}", changes, "offline",
                     {**result.verified(), "run": [run.start, run.end], "basis": basis(project, changes)})
        out.proposals.append(save_proposal(project, p) if store else p)
    out.seconds = time.perf_counter() - t0
    return out


# ---- approving ---------------------------------------------------------------
def _state_args(c: dict) -> dict:
    return {"state": c["state"], "frame": int(c["frame"]), "shot": c.get("shot", ""),
            "description": c.get("description", "")[:2000], "roots": c["pose"]["roots"],
            "joints": c["pose"].get("joints", {})}


class ApplyFilmRepair(Command):
    """Apply a verified film repair through the tool layer as the reviewer; undo undoes every call."""

    def __init__(self, project: Project, repair_id: int, reviewer: str = "person"):
        self.project, self.reviewer = project, reviewer
        self.proposal = get_proposal(project, repair_id)
        if not self.proposal.target.startswith(PREFIX):
            raise RepairError(f"repair {repair_id} is for {self.proposal.target}, not the film")
        if self.proposal.status != "proposed":
            raise RepairError(f"repair {repair_id} is {self.proposal.status}; only a proposed repair can be approved")
        self.label = f"apply repair {repair_id} ({self.proposal.summary.split(' — ')[0]})"
        self.inner: CommandStack | None = None
        self.keyed: list[str] = [c["state"] for c in self.proposal.changes if c["kind"] == "insert_state"]
        self.baked: list[str] = []

    def do(self) -> None:
        if self.inner is not None:                  # redo: the same calls again
            with self.project.transaction():
                while self.inner.can_redo:
                    self.inner.redo()
                _set_status(self.project, self.proposal.id, "approved", "", self.reviewer, "approve repair")
            return
        p = self.proposal
        why = staleness(self.project, p)
        if why:
            raise RepairError(f"repair {p.id} is stale: {why}; ask for a new proposal")
        from studio.tools.box import ToolBox
        stack = CommandStack()
        box = ToolBox(self.project, stack, actor=self.reviewer)
        plan, touched, dropped = plan_after(load_plan(self.project), p.changes)
        try:
            with self.project.transaction():
                for c in p.changes:
                    if c["kind"] == "insert_state":
                        box.call("set_state", _state_args(c))
                        box.call("run_verifiers", {"state": c["state"]})
                box.call("set_plan", {"plan": plan})
                for sid in self.keyed:
                    box.call("review_state", {"state": sid, "verdict": "approve",
                                              "note": f"key state of repair {p.id}, seen before and after"})
                baked = {r["segment"] for r in film.list_segments(self.project)}
                for seg in dropped:              # a key state keyed inside it has cut it already
                    if seg in baked:
                        box.call("drop_segment", {"segment": seg})
                for seg in touched:
                    box.call("author_segment", {"segment": seg})
                _set_status(self.project, p.id, "approved", "", self.reviewer, "approve repair")
        except ToolRefused as e:
            raise RepairError(f"repair {p.id} could not be applied: {e}") from None
        self.inner, self.baked = stack, touched

    def undo(self) -> None:
        with self.project.transaction():
            while self.inner.can_undo:
                self.inner.undo()
            _set_status(self.project, self.proposal.id, "proposed", "", self.reviewer, "undo approve repair")


def approve_film_repair(project: Project, repair_id: int, stack: CommandStack | None = None,
                        reviewer: str = "person") -> ApplyFilmRepair:
    return (stack or CommandStack()).run(ApplyFilmRepair(project, repair_id, reviewer))
