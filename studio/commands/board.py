"""`studio board`: the storyboard from the command line — status, approve, reject, plan, progress."""
from __future__ import annotations

import json
from pathlib import Path

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED, CommandError
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.store.shown import shown
from studio.store.reports import load_reports
from studio.timeline import film
from studio.timeline.bake import bounds_hash
from studio.timeline.split import stale_reason
from studio.timeline.gate import board_status, check_status
from studio.timeline.plan import load_plan, plan_segments
from studio.timeline.reviews import by_whom
from studio.timeline.progress import progress
from studio.timeline.storyboard import content_hash, get_state


def register(sub) -> None:
    board = sub.add_parser("board", help="the storyboard: state status, reviews, plan, progress")
    bsub = board.add_subparsers(dest="board_command", metavar="ACTION")
    board.set_defaults(func=lambda args: board.print_help() or EXIT_BAD_INPUT)

    p = bsub.add_parser("status", help="every state with its status and reason, then the plan's segments")
    p.add_argument("path", type=Path)
    p.set_defaults(func=cmd_status)

    for verdict in ("approve", "reject"):
        p = bsub.add_parser(verdict, help=f"{verdict} a state (approve runs its checks first if needed)")
        p.add_argument("path", type=Path)
        p.add_argument("state")
        p.add_argument("--note", default="", help="what the reviewer saw or wants changed")
        p.add_argument("--reviewer", default="person")
        p.set_defaults(func=cmd_review, verdict=verdict)

    p = bsub.add_parser("adopt", help="make a simulated segment's second state the run's own end "
                                      "(then review it)")
    p.add_argument("path", type=Path)
    p.add_argument("segment", help="A..B, a segment whose plan tool is a simulation (simulate, planar)")
    p.add_argument("--reviewer", default="person", help="who adopts it (recorded in the audit log)")
    p.set_defaults(func=cmd_adopt)

    p = bsub.add_parser("plan", help="store a plan JSON file (checked against the scene)")
    p.add_argument("path", type=Path)
    p.add_argument("file", type=Path)
    p.set_defaults(func=cmd_plan)

    p = bsub.add_parser("progress", help="the project's progress figure and what is missing")
    p.add_argument("path", type=Path)
    p.set_defaults(func=cmd_progress)


def cmd_status(args) -> int:
    with Project.open(args.path) as project:
        rows = board_status(project)
        if not rows:
            print("no states: store a plan (studio board plan) and author its states")
            return 0
        for st in rows:
            frame = st.frame if st.frame is not None else "-"
            said = st.reasons[0] if st.reasons else st.reviewed          # a review's note is the project's text
            print(f"{shown(st.state_id, 64):<20} frame {frame!s:<6} {st.status:<10} {shown(said, 400)}")
            for why in st.reasons[1:]:
                print(f"{'':<38}{shown(why, 400)}")
        plan = load_plan(project)
        baked = {r["segment"]: r for r in film.list_segments(project)}
        for seg in plan_segments(plan) if plan else []:
            row = baked.get(seg)
            if row is None:
                state = "not baked"
            elif row["bounds_hash"] != bounds_hash(project, seg):
                state = f"stale: {stale_reason(row['bounds_hash'])} ({row['tool']})"
            else:
                state = f"baked {row['start']}..{row['end']} ({row['tool']})"
            print(f"segment {seg:<24} {state}")
    return 0


def _tool(project: Project, actor: str, name: str, arguments: dict):
    """One call of the tool layer as `actor`; a refusal is the command's answer (exit 1)."""
    from studio.tools.errors import ToolRefused
    from studio.tools.box import ToolBox
    from studio.store.keys import ReviewerKeyError
    try:
        return ToolBox(project, actor=actor).call(name, arguments)
    except ToolRefused as e:
        raise CommandError(str(e), EXIT_FAILED) from None
    except ReviewerKeyError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None


