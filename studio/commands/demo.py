"""`studio demo`: the whole pipeline on an example film, headless, with a summary."""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from studio.commands import EXIT_BAD_INPUT, EXIT_FAILED, CommandError


def register(sub) -> None:
    p = sub.add_parser("demo", help="make an example film end to end, headless, and print a summary")
    p.add_argument("example", nargs="?", default="",
                   help="example name (a folder of resources/examples holding calls.jsonl), "
                        "or a projects/<name> folder (default: the first listed by --list)")
    p.add_argument("--list", action="store_true", help="list the examples and stop")
    p.add_argument("--out", type=Path, default=Path("out/demo"),
                   help="folder for the new project (default: out/demo/<example>)")
    p.add_argument("--approve", default="all",
                   help="states to approve once they pass: all, none, or ID,ID,... (default: all)")
    p.add_argument("--no-render", action="store_true", help="skip the Blender stills, film and export")
    p.add_argument("--resolution", default="", help="WIDTHxHEIGHT for the renders (default: the cameras')")
    p.set_defaults(func=cmd_demo)


class TextProgress:
    """Stage lines and a progress bar on a terminal; plain lines elsewhere."""

    cancelled = False

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.current = ""
        self._last = 0.0

    def stage(self, name: str) -> None:
        self._end_bar()
        self.current = name
        print(f"== {name}", file=self.stream, flush=True)

    def progress(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - self._last < (0.1 if self.tty else 2.0):
            return
        self._last = now
        width = 30
        filled = int(round(width * max(0.0, min(1.0, fraction))))
        bar = f"  [{'#' * filled}{'.' * (width - filled)}] {100 * fraction:5.1f}%  {message}"
        if self.tty:
            print("\r" + bar[:100].ljust(100), end="", file=self.stream, flush=True)
        else:
            print(bar, file=self.stream, flush=True)

    def _end_bar(self) -> None:
        if self.tty and self.current:
            print(file=self.stream)


def cmd_demo(args) -> int:
    from studio.examples import example_names
    from studio.examples.pipeline import PipelineError, run_pipeline

    if args.list:
        for n in example_names():
            print(n)
        return 0
    if not args.example:
        if not example_names():
            raise CommandError("no examples: resources/examples holds no <name>/calls.jsonl", EXIT_BAD_INPUT)
        args.example = example_names()[0]
    name = Path(args.example).name if Path(args.example).is_dir() else args.example
    if name not in example_names():
        raise CommandError(f"no example named {name!r}; there are: {', '.join(example_names())} "
                           "(the folders of resources/examples)", EXIT_BAD_INPUT)
    resolution = None
    if args.resolution:
        try:
            resolution = tuple(int(v) for v in args.resolution.lower().split("x"))
        except ValueError:
            raise CommandError(f"--resolution: expected WIDTHxHEIGHT, got {args.resolution!r}") from None
    out = args.out / name
    if out.exists():
        shutil.rmtree(out)    # the demo's own output from an earlier run; never a user's project
    t0 = time.perf_counter()
    progress = TextProgress()
    try:
        summary = run_pipeline(name, out, approve=args.approve, state=progress,
                               render=not args.no_render, resolution=resolution)
    except PipelineError as e:
        print(f"studio demo: {e}", file=sys.stderr)
        return EXIT_FAILED
    progress._end_bar()
    print(f"\nKeypose Studio demo: {name}  ({time.perf_counter() - t0:.1f} s)  project {summary.project}")
    print(f"{'stage':<14} {'seconds':>8}  result")
    for s in summary.stages:
        print(f"{s.name:<14} {s.seconds:8.2f}  {s.result}")
    print("\nkey states: " + ", ".join(f"{k} {v}" for k, v in summary.state_verdicts.items()))
    print("film checks:")
    for r in summary.film_reports:
        print(f"  {r.name:<22} {r.verdict}")
    for kind, path in summary.outputs.items():
        print(f"{kind:<6} {path}")
    return 0 if summary.required_pass else EXIT_FAILED
