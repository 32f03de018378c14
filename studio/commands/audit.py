"""`studio audit verify PROJECT`: check the audit chain and every review signature, and name every
schema object in studio.db (table, view, index, trigger) that the studio did not create."""
from __future__ import annotations

from pathlib import Path

from studio.store.project import Project
from studio.store.schema import foreign_objects
from studio.timeline.reviews import by_whom
from studio.timeline.trust import verify_project

from studio.commands import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK


def register(sub) -> None:
    audit = sub.add_parser("audit", help="the project's audit log: verify its chain and review signatures")
    asub = audit.add_subparsers(dest="audit_command", metavar="ACTION")
    audit.set_defaults(func=lambda args: audit.print_help() or EXIT_BAD_INPUT)
    p = asub.add_parser("verify", help="check the hash chain and every signature; name the first bad row")
    p.add_argument("path", type=Path)
    p.set_defaults(func=cmd_verify)


def cmd_verify(args) -> int:
    with Project.open(args.path) as project:
        v = verify_project(project)
        foreign = foreign_objects(project.db.conn)
    if not v.ok:
        print(f"{args.path}: the audit log fails verification at {v.problem}")
        return EXIT_FAILED
    if foreign:
        print(f"{args.path}: studio.db holds {len(foreign)} schema object(s) the studio did not create "
              f"(a trigger among them stops every write until it is removed):")
        for o in foreign:
            print(f"  {o}")
        return EXIT_FAILED
    who = ", ".join(f"{name} ({by_whom(name, kind) if kind != 'person' else 'person'}, key {v.fingerprints[name]})"
                    for name, kind in sorted(v.reviewers.items())) or "none"
    unsigned = (f"; {v.unsigned} unsigned from before signing (they approve nothing until reviewed again)"
                if v.unsigned else "")
    print(f"{args.path}: audit log intact: {v.rows} rows chained, {v.reviews - v.unsigned} signed reviews "
          f"verified{unsigned}; reviewers: {who}")
    return EXIT_OK
