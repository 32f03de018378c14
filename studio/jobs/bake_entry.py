"""The bake job's process: read the spec, check the gate for every segment,
bake them, write out/bake.json and the finish marker.

Progress goes to stdout as JSON lines, as the Blender worker's does. A gate
refusal bakes nothing: every segment is checked before the first is stored.
Each segment is authored by the motion tool its plan entry names, through the
one generic bake (`studio.timeline.author`).
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from studio.scene.io import load_scene
from studio.store.project import Project, sha256_file, write_atomic
from studio.timeline.author import author_and_bake, check_params, segment_tool
from studio.timeline.film import list_segments
from studio.timeline.gate import GateError, require_storyboards
from studio.timeline.motion import MotionError
from studio.timeline.plan import load_plan

from .bake_spec import OUTPUT
from .contract import MARKER

def emit(**event) -> None:
    print(json.dumps(event), flush=True)


def run(spec_path: str | Path) -> int:
    spec_path = Path(spec_path)
    folder = spec_path.parent
    spec = json.loads(spec_path.read_text())
    segments = list(spec["segments"])
    actor = f"job:{folder.name}"
    with Project.open(spec["project"]) as project:
        scene = load_scene(project)
        emit(stage="start", segments=len(segments))
        plan = load_plan(project)
        refusals = []
        for seg in segments:
            try:
                require_storyboards(project, seg, scene)
                check_params(*segment_tool(plan, seg), f"{seg} params")
            except (GateError, MotionError) as e:
                refusals.append(str(e))
        if refusals:
            emit(stage="error", message=" | ".join(refusals))
            return 1
        for i, seg in enumerate(segments, 1):
            baked = author_and_bake(project, seg, actor, scene=scene)
            emit(stage="segment", segment=seg, tool=baked.tool, done=i, total=len(segments),
                 **({"notes": baked.notes} if baked.notes else {}))
        rows = {r["segment"]: r for r in list_segments(project)}
        listing = {"segments": [{"segment": s, "tool": rows[s]["tool"], "tracks_hash": rows[s]["hash"],
                                 "frames": [rows[s]["start"], rows[s]["end"]]} for s in segments]}
    return finish(folder, OUTPUT, listing, {"segments": segments})


def finish(folder: Path, output: str, result: dict, marker: dict) -> int:
    """The done contract from a job process of the studio's own Python: the one output, its
    hash reported, then the finish marker (see `contract`)."""
    out = folder / output
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(result, indent=1, sort_keys=True).encode())
    emit(stage="output", output=output, sha256=sha256_file(out))
    write_atomic(folder / MARKER, json.dumps(marker).encode())
    emit(stage="done")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m studio.jobs.bake_entry SPEC.json", file=sys.stderr)
        return 2
    try:
        return run(argv[0])
    except Exception as e:    # the job's error says what went wrong; the log keeps the trace
        traceback.print_exc(file=sys.stdout)
        emit(stage="error", message=f"{type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
