"""The bake job's process: read the spec, check the gate for every segment,
bake them, write out/bake.json and the finish marker.

Progress goes to stdout as JSON lines, as the Blender worker's does. A gate
refusal bakes nothing: every segment is checked before the first is stored.
`run(spec_path, author)` is shared with the example films' story entry.
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Callable

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.store.project import Project, sha256_file, write_atomic
from studio.timeline.bake import bake_segment
from studio.timeline.film import list_segments
from studio.timeline.gate import GateError, parse_segment, require_storyboards
from studio.timeline.interpolate import interpolate_poses
from studio.timeline.storyboard import get_state

from .bake_spec import OUTPUT
from .contract import MARKER

Author = Callable[[Project, Scene, list, str, Callable[[str], None]], None]


def emit(**event) -> None:
    print(json.dumps(event), flush=True)


def interpolate(project: Project, scene: Scene, segments: list[str], actor: str,
                baked: Callable[[str], None]) -> None:
    """Ease in and out between each segment's two approved states."""
    for seg in segments:
        a, b = (get_state(project, sid) for sid in parse_segment(seg))
        tracks = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
        bake_segment(project, seg, tracks, "interpolate", actor=actor, scene=scene)
        baked(seg)


def run(spec_path: str | Path, author: Author = interpolate) -> int:
    spec_path = Path(spec_path)
    folder = spec_path.parent
    spec = json.loads(spec_path.read_text())
    segments = list(spec["segments"])
    actor = f"job:{folder.name}"
    with Project.open(spec["project"]) as project:
        scene = load_scene(project)
        emit(stage="start", tool=spec.get("tool", "interpolate"), segments=len(segments))
        refusals = []
        for seg in segments:
            try:
                require_storyboards(project, seg, scene)
            except GateError as e:
                refusals.append(str(e))
        if refusals:
            emit(stage="error", message=" | ".join(refusals))
            return 1
        done: list[str] = []

        def baked(seg: str) -> None:
            done.append(seg)
            emit(stage="segment", segment=seg, done=len(done), total=len(segments))

        author(project, scene, segments, actor, baked)
        rows = {r["segment"]: r for r in list_segments(project)}
        listing = {"tool": spec.get("tool", "interpolate"),
                   "segments": [{"segment": s, "tracks_hash": rows[s]["hash"], "frames": [rows[s]["start"], rows[s]["end"]]}
                                for s in segments if s in rows]}
    missing = [s for s in segments if s not in {x["segment"] for x in listing["segments"]}]
    if missing:
        emit(stage="error", message=f"the {listing['tool']} tool baked no tracks for {', '.join(missing)}")
        return 1
    out = folder / OUTPUT
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(listing, indent=1, sort_keys=True).encode())
    emit(stage="output", output=OUTPUT, sha256=sha256_file(out))
    write_atomic(folder / MARKER, json.dumps({"segments": segments}).encode())
    emit(stage="done")
    return 0


def main(argv: list[str], author: Author = interpolate) -> int:
    if len(argv) != 1:
        print("usage: python -m studio.jobs.bake_entry SPEC.json", file=sys.stderr)
        return 2
    try:
        return run(argv[0], author)
    except Exception as e:    # the job's error says what went wrong; the log keeps the trace
        traceback.print_exc(file=sys.stdout)
        emit(stage="error", message=f"{type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
