"""Candidate repairs for a run of failing frames, smallest edit first.

Five kinds, tried in this order for each run:
- tool parameters, read from the segment tool's JSON schema, so a tool gets
  the edits its schema allows: an earlier `begin` for an unmet grasp or reach,
  a later one for a release that leaves a body floating, a via-point in
  `waypoints` (the tool's or its walk's) stepping aside from the way around
  an obstacle, higher steps and other step lengths for every leg at once for
  feet that meet a step, the other rotation interpolation;
- another tool: `simulate` for a body left floating (a drop), the tools and
  parameters the plan's other motion entries give the failure's bodies and
  frames, those planned over the failing frames first (an unmet event gets
  the tool the plan has for its window), `operate` for a segment over
  which a part that moves only on its joint (a door on its hinge) changes
  while a hand holds its handle at both ends (`operate_params`), the plain
  `interpolate` for a segment whose tracks no registered tool made;
- a key state at the run's worst frame, its pose the film's pose there
  repaired by the state rules (`offline`): pushed out along the evidence's
  axis or around the obstacle, dropped to support or brought to its carrier,
  a joint clamped with its chain re-solved by IK, a part that moves only on
  its joint turned or slid clear on it (`offline.part_candidates`), for
  unmet grasps and reaches every effector they want brought to its target
  at the frame their windows share, for an unmet pass_through its subject
  brought across the plane (`event_keys`); each must pass the one-frame
  checks itself, and an event's key blocked only by such a part gets the
  part moved clear too (`_parts_cleared`);
- two key states round an obstacle: one of those edits applied before and
  after the run, so the body is held aside over it (`spread_candidates`);
- a path round a static obstacle planned at once: the character stepped
  aside, or a free body turned (and carried clear of what moves with it),
  over every frame it is near the obstacle, eased off its way and back onto
  it between key states at the film's own poses (`path_candidates`).
A candidate whose changes a person already rejected for that segment is
not offered again; the same kind comes last.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

import numpy as np

from studio.checks.continuity import FLOOR_M, FLOOR_RAD
from studio.checks.report import REQUIRED
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import quat_from_axis_angle, quat_mul, quat_to_matrix
from studio.store.reports import failing_required
from studio.timeline.author import segment_tool
from studio.timeline.gate import parse_segment
from studio.timeline.motion import motion_tools
from studio.timeline.motion.ik import frame_pose
from studio.timeline.motion.operate import _moved_by

from studio.repair import event_keys
from studio.repair.film_failures import FailingRun, frames_by_failure
from studio.repair.motion_trial import FilmTrial
from studio.repair.offline import (MARGIN, _chain, _mover, _root_change, _world_vertices, driven_joint, floating_candidates,
                                   joint_candidates, part_candidates, penetration_candidates)
from studio.repair.proposals import apply_changes
from studio.tools.verify import check_pose

CLEARANCES = (MARGIN, 0.02, 0.05, 0.1)       # metres beyond a clean separation, for a detour
Candidate = tuple[str, str, list[dict]]       # (kind: params|tool|key, summary, changes)


def _ends(trial: FilmTrial, segment: str) -> list[dict]:
    """Key states the segment names but the storyboard lacks, keyed from the film's frames."""
    row = next(s for s in trial.segments if s["segment"] == segment)
    out = []
    for sid, frame in zip(parse_segment(segment), (row["start"], row["end"])):
        if sid not in trial.states:
            out.append({"kind": "insert_state", "state": sid, "frame": int(frame), "split": "",
                        "pose": trial.pose_at(int(frame)).to_dict(), "shot": _shot(trial, sid, frame),
                        "description": f"keyed from the film at frame {frame}"})
    return out


def _shot(trial: FilmTrial, state: str, frame: int) -> str:
    """The shot holding the frame (a state must lie inside its shot), else the state's own."""
    for sh in trial.plan.get("shots", []):
        if int(sh.get("start", frame)) <= frame <= int(sh.get("end", frame)):
            return sh.get("id", "")
    for s in trial.plan.get("states", []):
        if s.get("id") == state:
            return s.get("shot", "")
    return ""


def _state_id(trial: FilmTrial, frame: int) -> str:
    base, n = f"key_{frame}", 1
    names = set(trial.states) | {s.get("id") for s in trial.plan.get("states", [])}
    sid = base
    while sid in names:
        n += 1
        sid = f"{base}_{n}"
    return sid


# ---- poses for a key state -------------------------------------------------
def detour_candidates(trial: FilmTrial, pose: Pose, ev: dict, also: tuple[str, ...] = (),
                      planar: bool = False) -> list[tuple[str, list[dict]]]:
    """Move the body (and `also`, other bodies of its character meeting the same obstacle) clear of
    the other along each world axis (around an obstacle, over a step; `planar`: across the floor)."""
    picked = _mover(trial.scene, ev["a"], ev["b"], trial.fixed)
    if picked is None:
        return []
    body = picked[0]
    other = ev["b"] if body == ev["a"] else ev["a"]
    root = trial.scene.group_root(body)
    world = pose_world(trial.scene, pose)
    mine = np.concatenate([_world_vertices(trial.project, trial.scene, world, b) for b in (body, *also)])
    theirs = _world_vertices(trial.project, trial.scene, world, other)
    out = []
    for axis in np.eye(3).tolist() + (-np.eye(3)).tolist():
        ax = np.asarray(axis)
        if ax[2] < 0 or (planar and ax[2] > 0):
            continue
        clear = float((theirs @ ax).max() - (mine @ ax).min())
        for extra in CLEARANCES:                 # the in-betweens either side need room too
            dist = clear + extra
            if 0 < dist < 1.0:
                out.append((f"move {root} {dist * 1000:.0f} mm along {'+-'[int(ax.sum() < 0)]}"
                            f"{'xyz'[int(np.argmax(np.abs(ax)))]} clear of {other}",
                            [_root_change(pose, root, ax * dist)]))
    return sorted(out, key=lambda c: float(np.linalg.norm(np.asarray(c[1][0]["to"][:3]) -
                                                            np.asarray(c[1][0]["from"][:3]))))


