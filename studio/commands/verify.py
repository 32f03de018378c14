"""`studio verify` and `studio score`: the verifiers and the paper's scorer from the command line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studio.checks.report import Report

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED, EXIT_OK, CommandError


def register(sub) -> None:
    p = sub.add_parser("verify", help="run the verifiers on a project's film, one state, or an animated .glb")
    p.add_argument("film", type=Path, help="a project folder or an animated glTF binary (.glb)")
    p.add_argument("--state", help="verify one storyboard state of the project instead of the film")
    p.add_argument("--json", type=Path, help="write the reports and metrics as JSON to this file")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("score", help="penetration, floating and joint violation rates, per film and mean")
    p.add_argument("films", type=Path, nargs="+", help="project folders or .glb files")
    p.add_argument("--json", type=Path, help="write the table as JSON to this file")
    p.set_defaults(func=cmd_score)


def _exists(path: Path) -> None:
    if not path.exists():
        raise CommandError(f"{path}: no such project folder or .glb file", EXIT_BAD_INPUT)


def _unexpected(film: Path, err: BaseException) -> CommandError:
    """A fault the verifier did not foresee: one line naming the file, reported as a bug (exit 3)."""
    if isinstance(err, MemoryError):
        return CommandError(f"{film}: out of memory while verifying it", EXIT_ENVIRONMENT)
    where = ""
    tb = err.__traceback__
    while tb is not None:
        where = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"
        tb = tb.tb_next
    log = _log_fault(film, err)
    return CommandError(f"{film}: the verifier failed unexpectedly ({type(err).__name__}: {str(err)[:200]}{where}); "
                        f"this is a bug in studio verify, please report it with the file{log}", EXIT_ENVIRONMENT)


def _log_fault(film: Path, err: BaseException) -> str:
    """The traceback, kept beside the verifier's cache for the bug report; ' and <path>' or ''."""
    import os
    import time
    import traceback
    root = os.environ.get("KEYPOSE_CACHE") or str(Path.home() / ".cache" / "keypose-studio")
    path = Path(root) / "logs" / f"verify-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"studio verify {film}\n" + "".join(traceback.format_exception(err)))
    except OSError:
        return ""
    return f" and {path}"


def cmd_verify(args) -> int:
    _exists(args.film)
    from studio.checks.glb import GlbError     # the verifiers' libraries load once there is a film
    try:
        return _verify(args)
    except (CommandError, KeyboardInterrupt):
        raise
    except GlbError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None
    except Exception as e:   # noqa: BLE001 - no traceback reaches the user
        if args.film.is_dir() and not isinstance(e, (MemoryError, AssertionError, ArithmeticError, TypeError,
                                                     AttributeError, IndexError, RecursionError)):
            raise          # project faults keep their own messages (cli.py)
        raise _unexpected(args.film, e) from None


def _verify(args) -> int:
    from studio.checks.glb import GlbError
    from studio.checks.report import failing_required, required_checks_pass
    from studio.checks.score import check_film, rates
    try:
        if args.film.is_dir():
            from studio.checks.run import verify_film, verify_state
            from studio.store.project import Project
            with Project.open(args.film) as project:
                reports = verify_state(project, args.state) if args.state else verify_film(project)
                if project.readonly:
                    why = "the disk is full" if project.full else "the project is read-only"
                    print(f"{project.path}: {why}: the reports are shown, not stored")
        else:
            if args.state:
                raise CommandError("--state needs a project folder, not a .glb", EXIT_BAD_INPUT)
            reports = check_film(args.film)
    except GlbError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None
    print_reports(reports)
    ok = required_checks_pass(reports)
    if args.json:
        out = {"film": str(args.film), "state": args.state, "required_pass": ok, "metrics": rates(reports),
               "reports": [r.to_dict() for r in reports]}
        args.json.write_text(_json(out))
    if not ok:
        print("required checks failing: " + "; ".join(failing_required(reports)))
    return EXIT_OK if ok else EXIT_FAILED


def _json(out: dict) -> str:
    """The JSON document, one report (or key) per line: json's fast encoder writes each line (an
    indented dump goes through its slow one, seconds on a film with thousands of evidence rows)."""
    lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in out.items() if k != "reports"]
    reports = ",\n  ".join(json.dumps(r) for r in out.get("reports", []))
    return "{\n" + ",\n".join(lines + [f' "reports": [\n  {reports}\n ]']) + "\n}\n"


HIDDEN = ("axis", "point", "trace", "between")     # vectors and tracebacks: in --json
LEAD = 22 + 1 + 15 + 1 + 8 + 1 + 8 + 2             # where the note column starts


