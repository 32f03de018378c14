"""Motion per segment, without Qt: which segments the timeline has, what the
plan says each is made by, a preview of a tool's result, and the plan a person
writes from the keys without a model.

A segment is a pair of consecutive key states. The plan's motion entries name
their tools; a pair of keys the plan does not list yet is offered all the same
(the Motion dock then writes the plan from the keys first). The preview
authors one segment in memory with the repair search's own trial bake
(`repair.motion_trial.bake_in_memory`: the tool, then complete, pin and clip
as a bake would) on a copy of the plan naming the tool: nothing is stored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from studio.scene.io import load_scene
from studio.scene.pose import Tracks
from studio.store.project import Project
from studio.timeline.author import DEFAULT_TOOL, segment_tool
from studio.timeline.film import list_segments
from studio.timeline.plan import load_plan, plan_from_keys, plan_segments
from studio.timeline.storyboard import State, list_states


@dataclass
class SegmentRow:
    segment: str
    a: str
    b: str
    first: int
    last: int
    in_plan: bool
    tool: str = DEFAULT_TOOL
    params: dict = field(default_factory=dict)
    named: bool = False             # the plan names a tool (else interpolate by default)
    baked_by: str = ""              # the tool its stored tracks were baked with, "" if not baked

    @property
    def words(self) -> str:
        made = f"{self.tool}" + ("" if self.named else " (default)")
        baked = f"baked by {self.baked_by}" if self.baked_by else "not baked"
        return f"frames {self.first}–{self.last} · {made} · {baked}" + (
            "" if self.in_plan else " · not in the plan yet")


def segment_rows(project: Project, states: list[State]) -> list[SegmentRow]:
    """The plan's segments whose states are keyed, then consecutive keys the plan does not list."""
    plan = load_plan(project)
    frames = {s.id: s.frame for s in states}
    baked = {r["segment"]: r["tool"] for r in list_segments(project)}
    rows: list[SegmentRow] = []
    planned = plan_segments(plan) if plan else []
    for seg in planned:
        a, b = seg.split("..")
        if a in frames and b in frames:
            tool, params = segment_tool(plan, seg)
            named = any(m.get("segment") == seg and m.get("tool") for m in plan.get("motion", []))
            rows.append(SegmentRow(seg, a, b, frames[a], frames[b], True, tool, params, named, baked.get(seg, "")))
    listed = {r.segment for r in rows}
    covered = [(r.first, r.last) for r in rows]
    ordered = sorted(states, key=lambda s: (s.frame, s.id))
    for x, y in zip(ordered, ordered[1:]):
        seg = f"{x.id}..{y.id}"
        if seg in listed or any(f0 <= x.frame and y.frame <= f1 for f0, f1 in covered):
            continue
        rows.append(SegmentRow(seg, x.id, y.id, x.frame, y.frame, False, baked_by=baked.get(seg, "")))
    return sorted(rows, key=lambda r: (r.first, r.last))


def segment_at(rows: list[SegmentRow], frame: int) -> SegmentRow | None:
    """The segment the frame falls in (the later one on a shared key's frame, none past the ends)."""
    inside = [r for r in rows if r.first <= frame <= r.last]
    return inside[-1] if inside else None


def plan_call(project: Project, states: list[State], camera: str, shot: str) -> dict:
    """The set_plan arguments that make the plan from the keys (see timeline.plan.plan_from_keys)."""
    return {"plan": plan_from_keys(states, camera, shot, load_plan(project))}


def preview_tracks(path: str | Path, segment: str, tool: str, params: dict, state=None) -> Tracks:
    """The segment as `tool` with `params` would bake it, authored in memory (a plain function for a
    worker: it opens its own connection to the project, and reads only)."""
    from studio.repair.motion_trial import RepairUnfit, bake_in_memory, plan_after
    with Project.open(path) as project:
        scene = load_scene(project)
        plan, _, _ = plan_after(load_plan(project), [{"kind": "segment", "segment": segment, "tool": tool,
                                                      "params": params}])
        states = {s.id: State(s.id, s.frame, s.pose.completed(scene), s.shot, s.description)
                  for s in list_states(project)}
        if state is not None:
            state.progress(0.1, f"authoring {segment} with {tool}")
        try:
            return bake_in_memory(project, scene, plan, states, segment)
        except RepairUnfit as e:
            raise ValueError(str(e)) from None