TURNS = (np.pi / 2, -np.pi / 2, np.pi / 4, -np.pi / 4)     # radians a free body is turned to fit


def turn_candidates(trial: FilmTrial, pose: Pose, ev: dict) -> list[tuple[str, list[dict]]]:
    """Turn a free body meeting a static one about each world axis through its centre (a wide board
    through a narrow opening), its lowest point kept where it was."""
    scene = trial.scene
    movers = [n for n in (ev["a"], ev["b"]) if not scene.body(n).is_static and n not in trial.fixed]
    if len(movers) != 1:
        return []
    body = movers[0]
    if body not in scene.roots or scene.joint_of_child(body) is not None:
        return []
    verts = _world_vertices(trial.project, scene, pose_world(scene, pose), body)
    out = []
    for k, axis in enumerate(np.eye(3)):
        for angle in TURNS:
            out.append((f"turn {body} {np.degrees(angle):+.0f}° about {'xyz'[k]} to fit past "
                        f"{ev['b'] if body == ev['a'] else ev['a']}", [_turned(trial, pose, body, axis, angle, verts)[0]]))
    return out


def _turned(trial: FilmTrial, pose: Pose, body: str, axis: np.ndarray, angle: float,
            verts: np.ndarray | None = None) -> tuple[dict, np.ndarray]:
    """A free body's root turned by `angle` about the world `axis` through its centre, its lowest
    point kept where it was: the root change and the body's vertices after it."""
    if verts is None:
        verts = _world_vertices(trial.project, trial.scene, pose_world(trial.scene, pose), body)
    centre = verts.mean(axis=0)
    root = np.asarray(pose.roots[body], float)
    q = quat_from_axis_angle(axis, np.array(angle))
    turn = quat_to_matrix(q)
    moved = (verts - centre) @ turn.T + centre
    lift = max(0.0, verts[:, 2].min() - moved[:, 2].min())
    to = [*((turn @ (root[:3] - centre)) + centre + [0.0, 0.0, lift]).tolist(), *quat_mul(q, root[3:]).tolist()]
    return ({"kind": "root", "name": body, "from": root.tolist(), "to": [round(v, 9) for v in to]},
            moved + [0.0, 0.0, lift])


def key_poses(trial: FilmTrial, run: FailingRun, pose: Pose) -> list[tuple[str, list[dict]]]:
    ev = run.evidence
    if run.check == "NoPenetration":
        return (penetration_candidates(trial.project, trial.scene, pose, ev, trial.fixed)
                + detour_candidates(trial, pose, ev) + turn_candidates(trial, pose, ev)
                + part_candidates(trial.scene, pose, ev, trial.fixed))
    if run.check == "Supported":
        return floating_candidates(trial.project, trial.scene, pose, ev, run.worst, trial.plan, trial.fixed)
    if run.check == "JointLimits":
        return joint_candidates(trial.scene, pose, ev)
    if run.check == "EventsSatisfied":
        return event_keys.key_poses(trial, pose, event_wants(trial, run, run.worst), frame=run.worst)
    return []


def event_wants(trial: FilmTrial, run: FailingRun, frame: int) -> list[event_keys.Want]:
    """The unmet hand events whose windows hold `frame`, the run's own among them."""
    pending = event_keys.unmet(trial.base_reports, trial.plan)
    ids = [e["id"] for e in trial.plan.get("events", []) or []
           if e.get("id") in pending and len(e.get("window") or []) == 2
           and int(e["window"][0]) <= frame <= int(e["window"][1])]
    ws = event_keys.wants(trial, set(ids))
    return ws if any(w.event == run.evidence.get("event") for w in ws) else []


def key_frame(trial: FilmTrial, run: FailingRun) -> int:
    """Where a key state helps most: the worst frame, or for an unmet event the frame its
    window shares with the most other unmet hand events."""
    if run.check != "EventsSatisfied":
        return run.worst
    pending = sorted(event_keys.unmet(trial.base_reports, trial.plan))
    return event_keys.shared_frame(trial.plan, pending, run.start, run.end, run.worst)[0]


def key_candidates(trial: FilmTrial, run: FailingRun, passed: list | None = None) -> list[Candidate]:
    """Insert a key state at the worst frame, its pose repaired; the key must pass its own checks
    (those that do go into `passed` as (summary, changes) too)."""
    frame = key_frame(trial, run)
    pose = trial.pose_at(frame).completed(trial.scene)
    sid = _state_id(trial, frame)
    ends = _ends(trial, run.segment)
    out = []
    a, _ = parse_segment(run.segment)
    opening = trial.states.get(a)
    first = opening.pose if opening else trial.pose_at(next(s["start"] for s in trial.segments
                                                            if s["segment"] == run.segment)).completed(trial.scene)
    poses = (event_keys.key_poses(trial, pose, event_wants(trial, run, frame), first, frame)
             if run.check == "EventsSatisfied" else key_poses(trial, run, pose))
    if run.check == "EventsSatisfied":
        event = next((e for e in trial.plan.get("events", []) or [] if e.get("id") == run.evidence.get("event")), {})
        if event.get("kind") == "enter_region":
            poses += event_keys.region_poses(trial, pose, event)
        if event.get("kind") == "pass_through":
            poses += event_keys.through_poses(trial, pose, event)
    for summary, changes in poses:
        try:
            fixed = apply_changes(trial.scene, pose, changes)
        except (KeyError, ValueError):
            continue
        reports = check_pose(trial.project, trial.scene, fixed, frame, sid)
        if failing_required(reports):
            cleared = _parts_cleared(trial, fixed, frame, sid, reports, event.get("subjects") or []) \
                if run.check == "EventsSatisfied" else None
            if cleared is None:
                continue
            words, more = cleared
            summary, changes = f"{summary}, {words}", changes + more
            fixed = apply_changes(trial.scene, pose, changes)
        if passed is not None:
            passed.append((summary, changes))
        a, _ = parse_segment(run.segment)
        out.append(("key", f"insert key state {sid} at {frame}: {summary}", ends + [
            {"kind": "insert_state", "state": sid, "frame": frame, "split": run.segment,
             "pose": fixed.to_dict(), "shot": _shot(trial, a, frame),
             "description": f"repair key: {summary}"}]))
    return out


