"""Trying a motion repair on a scratch copy of the film before anyone sees it.

A change is a list of plan edits: `insert_state` (a key state at a frame, its
pose, and the segment it splits, or none when a segment already names it) and
`segment` (a segment's tool and parameters). `plan_after` turns them into the
plan they would make and the segments to re-bake; `FilmTrial.run` authors only
those segments in memory with their motion tools (complete, pin, clip as the
bake does), splices them into a copy of the film's tracks and re-verifies the
interval they cover plus a margin with `FilmCheck.verify_interval`. Nothing is
stored: the project is only read.

A candidate is not verified, whatever it fixes, when it moves the set (a static
body, fixed scenery, a body the storyboard and the film keep still: `scenery`),
when it would change a key state that exists (a repair of the film only inserts
new ones; changing a state is a person's own proposal), or when it adds a
Continuity spike the film did not have.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from studio.checks.report import ADVISORY, REQUIRED, Report
from studio.checks.run import FilmCheck, approved_states, normal_attachments, segment_attachments
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project
from studio.timeline.author import segment_tool
from studio.timeline.motion import check_params
from studio.timeline.bake import complete, pin, residual_limit, round_to_limits
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.gate import parse_segment
from studio.timeline.motion import MotionError, Segment, motion_tool
from studio.timeline.storyboard import State, list_states

from studio.repair.film_failures import FailingRun, frames_by_failure
from studio.repair.proposals import failures
from studio.repair.scenery import Moved, moved_in_tracks, the_set

MARGIN = 12                 # frames re-verified either side of the re-baked segments


class RepairUnfit(ValueError):
    """A candidate that cannot even be baked (a tool refused it, the params are wrong)."""


def plan_after(plan: dict | None, changes: list[dict]) -> tuple[dict, list[str], list[str]]:
    """The plan the changes make, the segments to re-bake and the segments they replace."""
    out = copy.deepcopy(plan or {})
    out.setdefault("states", [])
    motion = out.setdefault("motion", [])
    touched: list[str] = []
    dropped: list[str] = []
    for c in changes:
        if c["kind"] == "insert_state":
            if not any(s.get("id") == c["state"] for s in out["states"]):
                out["states"].append({"id": c["state"], "frame": int(c["frame"]), "shot": c.get("shot", ""),
                                      "description": c.get("description", "")})
                out["states"].sort(key=lambda s: int(s.get("frame", 0)))
            split = c.get("split") or ""
            if split:
                a, b = parse_segment(split)
                entry = next((m for m in motion if m.get("segment") == split), {"segment": split})
                halves = [dict(copy.deepcopy(entry), segment=f"{a}..{c['state']}"),
                          dict(copy.deepcopy(entry), segment=f"{c['state']}..{b}")]
                motion[:] = [m for m in motion if m.get("segment") != split] + halves
                touched = [s for s in touched if s != split] + [h["segment"] for h in halves]
                if split not in touched:
                    dropped.append(split)
        elif c["kind"] == "segment":
            entry = next((m for m in motion if m.get("segment") == c["segment"]), None)
            if entry is None:
                entry = {"segment": c["segment"]}
                motion.append(entry)
            entry["tool"], entry["params"] = c["tool"], copy.deepcopy(c.get("params", {}))
            if c["segment"] not in touched:
                touched.append(c["segment"])
        else:
            raise RepairUnfit(f"change kind {c['kind']!r}: expected insert_state or segment")
    motion.sort(key=lambda m: m.get("segment", ""))
    return out, touched, dropped


def bake_in_memory(project: Project, scene: Scene, plan: dict, states: dict[str, State], segment: str,
                   holds: dict[str, list[dict]] | None = None) -> Tracks:
    """A segment authored by its plan tool and completed, pinned and clipped as the bake would store it;
    the holds its tool recorded go into `holds` under the segment, as the bake would keep them."""
    a, b = (states.get(s) for s in parse_segment(segment))
    if a is None or b is None:
        raise RepairUnfit(f"segment {segment}: a bounding state is missing")
    tool, params = segment_tool(plan, segment)
    try:
        check_params(tool, params, f"{segment} {tool} params")
        out = motion_tool(tool).author(Segment(segment, scene, a, b, plan, project.fps, project.path, states), params)
        full = complete(scene, out.tracks, a.pose, b.pose, a.frame, b.frame)
        if holds is not None:
            holds[segment] = normal_attachments(params, list(out.attachments))
    except (MotionError, ValueError, KeyError) as e:
        raise RepairUnfit(f"segment {segment} by {tool}: {e}") from None
    pinned, residual = pin(full, a.pose, b.pose)
    round_to_limits(scene, pinned)
    if residual > residual_limit(motion_tool(tool).schema, params):
        raise RepairUnfit(f"segment {segment} by {tool}: misses its states by {residual:.3f}")
    return pinned


def splice(film: Tracks, part: Tracks) -> Tracks:
    """A copy of the film with `part`'s frames in place of its own."""
    a = part.frame_start - film.frame_start
    b = a + part.n_frames
    roots = {k: v.copy() for k, v in film.roots.items()}
    joints = {k: v.copy() for k, v in film.joints.items()}
    for k, v in part.roots.items():
        roots[k][a:b] = v
    for k, v in part.joints.items():
        joints[k][a:b] = v
    return Tracks(film.frame_start, roots, joints)


