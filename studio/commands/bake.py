"""`studio bake`: motion between approved states, run as a background bake job
(the same job the Jobs panel's "Bake motion" runs), with its progress printed.
Each segment is authored by the motion tool its plan entry names (interpolate
when none)."""
from __future__ import annotations

import sys
from pathlib import Path

from studio.commands import EXIT_BAD_INPUT, EXIT_FAILED, CommandError


def register(sub) -> None:
    p = sub.add_parser("bake", help="bake motion between approved states as a job (refused by the gate)")
    p.add_argument("path", type=Path)
    p.add_argument("--segment", action="append", help="A..B (repeatable; default: every plan segment)")
    p.add_argument("--adopt-end", action="store_true",
                   help="where a simulation ends away from its second state, make that state the run's end "
                        "(it then needs a review before the segment bakes)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_bake)


def cmd_bake(args) -> int:
    from studio.jobs import queue
    from studio.jobs.bake_spec import BakeSpecError, bake_spec
    from studio.jobs.dispatch import recover_jobs
    from studio.jobs.local import JobWatch, run_job
    from studio.store.project import Project

    def on_event(job_id: int, e: dict) -> None:
        if args.quiet:
            return
        if e.get("stage") == "segment":
            print(f"  job {job_id}: baked {e['segment']} with {e.get('tool', '?')} ({e['done']}/{e['total']})",
                  flush=True)
            for note in e.get("notes", []):
                print(f"    note: {note}", flush=True)
        elif e.get("stage") == "offered":
            print(f"  job {job_id}: {e['segment']}: the run ends away from {e['state']}, furthest at {e['body']} "
                  f"({e['metres']:.4f} m, {e['radians']:.4f} rad); its end is offered as {e['state']}", flush=True)
        elif e.get("stage") == "adopted":
            print(f"  job {job_id}: adopted the end of {e['segment']} as {e['state']} (a tool call); "
                  f"{e['state']} needs a review", flush=True)
        elif e.get("stage") == "error":
            print(f"  job {job_id}: error: {e.get('message', '')}", flush=True)

    with Project.open(args.path) as project:
        recover_jobs(project, {})
        try:
            job = queue.submit(project, "bake", lambda d: bake_spec(project, d, args.segment, args.adopt_end))
        except (BakeSpecError, ValueError) as e:
            raise CommandError(str(e), EXIT_BAD_INPUT) from None
        print(f"job {job.id}: bake queued ({len(job.spec['segments'])} segments)", flush=True)
        job = run_job(project, job.id, JobWatch(on_event=on_event), {})
        if job.state == "succeeded":
            print(f"job {job.id}: baked {', '.join(job.spec['segments'])}")
            return 0
        print(f"job {job.id}: {job.state}: {job.error}", file=sys.stderr)
        print(f"  log: {queue.job_dir(project, job.id) / 'log.txt'}", file=sys.stderr)
        return EXIT_FAILED