def _parts_cleared(trial: FilmTrial, pose: Pose, frame: int, sid: str, reports: list,
                   subjects: list[str]) -> tuple[str, list[dict]] | None:
    """For a key pose whose only required failure is a body in a part that moves on its own joint
    (a character stepping through a door that is not open far enough): the part moved clear on its
    joint, the smallest move that passes the pose's checks, in words and as changes. A part that
    carries one of the event's subjects (the knob a hand reaches for) is left where it is."""
    bad = [r for r in reports if r.name in REQUIRED and r.verdict not in ("pass", "not_applicable")]
    if not bad or any(r.name != "NoPenetration" for r in bad):
        return None
    evs = [e for r in bad for e in r.evidence if "a" in e and "b" in e]
    if not evs or not all(driven_joint(trial.scene, e["a"], trial.fixed) or driven_joint(trial.scene, e["b"], trial.fixed)
                          for e in evs):
        return None
    frames = {f.name: f.body for f in trial.scene.frames}
    carried = [frames.get(n, n) for n in subjects if frames.get(n, n) in trial.scene.body_names]
    ev = max(evs, key=lambda e: float(e.get("depth_m", 0.0)))
    for n in (ev["a"], ev["b"]):
        j = driven_joint(trial.scene, n, trial.fixed)
        if j is not None and any(_moved_by(trial.scene, b, j.child) for b in carried):
            return None
    for words, changes in sorted(part_candidates(trial.scene, pose, ev, trial.fixed),
                                 key=lambda c: abs(c[1][0]["to"] - c[1][0]["from"])):
        if not failing_required(check_pose(trial.project, trial.scene, apply_changes(trial.scene, pose, changes),
                                           frame, sid)):
            return words, changes
    return None


SPREAD = (0, 3, 6)          # frames a held detour reaches beyond the run either side
SPREAD_POSES = 6            # the smallest one-key edits tried as a held detour


def spread_candidates(trial: FilmTrial, run: FailingRun, edits: list) -> list[Candidate]:
    """Two key states round an obstacle: an edit of the worst frame that passed its own checks
    (`edits`: a push, a detour, a joint clamp), the smallest first, made at a frame before the run
    and at one after it, so the body is held aside over the whole run and eases into and out of
    the detour over the rest of the segment, instead of jumping out and back within the few frames
    either side of one key (a Continuity spike). At each end the edit is the same one, or where that
    does not clear the frame (a body sliding along the obstacle), the same move worked out for that
    frame's own pose (the same push or detour by that frame's own distance). Both keys must pass
    their own checks."""
    if run.check not in ("NoPenetration", "Supported", "JointLimits"):
        return []
    row = next((s for s in trial.segments if s["segment"] == run.segment), None)
    if row is None:
        return []
    fa, fb = int(row["start"]), int(row["end"])
    spans = []
    for m in SPREAD:
        f1, f2 = max(fa + 2, run.start - m), min(fb - 2, run.end + m)
        if f1 == f2:
            f1, f2 = max(fa + 2, f1 - 1), min(fb - 2, f2 + 1)
        if f1 < f2 and (f1, f2) not in spans:
            spans.append((f1, f2))
    if not spans:
        return []
    worst = trial.pose_at(run.worst).completed(trial.scene)
    edits = sorted(edits, key=lambda e: _edit_size(trial.scene, worst, e[1]))[:SPREAD_POSES]
    a, _ = parse_segment(run.segment)
    ends = _ends(trial, run.segment)
    per_frame = frames_by_failure(trial.base_reports).get(run.key, {})
    own: dict[int, dict[str, list[dict]]] = {}

    def keyed(f: int, sid: str, summary: str, changes: list[dict]) -> Pose | None:
        here = trial.pose_at(f).completed(trial.scene)
        tries = [changes]
        if f not in own:                              # the same moves, worked out for this frame
            at = replace(run, worst=f, evidence=per_frame.get(f, run.evidence))
            own[f] = {}
            for s, c in key_poses(trial, at, here):
                own[f].setdefault(_move(s), c)
        if _move(summary) in own[f]:
            tries.append(own[f][_move(summary)])
        for c in tries:
            try:
                pose = apply_changes(trial.scene, here, c)
            except (KeyError, ValueError):
                continue
            if not failing_required(check_pose(trial.project, trial.scene, pose, f, sid)):
                return pose
        return None
    out: list[Candidate] = []
    for summary, changes in edits:
        for f1, f2 in spans:
            keys, split, taken = [], run.segment, set(trial.states)
            for f in (f1, f2):
                sid = _state_id(trial, f)
                while sid in taken:
                    sid += "_b"
                taken.add(sid)
                pose = keyed(f, sid, summary, changes)
                if pose is None:
                    break
                keys.append({"kind": "insert_state", "state": sid, "frame": f, "split": split,
                             "pose": pose.to_dict(), "shot": _shot(trial, a, f),
                             "description": f"repair key: {summary}, held from {f1} to {f2}"})
                split = f"{sid}..{parse_segment(run.segment)[1]}"
            if len(keys) == 2:
                out.append(("key", f"insert key states {keys[0]['state']} at {f1} and {keys[1]['state']} at "
                                   f"{f2}: {summary}, held from {f1} to {f2}", ends + keys))
    return out