def print_reports(reports: list[Report], width: int | None = None) -> None:
    """The table: one row per check, its note the first piece of evidence (or what a passing check
    met between frames), wrapped at whole fields onto lines of its own column, never cut; a check with
    more evidence says how many more and where they all are."""
    import shutil
    width = width or shutil.get_terminal_size((120, 24)).columns
    room = max(40, width - LEAD)
    print(f"{'check':<22} {'verdict':<15} {'evidence':>8} {'seconds':>8}  note")
    for r in reports:
        fields = []
        if r.evidence:
            e = r.evidence[0]
            fields = [f"{k}={v}" for k, v in e.items() if k not in HIDDEN and not (k == "frame" and "frames" in e)]
        elif r.metrics.get("met_between"):
            fields = [f"{v}," for v in r.metrics["met_between"].values()]
            fields[-1] = fields[-1][:-1]
        lines = _wrap(fields, room)
        if len(r.evidence) > 1:
            lines.append(f"({len(r.evidence) - 1} more: --json FILE lists every one)")
        print(f"{r.name:<22} {r.verdict:<15} {len(r.evidence):>8} {r.seconds:>8.3f}  {lines[0] if lines else ''}")
        for line in lines[1:]:
            print(" " * LEAD + line)


def _wrap(fields: list[str], room: int) -> list[str]:
    """Fields joined by ', ' into lines of at most `room` characters, a field never split (one longer
    than a line has a line of its own)."""
    lines: list[str] = []
    for i, f in enumerate(fields):
        piece = f + ("," if i < len(fields) - 1 and not f.endswith(",") else "")
        if lines and len(lines[-1]) + 1 + len(piece) <= room:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines


def _mean(rows: list[dict]) -> dict:
    out = {}
    for key in ("penetration_rate", "floating_rate", "joint_violation_rate", "between_rate"):
        vals = [r[key] for r in rows if r.get(key) is not None]
        out[key] = sum(vals) / len(vals) if vals else None
    return out


def cmd_score(args) -> int:
    from studio.checks.glb import GlbError
    from studio.checks.score import SCORED, check_film, rates
    rows = []
    for film in args.films:
        _exists(film)
        try:
            rows.append((str(film), rates(check_film(film, SCORED))))
        except GlbError as e:
            raise CommandError(str(e), EXIT_BAD_INPUT) from None
        except (MemoryError, ArithmeticError, TypeError, AttributeError, IndexError, RecursionError) as e:
            raise _unexpected(film, e) from None
    # Films whose folder ends in -single-pass are the bare baselines: each group gets its own mean.
    groups = {"films": [r for n, r in rows if not n.rstrip("/").endswith("-single-pass")],
              "single-pass": [r for n, r in rows if n.rstrip("/").endswith("-single-pass")]}
    means = {g: _mean(rs) for g, rs in groups.items() if rs}

    def pct(v) -> str:
        return f"{100 * v:.1f}%" if v is not None else "n/a"
    print(f"{'film':<40} {'frames':>7} {'penetration':>12} {'floating':>10} {'joint viol.':>12}  required")
    for name, r in rows:
        print(f"{name[-40:]:<40} {r['frames']:>7} {pct(r['penetration_rate']):>12} {pct(r['floating_rate']):>10} "
              f"{pct(r['joint_violation_rate']):>12}  {'pass' if r['required_pass'] else 'FAIL'}")
    for group, m in means.items():
        label = f"mean of {len(groups[group])} {'films' if group == 'films' else 'single-pass baselines'}"
        print(f"{label:<40} {'':>7} {pct(m['penetration_rate']):>12} "
              f"{pct(m['floating_rate']):>10} {pct(m['joint_violation_rate']):>12}")
    # penetration between frames is counted by frame pair, apart from the paper's per-frame rate
    between = [f"{Path(n).name or n} {r['frame_pairs_with_penetration']}" for n, r in rows
               if r.get("frame_pairs_with_penetration")]
    print("frame pairs penetrating between frames: " + (", ".join(between) if between else "none"))
    unsettled = [f"{Path(n).name or n} {r['frame_pairs_unsettled']}" for n, r in rows if r.get("frame_pairs_unsettled")]
    if unsettled:          # failing NoPenetration: the sweep proved neither a pass nor a penetration there
        print("frame pairs the sweep could not settle (failing): " + ", ".join(unsettled))
    if args.json:
        args.json.write_text(json.dumps({"films": [dict(r, film=n) for n, r in rows],
                                         "mean": means.get("films") or means.get("single-pass"),
                                         "means": means}, indent=1))
    return EXIT_OK
