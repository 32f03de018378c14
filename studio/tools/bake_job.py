"""The bake job's process: read the spec, check the gate for every segment,
bake them as tool calls, write out/bake.json and the finish marker.

A simulated segment whose run ends away from its approved second state is
refused with the run's end offered instead: the offer is kept with the job
(`out/offered.json`, read by `studio bake --adopt-end` and the window's Adopt
end state), and with `adopt_end` in the spec the job adopts it at once
(`adopt_end_state`, a tool call like the bake), leaving the state for a person
to review before that segment can be baked.

Progress goes to stdout as JSON lines, as the Blender worker's does. A gate
refusal bakes nothing: every segment is checked before the first is stored.
Each segment is one `author_segment` call of the tool layer, naming the motion
tool and parameters its plan entry gives, made as the job (`job:<id>`): so a
bake from `studio bake`, the window or the queue is in the project's calls like
any other edit, and `studio agent log --calls` replays it.
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from studio.jobs.bake_spec import OFFERED, OUTPUT
from studio.jobs.contract import emit, finish
from studio.store.project import write_atomic
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.author import segment_tool
from studio.timeline.film import list_segments
from studio.timeline.gate import GateError, require_storyboards
from studio.timeline.motion import MotionError, check_params, motion_tool
from studio.timeline.plan import load_plan, segment_entry
from studio.tools.box import ToolBox
from studio.tools.errors import ToolRefused


def author_call(plan: dict | None, segment: str) -> dict:
    """The `author_segment` arguments that bake `segment` as its plan entry says."""
    args: dict = {"segment": segment}
    entry = segment_entry(plan, segment)
    if entry.get("tool"):
        args["tool"], args["params"] = segment_tool(plan, segment)
    return args


def run(spec_path: str | Path) -> int:
    spec_path = Path(spec_path)
    folder = spec_path.parent
    spec = json.loads(spec_path.read_text())
    segments = list(spec["segments"])
    with Project.open(spec["project"]) as project:
        scene = load_scene(project)
        emit(stage="start", segments=len(segments))
        plan = load_plan(project)
        adopt = bool(spec.get("adopt_end"))
        refusals, to_adopt = [], []
        for seg in segments:
            try:
                check_params(*segment_tool(plan, seg), f"{seg} params", scene)
                require_storyboards(project, seg, scene)
            except GateError as e:
                if adopt and offers_end(plan, seg) and _first_passes(project, seg, scene):
                    to_adopt.append(seg)         # the second state is what adopting replaces
                else:
                    refusals.append(str(e))
            except MotionError as e:
                refusals.append(str(e))
        if refusals:
            emit(stage="error", message=" | ".join(refusals))
            return 1
        box = ToolBox(project, actor=f"job:{folder.name}")
        if to_adopt:
            return adopt_now(box, to_adopt[0])
        for i, seg in enumerate(segments, 1):
            try:
                out = box.call("author_segment", author_call(plan, seg))
            except ToolRefused as e:
                if e.offer is not None:
                    return offered(box, folder, e, bool(spec.get("adopt_end")))
                emit(stage="error", message=str(e))
                return 1
            notes = out.result.get("notes")
            emit(stage="segment", segment=seg, tool=out.result["tool"], done=i, total=len(segments),
                 **({"notes": notes} if notes else {}))
        rows = {r["segment"]: r for r in list_segments(project)}
        listing = {"segments": [{"segment": s, "tool": rows[s]["tool"], "tracks_hash": rows[s]["hash"],
                                 "frames": [rows[s]["start"], rows[s]["end"]]} for s in segments]}
    return finish(folder, OUTPUT, listing, {"segments": segments})


def offers_end(plan: dict | None, segment: str) -> bool:
    return motion_tool(segment_tool(plan, segment)[0]).offers_end


def _first_passes(project: Project, segment: str, scene) -> bool:
    try:
        require_storyboards(project, segment, scene, first_only=True)
    except GateError:
        return False
    return True


def adopt_now(box: ToolBox, segment: str) -> int:
    """Adopt a simulation's end as its second state (which the gate does not pass yet), then stop."""
    try:
        out = box.call("adopt_end_state", {"segment": segment})
    except ToolRefused as e:
        emit(stage="error", message=str(e))
        return 1
    r = out.result
    emit(stage="adopted", segment=segment, state=r["state"])
    emit(stage="error", message=f"{r['state']} now holds the end of the run of {segment} ({r['worst']} was "
                                f"{r['metres']:.4f} m and {r['radians']:.4f} rad off); review {r['state']}, "
                                f"then bake again")
    return 1


def offered(box: ToolBox, folder: Path, refusal: ToolRefused, adopt: bool) -> int:
    """A simulation's end offered instead of a bake: kept with the job, adopted when asked."""
    offer = refusal.offer
    out = folder / OFFERED
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(offer, indent=1, sort_keys=True).encode())
    worst = offer["differences"][offer["worst"]]
    emit(stage="offered", segment=offer["segment"], state=offer["state"], body=offer["worst"],
         metres=worst["metres"], radians=worst["radians"])
    if not adopt:
        emit(stage="error", message=str(refusal))
        return 1
    return adopt_now(box, offer["segment"])


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: python -m {__name__} SPEC.json", file=sys.stderr)
        return 2
    try:
        return run(argv[0])
    except Exception as e:    # the job's error says what went wrong; the log keeps the trace
        traceback.print_exc(file=sys.stdout)
        emit(stage="error", message=f"{type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