PATH_LEAD = 3                       # frames a path round an obstacle holds its detour beyond the frames near it
PATH_RAMPS = (12, 24)               # frames it takes to ease off the film's way onto the detour, and back
PATH_CLEAR = (0.05, 0.1)            # metres beyond clearing the obstacle, for a sideways detour
PATH_NEAR = 0.05                    # metres round the obstacle's extent within which a body is near it
PATH_TURNS = ((2, np.pi / 2), (2, -np.pi / 2), (0, np.pi / 2), (0, -np.pi / 2))   # (world axis, radians)
PATH_SEEK = 48                      # frames beyond a ramp searched for a film pose that passes, to key it
PATH_SHARES = (1.0, 0.8, 0.6)       # shares of the clearance from the bodies a turned one meets, carried clear
DETOUR_MAX = 1.0                    # metres: a longer sideways detour is not a way round


def path_candidates(trial: FilmTrial, run: FailingRun) -> list[Candidate]:
    """One path round a static obstacle for the whole run, planned at once: the body's character (its
    root and everything hanging from it) stepped sideways clear of the obstacle, or a free body turned
    to fit past it, held over every frame of the segment where it comes near the obstacle, not only
    the failing ones, and eased off the film's way and back onto it over a few frames either side:
    key states before and after the detour keep the film's own poses there, so the rest of the segment
    stays as it was. Every key is worked out from the film's pose at its own frame (the same step or
    turn), and each must pass its own checks. A detour so planned leaves no half-cleared run pinned
    between key states on opposite sides of the obstacle, as clearing it a key at a time can."""
    if run.check != "NoPenetration":
        return []
    scene = trial.scene
    ev = run.evidence
    picked = _mover(scene, ev["a"], ev["b"], trial.fixed)
    row = next((s for s in trial.segments if s["segment"] == run.segment), None)
    if picked is None or row is None:
        return []
    body = picked[0]
    other = ev["b"] if body == ev["a"] else ev["a"]
    if not (scene.body(other).is_static or other in trial.fixed):
        return []
    root = scene.group_root(body)
    group = [n for n in scene.body_names if not scene.body(n).is_static and scene.group_root(n) == root]
    fa, fb = int(row["start"]), int(row["end"])
    if fb - fa < 6:
        return []
    theirs = _world_vertices(trial.project, scene, pose_world(scene, trial.pose_at(run.worst)), other)
    lo, hi = theirs.min(axis=0) - PATH_NEAR, theirs.max(axis=0) + PATH_NEAR
    seen: dict[int, tuple[Pose, list[np.ndarray]]] = {}

    def film(f: int) -> tuple[Pose, np.ndarray]:
        return _film(f)[0], np.concatenate(_film(f)[1])

    def _film(f: int) -> tuple[Pose, list[np.ndarray]]:
        if f not in seen:
            pose = trial.pose_at(f).completed(scene)
            world = pose_world(scene, pose)
            seen[f] = pose, [_world_vertices(trial.project, scene, world, n) for n in group]
        return seen[f]

    def near(parts: list[np.ndarray]) -> bool:             # a body's own extent meets the obstacle's, widened
        return any(bool(np.all(v.max(axis=0) >= lo) and np.all(v.min(axis=0) <= hi)) for v in parts)

    def held(test, ease: int) -> tuple[int, int]:
        """The frames of the segment round the run where `test` finds the body near the obstacle, and a
        lead; at least `ease` frames inside the segment's ends (room to ease onto the detour)."""
        f1, f2 = run.start, run.end
        while f1 - 1 > fa and test(f1 - 1):
            f1 -= 1
        while f2 + 1 < fb and test(f2 + 1):
            f2 += 1
        return max(fa + ease, f1 - PATH_LEAD), min(fb - ease, f2 + PATH_LEAD)

    def ease(size: float, floor: float) -> int:
        """The fewest frames an eased move of `size` takes without a Continuity spike (6·size/h² under the floor)."""
        return max(2, int(np.ceil(np.sqrt(6 * size / floor))))
    edits: list[tuple[str, Callable, tuple[int, int], int]] = []     # (what, the edit of a pose, held, ease)
    span = held(lambda f: near(_film(f)[1]), 2)
    way = np.asarray(film(fb)[0].roots[root][:2], float) - np.asarray(film(fa)[0].roots[root][:2], float)
    way = way / np.linalg.norm(way) if np.linalg.norm(way) > 1e-6 else way
    for axis in (np.eye(3)[:2].tolist() + (-np.eye(3)[:2]).tolist()):
        ax = np.asarray(axis)
        if abs(float(ax[:2] @ way)) >= 0.5:            # along the way: a wait or a rush, not a way round
            continue
        need = max(float((theirs @ ax).max() - (film(f)[1] @ ax).min()) for f in range(span[0], span[1] + 1))
        for extra in PATH_CLEAR:
            d = need + extra
            if 0 < d < DETOUR_MAX:
                step = ax * d
                h = ease(d, FLOOR_M)
                edits.append((f"step {root} {d * 1000:.0f} mm along {'+-'[int(ax.sum() < 0)]}"
                              f"{'xyz'[int(np.argmax(np.abs(ax)))]} round {other}",
                              lambda pose, step=step: _root_change(pose, root, step),
                              (max(span[0], fa + h), min(span[1], fb - h)), h))
    if group == [body] and body in scene.roots and scene.joint_of_child(body) is None:
        ahead = np.array([*way, 0.0])              # the way the body travels over the segment
        movers = [n for n in scene.body_names if not scene.body(n).is_static and n not in trial.fixed
                  and scene.group_root(n) != root]
        near_them: dict[int, list[np.ndarray]] = {}

        def them(f: int) -> list[np.ndarray]:
            if f not in near_them:
                world = pose_world(scene, _film(f)[0])
                near_them[f] = [_world_vertices(trial.project, scene, world, n) for n in movers]
            return near_them[f]

        def meets(v: np.ndarray, w: np.ndarray) -> bool:
            return bool(np.all(v.max(axis=0) >= w.min(axis=0) - PATH_NEAR) and
                        np.all(v.min(axis=0) <= w.max(axis=0) + PATH_NEAR))
        for k, angle in PATH_TURNS:
            axis = np.eye(3)[k]

            def turned(f: int, axis=axis, angle=angle, shift=np.zeros(3)) -> np.ndarray:
                pose, v = film(f)
                return _turned(trial, pose, body, axis, angle, v)[1] + shift

            def edit(pose, axis=axis, angle=angle, shift=np.zeros(3)) -> dict:
                c = _turned(trial, pose, body, axis, angle)[0]
                return dict(c, to=[*(np.asarray(c["to"][:3]) + shift).round(9).tolist(), *c["to"][3:]])
            what = f"turn {body} {np.degrees(angle):+.0f}° about {'xyz'[k]}"
            h = ease(abs(angle), FLOOR_RAD)
            turn_span = held(lambda f, turned=turned: near(_film(f)[1]) or near([turned(f)]), h)
            edits.append((f"{what} to pass {other}", edit, turn_span, h))
            at = {f: turned(f) for f in range(turn_span[0], turn_span[1] + 1)}
            # turned, it may reach into what moves with it (hands holding a board's edge): then carried
            # clear of that too, ahead of it or above it
            for way_to, word in ((ahead, "ahead"), (np.array([0.0, 0.0, 1.0]), "up")):
                if np.linalg.norm(way_to) == 0:
                    continue
                need = max((float((w @ way_to).max() - (v @ way_to).min()) + PATH_NEAR
                            for f, v in at.items() for w in them(f) if meets(v, w)), default=0.0)
                if not 0 < need < DETOUR_MAX:
                    continue
                for part in PATH_SHARES:        # clear of it everywhere, or only mostly (room under a lintel)
                    shift = way_to * need * part
                    h2 = max(h, ease(need * part, FLOOR_M))
                    span2 = held(lambda f, turned=turned, shift=shift: near(_film(f)[1]) or near([turned(f)]) or
                                 near([turned(f, shift=shift)]), h2)
                    edits.append((f"{what} and carry it {need * part * 1000:.0f} mm {word} to pass {other}",
                                  lambda pose, edit=edit, shift=shift: edit(pose, shift=shift), span2, h2))
    a, b = parse_segment(run.segment)
    ends = _ends(trial, run.segment)
    passes: dict[tuple, bool] = {}

    def fits(f: int, pose: Pose, what: str) -> bool:
        if (f, what) not in passes:
            passes[(f, what)] = not failing_required(check_pose(trial.project, trial.scene, pose, f))
        return passes[(f, what)]
    out: list[Candidate] = []
    made: set[tuple] = set()
    for summary, edit, (f1, f2), h in edits:
        if f2 - f1 < 2:
            continue
        keys_at: dict[int, Pose] = {}
        for f in (f1, f2):
            pose = apply_changes(scene, film(f)[0], [edit(film(f)[0])])
            if not fits(f, pose, summary):
                break
            keys_at[f] = pose
        if len(keys_at) < 2:
            continue
        for ramp in sorted({max(r, h) for r in PATH_RAMPS}):
            frames = [(f, keys_at[f], "") for f in (f1, f2)]
            before = next((f for f in range(f1 - ramp, max(fa + 1, f1 - ramp - PATH_SEEK), -1)
                           if fits(f, film(f)[0], "")), None)          # the film's pose there must pass
            after = next((f for f in range(f2 + ramp, min(fb - 1, f2 + ramp + PATH_SEEK))
                          if fits(f, film(f)[0], "")), None)
            if before is not None:
                frames.insert(0, (before, film(before)[0], "before"))
            if after is not None:
                frames.append((after, film(after)[0], "after"))
            sig = (summary, tuple(f for f, _, _ in frames))
            if sig in made:
                continue
            made.add(sig)
            keys, split, taken = [], run.segment, set(trial.states)
            for f, pose, where in frames:
                sid = _state_id(trial, f)
                while sid in taken:
                    sid += "_b"
                taken.add(sid)
                keys.append({"kind": "insert_state", "state": sid, "frame": f, "split": split,
                             "pose": pose.to_dict(), "shot": _shot(trial, a, f),
                             "description": (f"repair key: the film's way {where} a detour ({summary}, "
                                             f"held from {f1} to {f2})" if where else
                                             f"repair key: {summary}, held from {f1} to {f2}")})
                split = f"{sid}..{b}"
            eased = (f", eased off the way from {frames[0][0]}" if frames[0][2] else "") + \
                    (f" and back onto it by {frames[-1][0]}" if frames[-1][2] else "")
            out.append(("key", f"insert key states {', '.join(k['state'] for k in keys)}: {summary}, held from "
                               f"{f1} to {f2}{eased}", ends + keys))
    return out


