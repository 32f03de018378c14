"""Repair proposals: a diff of a state, verified before a person sees it.

A proposal names its target ("state:<id>"), the check and the failure it
targets (e.g. NoPenetration between a carried board and a wall), and its changes, each
{kind: root|joint, name, from, to}. `verify_changes` applies the changes to a
copy of the pose and runs the verifiers: a proposal is shown only if the
targeted failure is gone and no required check has a failure it did not have
before. Approving applies it as one undoable command (and re-verifies, so the
stored reports match the new pose); rejecting stores the person's note, which
the model repairer reads next time, and changes nothing else.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from studio.checks.report import REQUIRED, Report
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.store.project import Project, now
from studio.timeline.commands import Command, CommandStack, SetState
from studio.timeline.storyboard import State, get_state

from studio.repair.errors import RepairError
from studio.repair.scenery import moved_in_pose, the_set
from studio.tools.verify import check_pose, verify_and_store

STATUSES = ("proposed", "approved", "rejected")


def failure_key(check: str, ev: dict) -> tuple:
    """What a piece of evidence is about, independent of how deep or where exactly."""
    if check == "NoPenetration":
        return (check, *sorted((ev.get("a", ""), ev.get("b", ""))))
    if check == "JointLimits":
        return (check, ev.get("joint", ""), ev.get("bound", ""))
    if check == "Supported":
        return (check, ev.get("body", ""))
    return (check, json.dumps({k: v for k, v in ev.items() if k in ("body", "joint", "event", "a", "b")},
                              sort_keys=True))


def distinct_failures(reports: list[Report], names: tuple[str, ...]):
    """Each failing (report, evidence, key) of the named checks once, by failure key."""
    seen: set[tuple] = set()
    for r in reports:
        if r.verdict != "fail" or r.name not in names:
            continue
        for ev in r.evidence:
            key = failure_key(r.name, ev)
            if key not in seen:
                seen.add(key)
                yield r, ev, key


def report_progress(state, fraction: float, what: str) -> None:
    """Tell a worker's state how far a search got (no state: nobody is watching)."""
    if state is not None:
        state.progress(fraction, what)


def stop_requested(state) -> bool:
    """True once the person cancelled the worker running this search."""
    return state is not None and bool(state.cancelled)


def failures(reports: list[Report], names: tuple[str, ...] | None = None) -> set[tuple]:
    """The failure keys of failing reports (an errored check is one failure of its own)."""
    out: set[tuple] = set()
    for r in reports:
        if names is not None and r.name not in names:
            continue
        if r.verdict == "fail":
            out |= {failure_key(r.name, e) for e in r.evidence} or {(r.name, "fail")}
        elif r.verdict == "error":
            out.add((r.name, "error"))
    return out


@dataclass
class Proposal:
    target: str
    check_name: str
    failure: list
    summary: str
    changes: list[dict]
    source: str = "offline"
    verified: dict = field(default_factory=dict)
    id: int | None = None
    status: str = "proposed"
    note: str = ""
    again: bool = False          # the same proposal was already waiting for a person: not stored twice

    @property
    def state_id(self) -> str:
        return self.target.split(":", 1)[1]

    def to_json(self) -> dict:
        return {"summary": self.summary, "failure": self.failure, "changes": self.changes,
                "verified": self.verified}


def apply_changes(scene: Scene, pose: Pose, changes: list[dict]) -> Pose:
    """The pose with the changes applied; a root whose value moved on since the proposal
    keeps its other edits and takes the proposal's translation as an offset."""
    out = pose.completed(scene).copy()
    for c in changes:
        if c["kind"] == "root":
            cur, old, new = (np.asarray(v, float) for v in (out.roots[c["name"]], c["from"], c["to"]))
            if np.allclose(cur, old, atol=1e-9) or not np.allclose(old[3:], new[3:], atol=1e-12):
                out.roots[c["name"]] = [float(v) for v in new]
            else:
                out.roots[c["name"]] = [*(cur[:3] + new[:3] - old[:3]).tolist(), *cur[3:].tolist()]
        elif c["kind"] == "joint":
            out.joints[c["name"]] = c["to"]
        else:
            raise RepairError(f"repair change kind {c['kind']!r}: expected root or joint")
    return out