def cmd_review(args) -> int:
    with Project.open(args.path) as project:
        project.require_writable()
        state = get_state(project, args.state)
        if state is None:
            raise CommandError(f"{args.path}: no state {args.state!r} (see studio board status)", EXIT_BAD_INPUT)
        if args.verdict == "approve":
            scene = load_scene(project)
            chash = content_hash(scene, state.pose, state.frame)
            _, checked = load_reports(project, f"state:{state.id}")
            if checked != chash:                       # never checked, or checked another version
                print(f"running the checks of {state.id} ...")
                try:
                    _tool(project, args.reviewer, "run_verifiers", {"state": state.id})
                except ImportError as e:
                    raise CommandError(f"cannot run the checks of {state.id}: {e}", EXIT_ENVIRONMENT) from None
            failing = check_status(project, state.id, chash)
            if failing:
                raise CommandError(f"not approved: state {state.id} " + "; ".join(failing), EXIT_FAILED)
        out = _tool(project, args.reviewer, "review_state",
                    {"state": state.id, "verdict": args.verdict, "note": args.note})
        review_id = out.command.inner.review_id
        review = [r for r in project.db.query("SELECT * FROM reviews WHERE id = ?", [review_id])][0]
        seen = json.loads(review["visible"])
        visible = ", ".join(seen) if len(seen) <= 8 else f"{len(seen)} bodies ({', '.join(seen[:8])}, ...)"
        visible = visible or "nothing"
        print(f"{'approved' if args.verdict == 'approve' else 'rejected'} {state.id} "
              f"(content {review['content_hash']}, signed by {by_whom(args.reviewer)}); visible: {visible}")
    return 0


def cmd_adopt(args) -> int:
    """The `adopt_end_state` tool call from the command line; a segment that offers no end state of its
    own (its tool is no simulation, or it is no segment of the plan) is bad input."""
    from studio.timeline.author import segment_tool
    from studio.timeline.gate import parse_segment
    from studio.timeline.motion import motion_tool
    with Project.open(args.path) as project:
        project.require_writable()
        plan = load_plan(project)
        try:
            parse_segment(args.segment)
        except ValueError as e:
            raise CommandError(str(e), EXIT_BAD_INPUT) from None
        if args.segment not in plan_segments(plan or {}):
            raise CommandError(f"{args.path}: {args.segment} is no segment of the plan, so there is no run whose "
                               f"end could be adopted (see studio board status)", EXIT_BAD_INPUT)
        tool, _ = segment_tool(plan, args.segment)
        if not motion_tool(tool).offers_end:
            raise CommandError(f"{args.path}: {args.segment} is authored by {tool}, which offers no end state of "
                               f"its own; only a simulation (simulate, planar) does", EXIT_BAD_INPUT)
        out = _tool(project, args.reviewer, "adopt_end_state", {"segment": args.segment})
        r = out.result
        print(f"{r['state']} now holds the end of the run of {args.segment} ({r['worst']} was {r['metres']:.4f} m "
              f"and {r['radians']:.4f} rad off); review {r['state']} (studio board approve {args.path} {r['state']})")
    return 0


def cmd_plan(args) -> int:
    try:
        plan = json.loads(Path(args.file).read_text())
    except json.JSONDecodeError as e:
        raise CommandError(f"{args.file}: not valid JSON ({e.msg} at line {e.lineno})", EXIT_BAD_INPUT) from None
    if not isinstance(plan, dict):
        raise CommandError(f"{args.file}: expected a plan object, got {type(plan).__name__}", EXIT_BAD_INPUT)
    with Project.open(args.path) as project:
        try:
            _tool(project, "person", "set_plan", {"plan": plan})
        except CommandError as e:
            raise CommandError(f"{args.file}: {e}", EXIT_BAD_INPUT) from None
        print(f"stored the plan: {len(plan.get('states', []))} states, {len(plan.get('events', []))} events")
    return 0


def cmd_progress(args) -> int:
    with Project.open(args.path) as project:
        value, missing = progress(project)
        print(f"progress {value:.3f}")
        for m in missing:
            print(f"  {m}")
    return 0