def _move(summary: str) -> str:
    """What an edit does without its sizes: 'move pelvis # mm along -x clear of stand'."""
    return re.sub(r"[-+]?\d+(\.\d+)?", "#", summary.split(" along ")[0]) + \
        (" along " + re.sub(r"[-+]?\d+\.\d+", "#", summary.split(" along ", 1)[1]) if " along " in summary else "")


def _edit_size(scene, pose: Pose, changes: list[dict]) -> float:
    """Metres of root travel plus radians of root turn and of joints that an edit makes."""
    new = apply_changes(scene, pose, changes)
    size = 0.0
    for r in new.roots:
        a, b = np.asarray(pose.roots[r], float), np.asarray(new.roots[r], float)
        size += float(np.linalg.norm(b[:3] - a[:3])) + 2 * float(np.arccos(min(1.0, abs(float(a[3:] @ b[3:])))))
    for j in new.joints:
        size += float(np.abs(np.asarray(new.joints[j], float) - np.asarray(pose.joints[j], float)).sum())
    return size


# ---- tool parameters and tools ----------------------------------------------
def _event_kind(trial: FilmTrial, run: FailingRun) -> str:
    e = next((e for e in trial.plan.get("events", []) if e.get("id") == run.evidence.get("event")), {})
    return e.get("kind", "")


