"""Verify → repair motion → verify, round after round.

Each round verifies the film, proposes repairs for its failing runs (offline
rules, and the model's when a proposer for it is given, through the same checks) and, only
when asked (`approve_verified`, batch work), applies one verified proposal
per segment, required failures first, as the reviewer `batch`: the audit log
records the batch run, never a person. It stops when the required checks
pass (with `until_pass`), when a round applies nothing (nothing helps), or
after `max_rounds`. A plain function reporting each round through `on_round`.

The model's proposer is a guest: when it fails (the server gone, a reply
past its deadline, a context too small), the round says so and names the
offline proposals it keeps, and goes on with them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from studio.checks.report import REQUIRED, failing_required
from studio.checks.run import verify_film
from studio.store.project import Project
from studio.timeline.commands import CommandStack

from studio.store.errors import Refused
from studio.repair.motion_repair import approve_film_repair, propose_film
from studio.repair.motion_trial import FilmTrial

BATCH = "batch"

# The model's proposals for a round's failing runs (from `studio.agent`, which this layer never imports):
# called with the project, the round's trial and its runs; answers with .proposals and .unsolved.
ModelProposer = Callable[[Project, FilmTrial, list], object]


@dataclass
class Round:
    number: int
    failing: list[str]                 # required checks failing when the round began
    runs: int
    proposals: list[int] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    unsolved: list[str] = field(default_factory=list)
    seconds: float = 0.0
    model_failed: str = ""             # why the model's proposals are missing from this round
    kept: list[int] = field(default_factory=list)      # the offline proposals kept when it failed


@dataclass
class LoopResult:
    rounds: list[Round] = field(default_factory=list)
    passing: bool = False
    stopped: str = ""

    @property
    def proposals(self) -> int:
        return sum(len(r.proposals) for r in self.rounds)

    @property
    def applied(self) -> int:
        return sum(len(r.applied) for r in self.rounds)


def repair_film(project: Project, *, until_pass: bool = False, max_rounds: int = 10, approve_verified: bool = False,
                interval: tuple[int, int] | None = None, model_proposer: ModelProposer | None = None, stack: CommandStack | None = None,
                on_round: Callable[[Round], None] | None = None, whole: bool = False) -> LoopResult:
    stack = stack or CommandStack()
    out = LoopResult()
    rounds = max_rounds if approve_verified else 1
    for n in range(1, rounds + 1):
        t0 = time.perf_counter()
        trial = FilmTrial(project, whole=whole)
        failing = failing_required(trial.base_reports)
        if not failing and until_pass:
            out.passing, out.stopped = True, "the required checks pass"
            break
        made = propose_film(project, interval, per_run=1 if approve_verified else 2, trial=trial,
                            batch=approve_verified)
        proposals, unsolved = list(made.proposals), list(made.unsolved)
        model_failed = ""
        if model_proposer is not None and made.runs:
            try:
                by_model = model_proposer(project, trial, made.runs)
            except Refused as e:
                model_failed = str(e)
            else:
                proposals += by_model.proposals
                unsolved += by_model.unsolved
        rnd = Round(n, failing, len(made.runs), [p.id for p in proposals], unsolved=unsolved,
                    model_failed=model_failed, kept=[p.id for p in made.proposals] if model_failed else [])
        if approve_verified:
            used: set[str] = set()
            for p in sorted(proposals, key=lambda p: p.check_name not in REQUIRED):
                segs = set(p.verified.get("basis", {}))
                if segs & used:
                    continue
                try:
                    approve_film_repair(project, p.id, stack, reviewer=BATCH)
                except Refused as e:
                    rnd.unsolved.append(f"repair {p.id} not applied: {e}")
                    continue
                used |= segs
                rnd.applied.append(f"#{p.id} {p.summary}")
        rnd.seconds = time.perf_counter() - t0
        out.rounds.append(rnd)
        if on_round:
            on_round(rnd)
        if not approve_verified:
            break
        if not rnd.applied:
            out.stopped = "no verified proposal applied: nothing helps"
            break
    else:
        out.stopped = out.stopped or f"stopped after {rounds} round(s)"
    if not out.passing:                  # the film as it now is, verified and stored for the export gate
        out.passing = not failing_required(verify_film(project))
        if out.passing and until_pass:
            out.stopped = "the required checks pass"
    return out