def state_set(project: Project, scene: Scene, state_id: str) -> set[str]:
    """The set no repair of `state_id` may move: static bodies, fixed scenery, and bodies every other
    approved key state and the baked film keep still (`scenery`)."""
    from studio.checks.run import approved_states
    from studio.timeline.film import load_film_tracks
    poses = [p for _, p, sid in approved_states(project) if sid != state_id]
    return the_set(scene, project.get_doc("plan"), poses, load_film_tracks(project))


def verify_changes(project: Project, scene: Scene, state: State, failure: tuple, changes: list[dict],
                   before: list[Report] | None = None, fixed: set[str] | None = None) -> dict:
    """Whether the changes fix `failure`, add no new required failure and leave the set alone
    (`fixed`, found from the project when not given), with the verdicts."""
    pose = state.pose.completed(scene)
    fixed = state_set(project, scene, state.id) if fixed is None else fixed
    changed = apply_changes(scene, pose, changes)
    moved = [m.words() for m in moved_in_pose(scene, fixed, pose, changed, state.frame)]
    if moved:
        return {"fixes_target": False, "new_required_failures": [], "moves_set": moved, "ok": False,
                "before": {}, "after": {}}
    before = before if before is not None else check_pose(project, scene, pose, state.frame, state.id)
    after = check_pose(project, scene, changed, state.frame, state.id)
    was, now_ = failures(before, REQUIRED), failures(after, REQUIRED)
    new = sorted(now_ - was)
    fixes = tuple(failure) not in failures(after)
    return {"fixes_target": fixes, "new_required_failures": [list(f) for f in new],
            "ok": fixes and not new,
            "before": {r.name: r.verdict for r in before}, "after": {r.name: r.verdict for r in after}}


# ---- the repairs table -------------------------------------------------------
def _same(a: Proposal, b: Proposal) -> bool:
    """The same repair of the same failure, verified on the same film."""
    canon = lambda v: json.dumps(v, sort_keys=True)       # noqa: E731
    return (a.target, a.check_name, canon(a.changes), canon(a.verified.get("basis"))) == \
        (b.target, b.check_name, canon(b.changes), canon(b.verified.get("basis")))


def save_proposal(project: Project, p: Proposal) -> Proposal:
    """Store a proposal; one that is already waiting (same target, check, changes and basis)
    is not stored again: `p` gets that one's id and `again` is set."""
    for old in list_proposals(project, "proposed"):
        if _same(old, p):
            p.id, p.again = old.id, True
            return p
    with project.transaction():
        p.id = int(project.db["repairs"].insert({
            "target": p.target, "check_name": p.check_name, "proposal": json.dumps(p.to_json(), sort_keys=True),
            "status": "proposed", "note": "", "source": p.source, "at": now()}).last_pk)
        project.audit("agent" if p.source == "model" else "studio", "propose repair", p.target,
                      {"repair": p.id, "check": p.check_name, "summary": p.summary})
    return p


def _from_row(r: dict) -> Proposal:
    d = json.loads(r["proposal"])
    return Proposal(r["target"], r["check_name"], d["failure"], d["summary"], d["changes"], r["source"],
                    d.get("verified", {}), r["id"], r["status"], r["note"] or "")


def list_proposals(project: Project, status: str | None = None) -> list[Proposal]:
    q, args = "SELECT * FROM repairs", []
    if status:
        q, args = q + " WHERE status = ?", [status]
    return [_from_row(r) for r in project.db.query(q + " ORDER BY id", args)]


def get_proposal(project: Project, repair_id: int) -> Proposal:
    rows = list(project.db.query("SELECT * FROM repairs WHERE id = ?", [repair_id]))
    if not rows:
        raise RepairError(f"{project.path}: no repair proposal {repair_id}")
    return _from_row(rows[0])