def param_candidates(trial: FilmTrial, run: FailingRun) -> list[Candidate]:
    tool, params = segment_tool(trial.plan, run.segment)
    tools = motion_tools()
    row = next(s for s in trial.segments if s["segment"] == run.segment)
    if tool not in tools or row["tool"] not in tools:      # tracks no registered tool made: switch first
        return []
    props = tools[tool].schema.get("properties", {})
    out: list[Candidate] = []
    ends = _ends(trial, run.segment)

    def offer(summary: str, new: dict) -> None:
        out.append(("params", f"{run.segment} {tool}: {summary}", ends + [
            {"kind": "segment", "segment": run.segment, "tool": tool, "params": new,
             "from": {"tool": tool, "params": params}}]))
    kind = _event_kind(trial, run)
    if "begin" in props:
        cur = float(params.get("begin", 0.0))
        top = float(props["begin"].get("maximum", 0.95))
        if run.check == "EventsSatisfied" and kind in ("grasp", "reach"):
            for v in (round(cur * 0.5, 3), 0.0):
                if v < cur:
                    offer(f"earlier {kind}: begin {cur:g} → {v:g}", dict(params, begin=v))
        if run.check == "Supported" or kind == "release":
            for v in (round(min(top, cur + 0.25), 3), top):
                if v > cur:
                    offer(f"later release: begin {cur:g} → {v:g}", dict(params, begin=v))
    if run.check == "NoPenetration":
        walk_props, walk, put = _walk_part(props, params)
        if "waypoints" in walk_props:
            pose = trial.pose_at(run.worst).completed(trial.scene)
            also = tuple(n for k in trial.siblings(run) for n in k[1:] if not trial.scene.body(n).is_static)
            facing = walk_props.get("facing", {}).get("enum", [])
            a, b = (trial.states.get(s) for s in parse_segment(run.segment))
            for summary, changes in _across(detour_candidates(trial, pose, run.evidence, also, planar=True), a, b)[:4]:
                to = changes[0]["to"]
                u = (run.worst - a.frame) / max(b.frame - a.frame, 1) if a and b else 0.5
                pts = list(walk.get("waypoints", []))
                at = min(len(pts), int(round(u * (len(pts) + 1))))
                via = dict(walk, waypoints=pts[:at] + [[round(to[0], 4), round(to[1], 4)]] + pts[at:])
                offer(f"via-point ({to[0]:.2f}, {to[1]:.2f}) at {run.worst}: {summary}", put(via))
                if "path" in facing and walk.get("facing") != "path":
                    offer(f"via-point ({to[0]:.2f}, {to[1]:.2f}) at {run.worst}, facing the path: {summary}",
                          put(dict(via, facing="path")))
        out += [("params", f"{run.segment} {tool}: {summary}", ends + [
            {"kind": "segment", "segment": run.segment, "tool": tool, "params": new,
             "from": {"tool": tool, "params": params}}]) for summary, new in step_candidates(trial, run, props, params)]
        rot = props.get("rotation", {}).get("enum")
        if rot:
            for v in rot:
                if v != params.get("rotation", rot[0]):
                    offer(f"rotation {params.get('rotation', rot[0])} → {v}", dict(params, rotation=v))
    return out


LENGTHS = (0.8, 1.2, 0.9, 1.1, 0.7, 1.3)     # step lengths tried, as shares of the walk's own


def _across(detours: list, a, b) -> list:
    """The detours that step aside from the way the root travels between the states (a via-point
    along the way changes nothing)."""
    if a is None or b is None or not detours:
        return detours
    root = detours[0][1][0]["name"]
    way = np.asarray(b.pose.roots[root][:2], float) - np.asarray(a.pose.roots[root][:2], float)
    if np.linalg.norm(way) < 1e-6:
        return detours
    way /= np.linalg.norm(way)
    return [d for d in detours if abs(np.dot(np.asarray(d[1][0]["to"][:2]) - d[1][0]["from"][:2], way)) <
            0.5 * np.linalg.norm(np.asarray(d[1][0]["to"][:2]) - d[1][0]["from"][:2])]


def _walk_part(props: dict, params: dict):
    """The walk's schema properties and parameters (the tool's own, or its `walk` object) and how
    to put edited walk parameters back."""
    if "walk" in props and "walk" in params and "step_length" not in props:
        return (props["walk"].get("properties", {}), dict(params["walk"]),
                lambda walk: dict(params, walk=walk))
    return props, dict(params), lambda walk: walk


