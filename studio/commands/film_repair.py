"""`studio agent repair PROJECT --film|--interval A..B [--until-pass] [--max-rounds N] [--approve-verified]`:
repairs of the baked motion, round by round, each round reported; `--apply ID` of a film proposal."""
from __future__ import annotations

import re

from studio.store.project import Project

from studio.commands import EXIT_BAD_INPUT, EXIT_FAILED, CommandError


def parse_interval(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    m = re.fullmatch(r"\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", text)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise CommandError(f"--interval {text!r}: expected A..B, two frames with A <= B (e.g. 1180..1210)",
                           EXIT_BAD_INPUT)
    return int(m.group(1)), int(m.group(2))


def _model_proposer(offline: bool):
    """The model's film repairs for the search to try beside its own, or None (offline, or no model)."""
    if offline:
        return None
    from studio.agent.model_motion_repair import propose_film_with_model
    from studio.commands import EXIT_ENVIRONMENT
    from studio.commands.model_lines import model_client
    try:
        client = model_client()
    except CommandError as e:
        if e.code != EXIT_ENVIRONMENT:
            raise
        print("no model configured: using the offline rules")
        return None
    return lambda project, trial, runs: propose_film_with_model(project, client, trial, runs)


def cmd_repair_film(args) -> int:
    from studio.repair.film_loop import repair_film
    from studio.store.errors import Refused
    from studio.repair.proposals import get_proposal
    interval = parse_interval(args.interval)
    if args.max_rounds < 1:
        raise CommandError(f"--max-rounds {args.max_rounds}: expected at least 1", EXIT_BAD_INPUT)
    with Project.open(args.path) as project:
        model_proposer = _model_proposer(args.offline)
        failed_rounds: list[int] = []

        def report(rnd) -> None:
            failing = ", ".join(rnd.failing) or "none"
            print(f"round {rnd.number}: required failing: {failing}; {rnd.runs} failing run(s), "
                  f"{len(rnd.proposals)} verified proposal(s), {len(rnd.applied)} applied ({rnd.seconds:.1f} s)")
            for pid in rnd.proposals:
                p = get_proposal(project, pid)
                mark = "applied" if any(a.startswith(f"#{pid} ") for a in rnd.applied) else p.status
                print(f"  #{pid} [{mark}] {p.target} {p.check_name} ({p.source}): {p.summary}")
            for u in rnd.unsolved:
                print(f"  unsolved: {u}")
            if rnd.model_failed:
                kept = ", ".join(f"#{i}" for i in rnd.kept) or "none"
                print(f"  the model's round failed: {rnd.model_failed}")
                print(f"  kept the offline proposals: {kept}")
                failed_rounds.append(rnd.number)
        try:
            result = repair_film(project, until_pass=args.until_pass, max_rounds=args.max_rounds,
                                 approve_verified=args.approve_verified, interval=interval, model_proposer=model_proposer,
                                 on_round=report)
        except (Refused, ValueError) as e:
            raise CommandError(str(e), EXIT_FAILED) from None
        print(f"{len(result.rounds)} round(s), {result.proposals} proposal(s), {result.applied} applied; "
              f"required checks {'pass' if result.passing else 'fail'}"
              + (f" ({result.stopped})" if result.stopped else ""))
        if args.approve_verified and result.applied:
            print("applied as a batch run: the audit log and the reviews name the reviewer 'batch', not a person")
    if failed_rounds:
        return EXIT_FAILED
    if args.until_pass or args.approve_verified:
        return 0 if result.passing else EXIT_FAILED
    return 0 if result.proposals or result.passing else EXIT_FAILED


def apply_film(project: Project, repair_id: int, reviewer: str) -> int:
    from studio.repair.motion_repair import approve_film_repair
    from studio.store.errors import Refused
    try:
        cmd = approve_film_repair(project, repair_id, reviewer=reviewer)
    except Refused as e:
        raise CommandError(str(e), EXIT_FAILED) from None
    print(f"applied: {cmd.label}; re-baked {', '.join(cmd.baked)}")
    for sid in cmd.keyed:
        print(f"  key state {sid} inserted and approved by {reviewer} with the repair")
    return 0