def rebake(project: Project, scene: Scene, plan: dict, states: dict[str, State], film: Tracks,
           changes: list[dict], touched: list[str],
           holds: dict[str, list[dict]] | None = None) -> tuple[Tracks, list[tuple], tuple[int, int]]:
    """The film with the touched segments baked in memory, the inserted key states, the frames re-baked
    (and in `holds`, the touched segments' holds as their tools recorded them)."""
    states = dict(states)
    inserted = []
    for c in changes:
        if c["kind"] == "insert_state":
            if c["state"] in states:
                raise RepairUnfit(f"insert_state {c['state']}: that key state exists; a repair of the film "
                                  f"inserts new key states and never changes one a person made")
            pose = Pose.from_dict(c["pose"], scene, where=f"insert_state {c['state']}.pose").completed(scene)
            states[c["state"]] = State(c["state"], int(c["frame"]), pose)
            inserted.append((int(c["frame"]), pose, c["state"]))
    tracks, lo, hi = film, film.frame_end, film.frame_start
    for seg in touched:
        part = bake_in_memory(project, scene, plan, states, seg, holds)
        if part.frame_start < film.frame_start or part.frame_end > film.frame_end:
            raise RepairUnfit(f"segment {seg} reaches outside the film")
        tracks = splice(tracks, part)
        lo, hi = min(lo, part.frame_start), max(hi, part.frame_end)
    return tracks, inserted, (lo, hi)


def scratch_film(project: Project, changes: list[dict], scene: Scene | None = None) -> tuple[Tracks, Tracks]:
    """The film as stored and as the changes would make it (not verified, nothing stored): a preview."""
    scene = scene or load_scene(project)
    film = load_film_tracks(project)
    if film is None:
        raise ValueError(f"{project.path}: nothing is baked yet")
    plan, touched, _ = plan_after(project.get_doc("plan"), changes)
    states = {s.id: State(s.id, s.frame, s.pose.completed(scene)) for s in list_states(project)}
    return film, rebake(project, scene, plan, states, film, changes, touched)[0]


@dataclass
class Outcome:
    """A candidate's re-verified film and what changed on the interval."""
    ok: bool
    effect: str
    interval: tuple[int, int]
    removed: int
    added_required: int
    reports: list[Report]
    tracks: Tracks

    @property
    def narrows(self) -> bool:
        """Removes some of the run's frames, not all, and adds no required failure anywhere it re-verified."""
        return not self.ok and self.removed > 0 and self.added_required == 0

    def verified(self) -> dict:
        return {"ok": self.ok, "effect": self.effect, "interval": list(self.interval), "removed": self.removed,
                "added_required": self.added_required, **({"narrows": True} if self.narrows else {})}


def _name(key: tuple) -> str:
    """A failure key in words: 'NoPenetration a b', 'EventsSatisfied event <id>'."""
    if key[0] == "EventsSatisfied" and len(key) > 1 and key[1].startswith("{"):
        import json
        return f"EventsSatisfied event {json.loads(key[1]).get('event', '?')}"
    return " ".join(map(str, key))


def _span(frames: list[int]) -> str:
    return f"{frames[0]}" if frames[0] == frames[-1] else f"{frames[0]}–{frames[-1]}"


NOUN = {"NoPenetration": "penetrating", "Supported": "floating", "JointLimits": "past-limit"}