def step_candidates(trial: FilmTrial, run: FailingRun, props: dict, params: dict) -> list[tuple[str, dict]]:
    """For a walk (the tool's own parameters or its `walk` object) whose feet meet a static body:
    higher steps over its top for every leg at once, and other step lengths so the feet land
    clear of it, alone and together."""
    walk_props, walk, put = _walk_part(props, params)
    if "step_height" not in walk_props and "step_length" not in walk_props:
        return []
    a, b = run.evidence["a"], run.evidence["b"]
    other = b if not trial.scene.body(a).is_static else a
    if not trial.scene.body(other).is_static:
        return []
    pose = trial.pose_at(run.worst).completed(trial.scene)
    top = float(_world_vertices(trial.project, trial.scene, pose_world(trial.scene, pose), other)[:, 2].max())
    h0 = float(walk.get("step_height", 0.05))
    hmax = float(walk_props.get("step_height", {}).get("maximum", 1.0))
    heights = [v for v in sorted({round(top + 0.005, 4), round(top + 0.01, 4), round(top + 0.02, 4),
                                  round(h0 * 1.5, 4), round(h0 * 2.0, 4)}) if h0 < v <= hmax]
    l0 = float(walk.get("step_length", 0.35))
    lmax = float(walk_props.get("step_length", {}).get("maximum", 3.0))
    lengths = [round(l0 * k, 4) for k in LENGTHS if 0 < l0 * k <= lmax] if "step_length" in walk_props else []
    tried = [(v, l0) for v in heights] + [(h0, v) for v in lengths] + \
        [(h, v) for v in lengths for h in heights[:2]]
    out = []
    for h, v in tried:
        new = dict(walk, step_height=h) if h != h0 else dict(walk)
        if v != l0:
            new["step_length"] = v
        what = ", ".join(w for w in ((f"step_height {h0:g} → {h:g} (the top of {other} is at {top:.3f} m)"
                                      if h != h0 else ""), (f"step_length {l0:g} → {v:g}" if v != l0 else "")) if w)
        kind = "higher steps" if h != h0 and v == l0 else ("feet landing clear of " + other if h == h0
                                                           else "higher steps landing clear of " + other)
        out.append((f"{kind} for every leg: {what}", put(new)))
    return out


def tool_candidates(trial: FilmTrial, run: FailingRun) -> list[Candidate]:
    tool, params = segment_tool(trial.plan, run.segment)
    row = next(s for s in trial.segments if s["segment"] == run.segment)
    tools = motion_tools()
    ends = _ends(trial, run.segment)
    out: list[Candidate] = []
    seen = {(tool, repr(sorted(params.items())))} if row["tool"] in tools else set()

    def offer(summary: str, new_tool: str, new_params: dict) -> None:
        key = (new_tool, repr(sorted(new_params.items())))
        if key in seen or new_tool not in tools:
            return
        seen.add(key)
        out.append(("tool", f"{run.segment}: {summary}", ends + [
            {"kind": "segment", "segment": run.segment, "tool": new_tool, "params": new_params,
             "from": {"tool": row["tool"] if row["tool"] not in tools else tool, "params": params}}]))
    if row["tool"] not in tools:
        offer(f"re-bake with interpolate (the tracks were made by {row['tool']!r}, no registered tool)",
              "interpolate", {})
    if run.check == "Supported":
        body = trial.scene.group_root(run.evidence["body"])
        offer(f"{tool} → simulate: let {body} drop under gravity", "simulate", {"bodies": [body]})
    for m in plan_entries(trial, run):
        offer(f"{tool} → {m['tool']} as the plan has it for {m['segment']}", m["tool"],
              _runs_here(trial, m.get("params") or {}))
    for summary, new_params in operate_params(trial, run.segment):
        offer(f"{tool} → operate: {summary}", "operate", new_params)
    if tool != "interpolate":
        offer(f"{tool} → interpolate", "interpolate", {})
    return out


def _end_poses(trial: FilmTrial, segment: str) -> tuple[Pose, Pose] | None:
    row = next((s for s in trial.segments if s["segment"] == segment), None)
    if row is None:
        return None
    return tuple(trial.states[sid].pose if sid in trial.states else trial.pose_at(int(f)).completed(trial.scene)
                 for sid, f in zip(parse_segment(segment), (row["start"], row["end"])))


def operate_params(trial: FilmTrial, segment: str) -> list[tuple[str, dict]]:
    """`operate` for a segment over which a part that moves only on its own joint (a door on its hinge)
    changes its joint's value while a hand holds one of its handles at both ends (within the tool's
    tolerance): the hand drives the part, its chain one the plan declares for it (each distinct one,
    longest first), the character's feet planted with the legs the plan declares for it."""
    from studio.timeline.motion.reach import TOLERANCE
    scene = trial.scene
    ends = _end_poses(trial, segment)
    if ends is None:
        return []
    pa, pb = ends
    frames = {f.name: f.body for f in scene.frames}
    out = []
    for handle, hbody in frames.items():
        j = driven_joint(scene, hbody, trial.fixed)
        if j is None or isinstance(pa.joints.get(j.name), list) or \
                abs(float(pa.joints[j.name]) - float(pb.joints[j.name])) < 1e-6:
            continue
        for eff, ebody in frames.items():
            if eff == handle or scene.body(ebody).is_static or _moved_by(scene, ebody, j.child):
                continue
            if any(float(np.linalg.norm(frame_pose(scene, p, eff)[:3, 3] - frame_pose(scene, p, handle)[:3, 3]))
                   > TOLERANCE for p in (pa, pb)):
                continue
            chains = sorted({tuple(j for j in c if scene.joint(j).type != "fixed")
                             for c in event_keys.declared_chains(trial.plan, eff)} - {()}, key=lambda c: -len(c)) or \
                [tuple(reversed(_chain(scene, ebody, j.name, 8)))]
            legs = event_keys.declared_legs(trial.plan, scene.group_root(ebody))
            for chain in [c for c in chains if c][:2]:
                params = {"part": j.child, "handle": handle, "effectors": [{"frame": eff, "joints": list(chain)}]}
                if legs:
                    params["legs"] = legs
                out.append((f"{eff} drives {j.child} on {j.name} by {handle} "
                            f"({float(pa.joints[j.name]):.3f} → {float(pb.joints[j.name]):.3f})", params))
    return out


