"""Plan and segment edits as commands: store a plan, name a segment's motion
tool, author a segment with its tool, drop a segment's tracks. Each undoes to
exactly what was there."""
from __future__ import annotations

import copy

from studio.scene.io import load_scene
from studio.scene.pose import Tracks
from studio.store.project import Project

from studio.timeline import film
from studio.timeline.author import Baked, author, authored, put_authored
from studio.timeline.commands import BakeSegment, Command
from studio.timeline.gate import parse_segment
from studio.timeline.plan import PlanError, load_plan, save_plan
from studio.timeline.split import Split, cut_marker, cut_record, cut_tracks


class SetPlan(Command):
    """Store a plan (validated against the scene); undo puts the previous plan back."""

    def __init__(self, project: Project, plan: dict, actor: str = "person", label: str = "set plan"):
        self.project, self.plan, self.actor, self.label = project, plan, actor, label
        self.before: dict | None = None

    def do(self) -> None:
        self.before = load_plan(self.project)
        save_plan(self.project, self.plan, load_scene(self.project), actor=self.actor)

    def undo(self) -> None:
        if self.before is None:
            with self.project.transaction():
                self.project.db.execute("DELETE FROM docs WHERE key = 'plan'")
                self.project.audit(self.actor, f"undo {self.label}", "plan", {})
        else:
            self.project.put_doc("plan", self.before, actor=self.actor, action=f"undo {self.label}")


def with_segment_tool(plan: dict | None, segment: str, tool: str, params: dict) -> dict:
    """A copy of the plan whose motion entry for `segment` names `tool` and `params`."""
    if plan is None:
        raise PlanError("plan: none stored; store a plan (set_plan) before naming segment tools")
    parse_segment(segment)
    out = copy.deepcopy(plan)
    motion = out.setdefault("motion", [])
    for m in motion:
        if m.get("segment") == segment:
            m["tool"], m["params"] = tool, params
            return out
    motion.append({"segment": segment, "tool": tool, "params": params})
    return out


class AuthorSegment(Command):
    """Author a segment with its motion tool and bake it (through the gate);
    undo restores the previous tracks and what their tool reported."""

    def __init__(self, project: Project, segment: str, actor: str = "person", tool: str | None = None,
                 params: dict | None = None):
        self.project, self.segment, self.actor, self.tool, self.params = project, segment, actor, tool, params
        self.label = f"bake {segment}"
        self.baked: Baked | None = None
        self._bake: BakeSegment | None = None
        self._before: dict | None = None

    def do(self) -> None:
        if self.baked is None:                  # redo stores the same tracks again
            self.baked = author(self.project, self.segment, self.tool, self.params)
            self.label = f"bake {self.segment} ({self.baked.tool})"
            self._bake = BakeSegment(self.project, self.segment, self.baked.tracks, self.baked.tool, self.actor,
                                     self.baked.max_residual)
        self._before = authored(self.project, self.segment)
        with self.project.transaction():
            self._bake.do()
            put_authored(self.project, self.segment, self.baked.record(), self.actor)

    def undo(self) -> None:
        with self.project.transaction():
            self._bake.undo()
            put_authored(self.project, self.segment, self._before, self.actor)


class DropSegment(Command):
    """Remove a segment's baked tracks (a key state now splits it); undo stores them back."""

    def __init__(self, project: Project, segment: str, actor: str = "person"):
        self.project, self.segment, self.actor = project, segment, actor
        self.label = f"drop segment {segment}"
        self.before: tuple | None = None

    def do(self) -> None:
        rows = [r for r in film.list_segments(self.project) if r["segment"] == self.segment]
        if not rows:
            raise ValueError(f"segment {self.segment}: not baked, nothing to drop")
        self.before = (film.load_segment(self.project, self.segment), rows[0])
        film.delete_segment(self.project, self.segment, actor=self.actor)

    def undo(self) -> None:
        tracks, row = self.before
        film.save_segment(self.project, self.segment, tracks, row["tool"], row["bounds_hash"], actor=self.actor)


class KeyInside(Command):
    """A new key state inside a segment: the state, the plan's segment split in two (see
    `studio.timeline.split`) and each baked segment around the key cut there; undo puts the
    plan, the tracks and what their tool reported back as they were, and removes the state."""

    def __init__(self, project: Project, key: Command, split: Split | None, plan_after: dict | None,
                 actor: str = "person"):
        self.project, self.key, self.split, self.plan_after, self.actor = project, key, split, plan_after, actor
        self.state_id, self.frame = key.after.id, key.after.frame
        self.label = f"key {self.state_id}" + (f" splitting {split.segment}" if split else "")
        self.plan_before: dict | None = None
        self.cut: list[tuple[dict, Tracks, dict | None]] = []     # (row, tracks, authored record) before the cut

    def do(self) -> None:
        with self.project.transaction():
            self.key.do()
            if self.plan_after is not None:
                self.plan_before = load_plan(self.project)
                save_plan(self.project, self.plan_after, load_scene(self.project), actor=self.actor)
            self.cut = []
            for row in film.list_segments(self.project):
                if row["start"] < self.frame < row["end"]:
                    self._cut(row)

    def _cut(self, row: dict) -> None:
        seg = row["segment"]
        a, b = parse_segment(seg)
        tracks = film.load_segment(self.project, seg)
        record = authored(self.project, seg)
        self.cut.append((row, tracks, record))
        mark = cut_marker(seg, self.state_id)
        halves = (f"{a}..{self.state_id}", f"{self.state_id}..{b}")
        film.delete_segment(self.project, seg, actor=self.actor)
        put_authored(self.project, seg, None, self.actor)
        for half, part, rec in zip(halves, cut_tracks(tracks, self.frame), cut_record(record, seg, self.frame)):
            film.save_segment(self.project, half, part, row["tool"], mark, actor=self.actor)
            put_authored(self.project, half, rec, self.actor)

    def undo(self) -> None:
        with self.project.transaction():
            for row, tracks, record in reversed(self.cut):
                a, b = parse_segment(row["segment"])
                for half in (f"{a}..{self.state_id}", f"{self.state_id}..{b}"):
                    film.delete_segment(self.project, half, actor=self.actor)
                    put_authored(self.project, half, None, self.actor)
                film.save_segment(self.project, row["segment"], tracks, row["tool"], row["bounds_hash"],
                                  actor=self.actor)
                put_authored(self.project, row["segment"], record, self.actor)
            if self.plan_after is not None:
                if self.plan_before is None:
                    self.project.db.execute("DELETE FROM docs WHERE key = 'plan'")
                    self.project.audit(self.actor, f"undo {self.label}", "plan", {})
                else:
                    self.project.put_doc("plan", self.plan_before, actor=self.actor, action=f"undo {self.label}")
            self.key.undo()