def _set_status(project: Project, repair_id: int, status: str, note: str, actor: str, action: str) -> None:
    with project.transaction():
        project.db.execute("UPDATE repairs SET status = ?, note = ? WHERE id = ?", [status, note, repair_id])
        project.audit(actor, action, f"repair:{repair_id}", {"note": note} if note else {})


# ---- a person's decision -----------------------------------------------------
class ApplyRepair(Command):
    """Apply a verified proposal to its state; undo puts the pose back and re-opens the proposal."""

    def __init__(self, project: Project, repair_id: int, reviewer: str = "person"):
        self.project, self.reviewer = project, reviewer
        self.proposal = get_proposal(project, repair_id)
        if self.proposal.status != "proposed":
            raise RepairError(f"repair {repair_id} is {self.proposal.status}; only a proposed repair can be approved")
        self.label = f"apply repair {repair_id} ({self.proposal.summary})"
        self._edit: SetState | None = None

    def do(self) -> None:
        p, scene = self.proposal, load_scene(self.project)
        state = get_state(self.project, p.state_id)
        if state is None:
            raise RepairError(f"repair {p.id}: state {p.state_id!r} no longer exists")
        check = verify_changes(self.project, scene, state, tuple(p.failure), p.changes)
        if check.get("moves_set"):
            raise RepairError(f"repair {p.id} moves the set ({'; '.join(check['moves_set'])}); a repair never "
                              f"moves a static body, fixed scenery or a body the storyboard keeps still")
        if not check["ok"]:
            raise RepairError(f"repair {p.id} no longer holds on the state as it is now "
                             f"(fixes its failure: {check['fixes_target']}, new required failures: "
                             f"{check['new_required_failures']}); ask for a new proposal")
        pose = apply_changes(scene, state.pose, p.changes)
        self._edit = SetState(self.project, State(state.id, state.frame, pose, state.shot, state.description,
                                                  state.still, state.visible), actor=self.reviewer)
        with self.project.transaction():
            self._edit.do()
            verify_and_store(self.project, state.id)
            _set_status(self.project, p.id, "approved", "", self.reviewer, "approve repair")

    def undo(self) -> None:
        with self.project.transaction():
            self._edit.undo()
            verify_and_store(self.project, self.proposal.state_id)
            _set_status(self.project, self.proposal.id, "proposed", "", self.reviewer, "undo approve repair")


def approve(project: Project, repair_id: int, stack: CommandStack | None = None,
            reviewer: str = "person") -> ApplyRepair:
    return (stack or CommandStack()).run(ApplyRepair(project, repair_id, reviewer))


class RejectRepair(Command):
    """Turn a proposal down with a note (the state is not touched); undo re-opens it."""

    def __init__(self, project: Project, repair_id: int, note: str, reviewer: str = "person"):
        p = get_proposal(project, repair_id)
        if p.status != "proposed":
            raise RepairError(f"repair {repair_id} is {p.status}; only a proposed repair can be rejected")
        if not note.strip():
            raise RepairError(f"repair {repair_id}: say why it is rejected (--note), so the next proposal can do better")
        self.project, self.repair_id, self.note, self.reviewer = project, repair_id, note, reviewer
        self.label = f"reject repair {repair_id} ({p.summary})"

    def do(self) -> None:
        _set_status(self.project, self.repair_id, "rejected", self.note, self.reviewer, "reject repair")

    def undo(self) -> None:
        _set_status(self.project, self.repair_id, "proposed", "", self.reviewer, "undo reject repair")


def reject(project: Project, repair_id: int, note: str, reviewer: str = "person",
           stack: CommandStack | None = None) -> RejectRepair:
    return (stack or CommandStack()).run(RejectRepair(project, repair_id, note, reviewer))


def rejection_notes(project: Project, target: str) -> list[str]:
    return [f"{p.summary}: {p.note}" for p in list_proposals(project, "rejected") if p.target == target]