def _names(value) -> set[str]:
    """Every string in a tool's parameters: the bodies, frames and joints it names."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_names(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_names(v) for v in value)) if value else set()
    return set()


def run_subjects(trial: FilmTrial, run: FailingRun) -> set[str]:
    """The bodies and frames a failure is about, and the roots of their characters."""
    ev, scene = run.evidence, trial.scene
    names = {ev.get(k) for k in ("a", "b", "body") if ev.get(k)}
    if run.check == "JointLimits" and ev.get("joint"):
        names.add(scene.joint(ev["joint"]).child)
    if run.check == "EventsSatisfied":
        e = next((e for e in trial.plan.get("events", []) if e.get("id") == ev.get("event")), {})
        names |= set(e.get("subjects", []))
    frames = {f.name: f.body for f in scene.frames}
    bodies = {frames.get(n, n) for n in names}
    return names | {scene.group_root(b) for b in bodies if b in scene.body_names} - \
        {b for b in bodies if b in scene.body_names and scene.body(b).is_static}


def _span(trial: FilmTrial, segment: str) -> tuple[int, int] | None:
    at = {s.get("id"): s.get("frame") for s in trial.plan.get("states", [])}
    at.update({k: s.frame for k, s in trial.states.items()})
    try:
        a, b = (at.get(s) for s in parse_segment(segment))
    except ValueError:
        return None
    return (int(a), int(b)) if a is not None and b is not None else None


def plan_entries(trial: FilmTrial, run: FailingRun, most: int = 4) -> list[dict]:
    """Other motion entries of the plan about the failure's subjects, those whose planned frames
    overlap the failing frames (an event's whole window) first: what the project already says
    should move these bodies here."""
    frames = set(run.frames)
    if run.check == "EventsSatisfied":
        w = run.evidence.get("window") or []
        frames |= set(range(int(w[0]), int(w[1]) + 1)) if len(w) == 2 else set()
    subjects = run_subjects(trial, run)
    picked = []
    for m in trial.plan.get("motion", []) or []:
        if m.get("segment") == run.segment or not m.get("tool") or not subjects & _names(m.get("params") or {}):
            continue
        span = _span(trial, m["segment"])
        overlap = len(frames & set(range(span[0], span[1] + 1))) if span else 0
        near = min((abs(f - (span[0] + span[1]) / 2) for f in frames), default=0) if span else 1e9
        picked.append((-overlap, near, m))
    return [m for _, _, m in sorted(picked, key=lambda t: t[:2])][:most]


def _runs_here(trial: FilmTrial, params: dict) -> dict:
    """The entry's parameters for another segment: a `from` naming a state the storyboard lacks is
    left out (the run starts at the segment's own first state)."""
    out = dict(params)
    if "from" in out and out["from"] not in trial.states:
        out.pop("from")
    return out


def candidates(trial: FilmTrial, run: FailingRun, rejected: list[list[dict]] | None = None) -> list[Candidate]:
    """Every candidate for the run, smallest edit first: fewest new key states, then the smallest
    change of pose (a tool's parameters or another tool insert none and change no key pose, so they
    keep their order ahead); a rejected edit is left out, and a kind a person turned down comes last."""
    rejected = rejected or []
    passed: list = []
    out = param_candidates(trial, run) + tool_candidates(trial, run) + key_candidates(trial, run, passed)
    if key_frame(trial, run) == run.worst:
        out += spread_candidates(trial, run, passed) + path_candidates(trial, run)
    out = [c for c in out if _sans_ends(c[2]) not in [_sans_ends(r) for r in rejected]]
    turned_down = {_kind(r) for r in rejected}
    return sorted(out, key=lambda c: (c[0] in turned_down, *change_size(trial, c[2])))


def change_size(trial: FilmTrial, changes: list[dict]) -> tuple[int, float]:
    """How much a candidate changes: the key states it inserts, and how far their poses lie from the
    film's at their frames (metres of root travel plus radians of root turn and of joints)."""
    keys = [c for c in changes if c["kind"] == "insert_state" and c.get("split")]
    size = 0.0
    for c in keys:
        new = Pose.from_dict(c["pose"], trial.scene).completed(trial.scene)
        old = trial.pose_at(int(c["frame"])).completed(trial.scene)
        for r in new.roots:
            a, b = np.asarray(old.roots[r], float), np.asarray(new.roots[r], float)
            size += float(np.linalg.norm(b[:3] - a[:3])) + 2 * float(np.arccos(min(1.0, abs(float(a[3:] @ b[3:])))))
        for j in new.joints:
            size += float(np.abs(np.asarray(new.joints[j], float) - np.asarray(old.joints[j], float)).sum())
    return len(keys), round(size, 9)


def _kind(changes: list[dict]) -> str:
    if any(c["kind"] == "insert_state" and c.get("split") for c in changes):
        return "key"
    seg = next((c for c in changes if c["kind"] == "segment"), None)
    return "params" if seg and seg["tool"] == seg.get("from", {}).get("tool") else "tool"


def _sans_ends(changes: list[dict]) -> list:
    return [{k: v for k, v in c.items() if k not in ("pose", "description")} if c["kind"] == "insert_state"
            else c for c in changes if not (c["kind"] == "insert_state" and not c.get("split"))]
