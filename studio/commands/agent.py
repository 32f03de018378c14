"""`studio agent plan|repair|log|revert`: the agent from the command line.

plan    prompt -> fresh scene and motion briefs -> a validated plan (and, with
        --build, the tool loop that builds the scene and the key states)
repair  verified repair proposals for failing states (the model's, or the
        offline repairer's when no model is configured or with --offline);
        --apply ID approves one, --reject ID --note TEXT turns it down
log     the agent's steps (tokens, cost, time, what changed) and the proposals;
        --calls [OUT]: the project's accepted tool calls as a calls file
revert  put the scene and timeline back as they were after step N
replay  apply a calls file through the tool layer, gate enforced
check   what the model endpoint supports (streaming, tools, structured output),
        remembered in the settings
run-code  run a file as agent code, exactly as build_part_code runs the agent's
        CAD code (a job folder under jobs/, the same sandbox), for audits
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from studio.store.project import Project

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED, CommandError


def register(sub) -> None:
    p = sub.add_parser("agent", help="the agent: plan, repair, log, revert, replay")
    asub = p.add_subparsers(dest="agent_command", metavar="ACTION", required=True)

    q = asub.add_parser("plan", help="turn a prompt into a plan (needs a model)")
    q.add_argument("path", type=Path)
    q.add_argument("--prompt", required=True)
    q.add_argument("--build", action="store_true", help="then let the agent build the scene and key states")
    q.add_argument("--max-turns", type=int, default=12)
    q.set_defaults(func=cmd_plan)

    q = asub.add_parser("repair", help="propose, approve or reject repairs of failing states")
    q.add_argument("path", type=Path)
    q.add_argument("--state", action="append", help="only this state (repeatable); default: every state")
    q.add_argument("--offline", action="store_true", help="use the offline repairer even if a model is set")
    g = q.add_mutually_exclusive_group()
    g.add_argument("--apply", type=int, metavar="ID", help="approve proposal ID and apply it")
    g.add_argument("--reject", type=int, metavar="ID", help="reject proposal ID (with --note)")
    g.add_argument("--list", action="store_true", help="list the proposals and their status")
    q.add_argument("--note", default="")
    q.add_argument("--reviewer", default="person", help="who approves or rejects (signed with their key)")
    f = q.add_argument_group("baked motion")
    f.add_argument("--film", action="store_true", help="repair the baked film's failing runs between key states")
    f.add_argument("--interval", metavar="A..B", help="only the failing frames in A..B (implies --film)")
    f.add_argument("--until-pass", action="store_true", help="round after round until the required checks pass")
    f.add_argument("--max-rounds", type=int, default=10)
    f.add_argument("--approve-verified", action="store_true",
                   help="apply verified proposals each round (recorded as a batch run, never as a person)")
    q.set_defaults(func=cmd_repair)

    q = asub.add_parser("log", help="the agent's steps and repair proposals")
    q.add_argument("path", type=Path)
    q.add_argument("--json", action="store_true")
    q.add_argument("--calls", nargs="?", const="-", metavar="OUT",
                   help="write the project's tool calls as a calls file (to OUT, or stdout)")
    q.set_defaults(func=cmd_log)

    q = asub.add_parser("revert", help="restore the scene and timeline as they were after a step")
    q.add_argument("path", type=Path)
    q.add_argument("step", type=int)
    q.set_defaults(func=cmd_revert)

    from studio.commands.calls import add_replay
    add_replay(asub)
    q = asub.add_parser("run-code", help="run a file as agent code, in the agent's sandbox (for audits)")
    q.add_argument("path", type=Path)
    q.add_argument("file", type=Path)
    q.add_argument("--time-limit", type=float, default=60.0, metavar="S")
    q.set_defaults(func=cmd_run_code)

    q = asub.add_parser("check", help="what the model endpoint supports (tools, structured output, streaming)")
    q.add_argument("--endpoint", help="a named endpoint profile from the settings (default: the one in use)")
    q.set_defaults(func=cmd_check)


def _client():
    from studio.commands.model_lines import model_client
    return model_client()


def _refusals():
    from studio.store.errors import Refused
    return Refused


def cmd_plan(args) -> int:
    from studio.agent.loop import BUILD_TOOLS, run_tools
    from studio.agent.planner import make_plan
    client = _client()
    with Project.open(args.path) as project:
        try:
            result = make_plan(project, client, args.prompt)
        except _refusals() as e:
            raise CommandError(str(e), EXIT_FAILED) from None
        plan = result.plan
        print(f"plan stored as step {result.step} ({result.tokens} tokens, {result.attempts} attempt(s))")
        for s in plan["states"]:
            print(f"  state {s['id']:<16} frame {s['frame']:<6} shot {s['shot']:<10} {s['description']}")
        for e in plan.get("events", []):
            print(f"  event {e['id']:<16} {e['kind']:<13} {', '.join(e['subjects'])} {e['window']}")
        if args.build:
            try:
                loop = run_tools(project, client, "Build the scene this plan needs and author its key states.",
                                 max_turns=args.max_turns, on_event=lambda m: print(f"  {m}"), tools=BUILD_TOOLS)
            except _refusals() as e:
                raise CommandError(str(e), EXIT_FAILED) from None
            print(f"built in {loop.turns} turn(s), steps {loop.steps}, {len(loop.refused)} call(s) refused")
            if loop.final_text:
                print(loop.final_text)
    return 0


def _print_proposal(p) -> None:
    ok = p.verified.get("ok")
    print(f"  #{p.id} [{p.status}] {p.target} {p.check_name} ({p.source}{', verified' if ok else ''}): {p.summary}")
    for c in p.changes:
        if c["kind"] == "insert_state":
            print(f"      key state {c['state']} at {c['frame']}" + (f" splitting {c['split']}" if c.get("split") else ""))
        elif c["kind"] == "segment":
            print(f"      segment {c['segment']}: {c.get('from', {}).get('tool')} -> {c['tool']} {json.dumps(c['params'])}")
        else:
            print(f"      {c['kind']} {c['name']}: {_short(c['from'])} -> {_short(c['to'])}")
    if p.note:
        print(f"      note: {p.note}")


def _short(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(f"{x:.4f}" for x in v) + "]"
    return f"{v:.4f}"


def cmd_repair(args) -> int:
    from studio.repair import proposals as repairs
    from studio.repair.offline import propose_offline
    from studio.timeline.storyboard import list_states
    Refused = _refusals()
    if (args.film or args.interval or args.until_pass or args.approve_verified) and args.apply is None \
            and args.reject is None and not args.list:
        from studio.commands.film_repair import cmd_repair_film
        return cmd_repair_film(args)
    with Project.open(args.path) as project:
        try:
            if args.apply is not None:
                if repairs.get_proposal(project, args.apply).target.startswith("film:"):
                    from studio.commands.film_repair import apply_film
                    return apply_film(project, args.apply, args.reviewer)
                cmd = repairs.approve(project, args.apply, reviewer=args.reviewer)
                print(f"applied: {cmd.label}")
                return 0
            if args.reject is not None:
                repairs.reject(project, args.reject, args.note, reviewer=args.reviewer)
                print(f"rejected repair {args.reject}: {args.note}")
                return 0
            if args.list:
                for p in repairs.list_proposals(project):
                    _print_proposal(p)
                return 0
            ids = args.state or [s.id for s in list_states(project)]
            if not ids:
                raise CommandError(f"{args.path}: the storyboard has no states to repair", EXIT_BAD_INPUT)
            client = None
            if not args.offline:
                from studio.commands.model_lines import model_client
                try:
                    client = model_client()
                except CommandError as e:
                    if e.code != EXIT_ENVIRONMENT:
                        raise
                    print("no model configured: using the offline repairer")
            left = 0
            for sid in ids:
                if client is not None:
                    from studio.agent.model_repair import propose_with_model
                    made, unsolved = propose_with_model(project, client, sid)
                else:
                    made, unsolved = propose_offline(project, sid)
                for p in made:
                    _print_proposal(p)
                for u in unsolved:
                    print(f"  state {sid}: {u}")
                if not made and not unsolved:
                    print(f"  state {sid}: no failure the repairers handle (NoPenetration, Supported, JointLimits)")
                left += len(unsolved)
        except Refused as e:
            raise CommandError(str(e), EXIT_FAILED) from None
    return EXIT_FAILED if left else 0


def cmd_log(args) -> int:
    from studio.repair.proposals import list_proposals
    from studio.agent.steps import list_steps
    if args.calls:
        from studio.commands.calls import write_history
        return write_history(args.path, args.calls)
    from studio.timeline.reviews import by_whom, list_reviews, reviewer_kinds
    with Project.open(args.path) as project:
        steps = list_steps(project)
        proposals = list_proposals(project)
        reviews, kinds = list_reviews(project), reviewer_kinds(project)
        if args.json:
            json.dump({"steps": [{k: v for k, v in s.items()} for s in steps],
                       "repairs": [{"id": p.id, "target": p.target, "check": p.check_name, "status": p.status,
                                    "source": p.source, "summary": p.summary, "note": p.note} for p in proposals],
                       "reviews": [{"id": r.id, "state": r.state_id, "verdict": r.verdict, "reviewer": r.reviewer,
                                    "kind": kinds.get(r.reviewer, "unsigned"), "signed": r.signed, "at": r.at,
                                    "note": r.note} for r in reviews]},
                      sys.stdout, indent=1)
            print()
            return 0
        print(f"{'step':>4}  {'at':<23}  {'tokens':>6}  {'in/out':>11}  {'cost':>9}  {'seconds':>7}  action")
        for s in steps:
            d = s["detail"]
            what = d.get("result", {}).get("done") or d.get("prompt") or ""
            inout = f"{d['tokens_in']}/{d['tokens_out']}" if "tokens_in" in d else ""
            cost = f"{d['cost']:.4f}" if "cost" in d else ""
            print(f"{s['id']:>4}  {s['at']:<23}  {s['tokens']:>6}  {inout:>11}  {cost:>9}  {s['seconds']:>7.2f}  "
                  f"{s['action']}{': ' + str(what)[:60] if what else ''}")
            if d.get("failed"):
                print(f"{'':>6}failed: {str(d['failed'])[:200]}")
            for a in d.get("requests", []):
                rcost = f", cost {a['cost']:.4f}" if a.get("cost") is not None else ""
                how = (a.get("finish") or "") if a.get("ok") else f"failed: {str(a.get('error', ''))[:120]}"
                print(f"{'':>6}request {a['kind']:<8} {a.get('tokens_in', 0)}/{a.get('tokens_out', 0)} tokens "
                      f"(max {a.get('max_tokens', '?')}), {a.get('seconds', 0):.2f} s{rcost}{'; ' + how if how else ''}")
        if proposals:
            print("repairs")
            for p in proposals:
                _print_proposal(p)
        if reviews:
            print("reviews")
            for r in reviews:
                who = by_whom(r.reviewer, kinds.get(r.reviewer)) if r.signed else f"{r.reviewer} (unsigned)"
                print(f"{r.id:>4}  {r.at:<23}  {r.verdict:<7} {r.state_id} by {who}")
    return 0


def cmd_revert(args) -> int:
    from studio.agent.steps import revert
    with Project.open(args.path) as project:
        step = revert(project, args.step)
        print(f"reverted to step {args.step}; recorded as step {step}")
    return 0


def cmd_check(args) -> int:
    from studio.agent.endpoint_check import check_endpoint
    from studio.agent.errors import AgentError
    from studio.store.endpoints import profiles
    from studio.store.settings import load_settings, settings_path
    try:
        settings = load_settings()
        known = profiles(settings)
    except ValueError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None
    if args.endpoint:
        if args.endpoint not in known:
            names = ", ".join(known) or "none"
            raise CommandError(f"{settings_path()}: no endpoint profile {args.endpoint!r} (profiles: {names})",
                               EXIT_BAD_INPUT)
        settings = {**settings, "endpoint": args.endpoint}
    from studio.commands.model_lines import model_client
    client = model_client(settings, max_retries=0)
    ep = client.endpoint
    print(f"endpoint {ep.name or 'default'}: {client.base_url}, model {client.model}")
    try:
        found = check_endpoint(client)
    except AgentError as e:
        unreachable = str(e).startswith("cannot reach") or "did not answer" in str(e)
        raise CommandError(str(e), EXIT_ENVIRONMENT if unreachable else EXIT_FAILED) from None
    for line in found.lines():
        print(line)
    if ep.named:
        where = f"remembered in {settings_path()} (profile {ep.name})"
    elif ep.overridden:
        where = (f"not remembered: {ep.overridden} overrides the settings; the profile "
                 f"{ep.name!r} is left as it is" if ep.from_profile else
                 f"not remembered: {ep.overridden} sets the endpoint, which is no named profile")
    else:
        where = "not remembered: the flat model_* settings are no named profile (add one under \"endpoints\")"
    print(f"found in {found.seconds:.2f} s; {where}")
    for p in found.problems:
        print(f"problem: {p}")
    return EXIT_FAILED if found.problems else 0


def cmd_run_code(args) -> int:
    from studio.sandbox.errors import SandboxMissing, SandboxRefused
    from studio.tools.scene_tools import run_part_code
    try:
        code = args.file.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise CommandError(f"{args.file}: cannot read the code ({e})", EXIT_BAD_INPUT) from None
    if not args.time_limit > 0:
        raise CommandError(f"--time-limit {args.time_limit:g}: expected a positive number of seconds", EXIT_BAD_INPUT)
    with Project.open(args.path) as project:
        try:
            run = run_part_code(project, code, args.time_limit)
        except SandboxMissing as e:
            raise CommandError(str(e), EXIT_ENVIRONMENT) from None
        except SandboxRefused as e:
            raise CommandError(str(e), EXIT_ENVIRONMENT) from None
    print(f"job folder: {run.job_dir}")
    from studio.store.shown import shown_block
    for name in ("stdout", "stderr"):
        text = shown_block(getattr(run, name).rstrip())       # no terminal escapes, no endless line
        if text:
            print(f"--- {name}\n{text}")
    from studio.store.shown import shown
    print(f"wrote: {', '.join(shown(f) for f in run.files) or 'nothing'}")
    if run.left_out:
        print("left out (never copied out of the sandbox): "
              + ", ".join(f"{n} {kind}" for kind, n in sorted(run.left_out.items())))
    print(f"exit status: {run.returncode}; {'ok' if run.ok else run.failure()}")
    return 0 if run.ok else EXIT_FAILED