class FilmTrial:
    """The film as baked and verified once; candidates re-baked and re-verified on their interval."""

    def __init__(self, project: Project, scene: Scene | None = None, whole: bool = False):
        self.project, self.whole = project, whole      # whole: re-bake and re-verify everything (a baseline)
        self.scene = scene or load_scene(project)
        self.plan = project.get_doc("plan") or {}
        tracks = load_film_tracks(project)
        if tracks is None:
            raise ValueError(f"{project.path}: nothing is baked yet; bake the film before repairing it")
        self.tracks = tracks
        self.segments = list_segments(project)
        self.states = {s.id: State(s.id, s.frame, s.pose.completed(self.scene), s.shot, s.description)
                       for s in list_states(project)}
        self.approved = [(f, p.completed(self.scene), i) for f, p, i in approved_states(project)]
        self.holds = segment_attachments(project)          # by segment: what each tool recorded holding
        self.base_holds = [a for hs in self.holds.values() for a in hs]
        self.check = FilmCheck(self.scene, scene_meshes(self.scene, project.path), plan=self.plan,
                               states=self.approved, attachments=self.base_holds)
        self._holds_after: dict[str, list[dict]] = {}
        self.reports = self.check.verify(tracks)
        self.base_tracks, self.base_reports = self.check.tracks, self.check.reports
        self.fixed = the_set(self.scene, self.plan, [p for _, p, _ in self.approved], tracks)
        self._baked: dict[str, tuple | RepairUnfit] = {}
        self._verified: dict[tuple, list[Report]] = {}

    def segment_of(self, frame: int) -> dict | None:
        return next((s for s in self.segments if s["start"] < frame < s["end"]), None)

    def pose_at(self, frame: int) -> Pose:
        return self.tracks.pose_at(frame)

    def bake(self, changes: list[dict]) -> tuple[Tracks, list[tuple], tuple[int, int]]:
        """The film with the changes baked in memory (once per distinct change: runs share candidates)."""
        key = json.dumps(changes, sort_keys=True, default=str)
        if key not in self._baked:
            plan, touched, dropped = plan_after(self.plan, changes)
            if self.whole:
                touched = [s["segment"] for s in self.segments if s["segment"] not in dropped and s["segment"]
                           not in touched] + touched
            holds = {s: hs for s, hs in self.holds.items() if s not in dropped}
            try:
                self._baked[key] = rebake(self.project, self.scene, plan, self.states, self.base_tracks,
                                          changes, touched, holds)
            except RepairUnfit as e:
                self._baked[key] = e
            self._holds_after[key] = [a for hs in holds.values() for a in hs]
        got = self._baked[key]
        if isinstance(got, RepairUnfit):
            raise got
        return got

    def run(self, changes: list[dict], margin: int = MARGIN,
            span: tuple[int, int] | None = None) -> tuple[Tracks, list[Report], tuple[int, int]]:
        """The film with the changes baked in memory and re-verified on the frames they re-baked plus
        a margin (or on `span` only, a first screening); the interval it re-verified."""
        tracks, inserted, (lo, hi) = self.bake(changes)
        lo, hi = (lo - margin, hi + margin) if span is None else span
        lo, hi = max(tracks.frame_start, lo), min(tracks.frame_end, hi)
        key = (json.dumps(changes, sort_keys=True, default=str), lo, hi)
        if key in self._verified:
            return tracks, self._verified[key], (lo, hi)
        self.check.tracks, self.check.reports = self.base_tracks, self.base_reports
        self.check.states = self.approved + inserted
        self.check.attachments = self._holds_after.get(key[0], self.base_holds)    # holds as the change makes them
        try:
            if self.whole or (lo <= tracks.frame_start and hi >= tracks.frame_end):   # nothing to keep
                fresh = FilmCheck(self.scene, self.check.meshes, plan=self.plan, states=self.check.states,
                                  attachments=self.check.attachments)
                if not self.whole:
                    fresh.cache = self.check.cache        # unchanged relative poses are measured once
                reports = fresh.verify(tracks)
            else:
                reports = self.check.verify_interval(tracks, lo, hi)
        finally:
            self.check.tracks, self.check.reports, self.check.states = self.base_tracks, self.base_reports, self.approved
            self.check.attachments = self.base_holds
        self._verified[key] = reports
        return tracks, reports, (lo, hi)

    def moves_set(self, changes: list[dict]) -> list[Moved]:
        """Bodies of the set the changes would move (worst first); none for a candidate that may stand."""
        tracks, _, (lo, hi) = self.bake(changes)
        return moved_in_tracks(self.scene, self.fixed, self.base_tracks, tracks, (lo, hi))

    def judge(self, run: FailingRun, changes: list[dict], narrow: bool = False) -> Outcome:
        """Whether the changes remove the run's failure and add no required one, in words. A candidate
        is first screened on the run's own frames plus the margin when that is under half the
        frames it re-baked; only one that passes there (or, with `narrow`, that narrows the run
        there) is verified on all of them. One that moves the set is refused before it is verified."""
        moved = self.moves_set(changes)
        if moved:
            tracks, _, (lo, hi) = self.bake(changes)
            return Outcome(False, f"moves the set ({'; '.join(m.words() for m in moved[:3])}): a repair never "
                                  f"moves a static body, fixed scenery or a body the storyboard keeps still",
                           (lo, hi), 0, len(moved), self.base_reports, tracks)
        if not self.whole:
            screen = (run.start - MARGIN, run.end + MARGIN)
            _, _, (lo, hi) = self.bake(changes)
            if 2 * (screen[1] - screen[0]) < (hi - lo + 2 * MARGIN):     # worth it only on a long re-bake
                first = self._judge(run, changes, screen)
                if not first.ok and not (narrow and first.narrows):
                    return first
        return self._judge(run, changes, None)

    def _judge(self, run: FailingRun, changes: list[dict], span: tuple[int, int] | None) -> Outcome:
        tracks, after, (lo, hi) = self.run(changes, span=span)
        before_f, after_f = frames_by_failure(self.base_reports), frames_by_failure(after)
        near = range(run.start - MARGIN, run.end + MARGIN + 1)

        def inside(per: dict, span) -> list[int]:
            return sorted(f for f in per if f in span)
        was = inside(before_f.get(run.key, {}), near)
        now = inside(after_f.get(run.key, {}), near)
        if run.check == "EventsSatisfied":
            now = sorted(after_f.get(run.key, {}))
        window = range(lo, hi + 1)
        others = [k for k in set(before_f) | set(after_f) if k[0] in REQUIRED and k != run.key]
        was_other = sum(len(inside(before_f.get(k, {}), window)) for k in others)
        now_other = sum(len(inside(after_f.get(k, {}), window)) for k in others)
        new_keys = {k: inside(after_f[k], window) for k in others if k in after_f and k not in before_f}
        for key in failures(after, REQUIRED) - failures(self.base_reports, REQUIRED) - {run.key}:
            new_keys.setdefault(key, [])
        together = self.siblings(run) if not any(c["kind"] == "insert_state" and c.get("split")
                                                  for c in changes) else []
        along = {k: (inside(before_f.get(k, {}), window), inside(after_f.get(k, {}), window)) for k in together}
        noun = NOUN.get(run.check, "unmet-event")
        if run.check == "EventsSatisfied":
            words = [f"meets event {run.evidence.get('event')}" if not now else
                     f"event {run.evidence.get('event')} still unmet"]
        else:
            words = [f"removes {len(was) - len(now)} {noun} frames at {_span(was)}" if was else "removes none"]
            if now:
                words[0] += f" ({len(now)} left at {_span(now)})"
            for k, (b4, af) in sorted(along.items()):
                words[0] += (f" and {len(b4) - len(af)} of {_name(k)[len(run.check) + 1:]} at {_span(b4)}" if b4 else "")
                words[0] += f" ({len(af)} left at {_span(af)})" if af else ""
        if new_keys:
            words.append("adds " + "; ".join(_name(k) + (f" at {_span(v)}" if v else "")
                                             for k, v in sorted(new_keys.items())))
        elif now_other > was_other:
            words.append(f"adds {now_other - was_other} failing frames of other required checks")
        else:
            words.append("adds none")
            if now_other != was_other:
                words.append(f"other required failing frames {was_other} → {now_other}")
        added = {k: v for k, v in new_keys.items()}
        if now_other > was_other and not added:
            added[("frames",)] = list(range(now_other - was_other))
        words += self._advisory(after, run, (lo, hi))
        spikes = self._new_spikes(after, (lo, hi), changes)
        if spikes:
            words.append("adds Continuity " + ", ".join(spikes[:3]) + (f" and {len(spikes) - 3} more"
                                                                      if len(spikes) > 3 else ""))
            added[("Continuity",)] = spikes
        ok = not now and not added and not any(af for _, af in along.values())
        if any(len(af) > len(b4) for b4, af in along.values()):
            added[("frames",)] = [0]
        return Outcome(ok, "; ".join(words), (lo, hi), len(was) - len(now),
                       sum(max(1, len(v)) for v in added.values()), after, tracks)

    def siblings(self, run: FailingRun) -> list[tuple]:
        """Other bodies of the same character meeting a static body in the same segment (both feet
        on a step): a change to the whole segment must clear them all."""
        if run.check != "NoPenetration":
            return []
        scene = self.scene
        movers = [n for n in run.key[1:] if not scene.body(n).is_static]
        if len(movers) != 1 or len(run.key) != 3 or all(not scene.body(n).is_static for n in run.key[1:]):
            return []
        group = scene.group_root(movers[0])
        row = next((s for s in self.segments if s["segment"] == run.segment), None)
        out = []
        for key, per in frames_by_failure(self.base_reports, ("NoPenetration",)).items():
            if key == run.key or len(key) != 3:
                continue
            fixed = [n for n in key[1:] if scene.body(n).is_static]
            other = [n for n in key[1:] if not scene.body(n).is_static]
            if len(fixed) == 1 and len(other) == 1 and scene.group_root(other[0]) == group and row and \
                    any(row["start"] < f < row["end"] for f in per):
                out.append(key)
        return out

    def _new_spikes(self, after: list[Report], span: tuple[int, int], changes: list[dict]) -> list[str]:
        """Continuity jumps of a body (its place or its turn popping between two frames) on the interval
        that the film did not have: a repair that adds one is not verified, though the check is advisory.
        A jump of a body a simulation moves is an impact the physics made (a box landing), not a pop, and
        stands; so does a joint's own spike that moves no body past the check's limit (a knee snapping up
        for a higher step), which the effect still counts among the advisory figures."""
        lo, hi = span
        key = lambda e: (e.get("frame"), e.get("body") or e.get("joint"), e.get("what"))
        before = {key(e) for r in self.base_reports if r.name == "Continuity" for e in r.evidence}
        simulated = self._simulated(changes)
        return [f"{e.get('body') or e.get('joint')} {e.get('what', '')} at {e.get('frame')}".replace("  ", " ")
                for r in after if r.name == "Continuity" for e in r.evidence
                if lo <= e.get("frame", lo - 1) <= hi and key(e) not in before and e.get("body")
                and not any(e.get("body") == b and f0 <= e.get("frame", 0) <= f1 for b, f0, f1 in simulated)]

    def _simulated(self, changes: list[dict]) -> list[tuple[str, int, int]]:
        """(body, first frame, last frame) of every body a simulation moves in the plan the changes make."""
        plan, _, _ = plan_after(self.plan, changes)
        frames = {s.id: s.frame for s in self.states.values()}
        frames.update({c["state"]: int(c["frame"]) for c in changes if c["kind"] == "insert_state"})
        out = []
        for m in plan.get("motion", []) or []:
            tool = m.get("tool")
            try:
                a, b = parse_segment(m.get("segment", ""))
            except ValueError:
                continue
            if not tool or a not in frames or b not in frames:
                continue
            try:
                if not motion_tool(tool).offers_end:
                    continue
            except MotionError:
                continue
            bodies = (m.get("params") or {}).get("bodies", [])
            out += [(body, frames[a], frames[b]) for body in (bodies if isinstance(bodies, (list, dict)) else [])]
        return out

    def _advisory(self, after: list[Report], run: FailingRun, span: tuple[int, int]) -> list[str]:
        """How the advisory checks moved on the interval (floating frames, slip, margin)."""
        lo, hi = span
        out = []
        b = {r.name: r for r in self.base_reports}
        for r in after:
            if r.name not in ADVISORY or r.name == run.check or r.name not in b:
                continue
            old = [e for e in b[r.name].evidence if lo <= e.get("frame", lo - 1) <= hi]
            new = [e for e in r.evidence if lo <= e.get("frame", lo - 1) <= hi]
            if r.name == "ContactSlip":
                dmm = (max((e.get("slip_m", 0) for e in new), default=0.0) -
                       max((e.get("slip_m", 0) for e in old), default=0.0)) * 1000
                if abs(dmm) >= 0.5:
                    out.append(f"advisory slip {dmm:+.0f} mm")
            elif len(new) != len(old):
                out.append(f"advisory {r.name} {len(new) - len(old):+d} frames")
        return out

