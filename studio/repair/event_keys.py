"""Key states for unmet hand events: every effector an unmet grasp or reach wants at a frame,
brought there together.

The frame is the one inside the run's window that the most unmet grasp and
reach events share (so one key serves a reach, the grasp after it and the
other hand's grasp alike). Each effector's target is the point its event
names: a reach's frame or body origin; for a grasp, a named frame on the
grasped body that a reach of the same effector aims at, else the body's
surface point nearest the effector. A free body the grasp wants stays where
the segment's first state has it until then. The chains are the ones the
plan's motion entries declare for the effector (else the joints above it),
solved by IK within limits; when the targets are out of reach the
character's root first moves across the floor towards them, stopping short
by a range of arm's lengths (with legs the plan declares for that root, the
feet planted again, and crouching); and a free body may instead be brought
to the effectors, held out towards it or where they are. A body two hands
grasp is also held from a stance square before it, a hand on each of two
opposite faces (`grasp_keys`). Each pose must then pass the one-frame checks
like any key state.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose
from studio.timeline.motion.ik import Goal, IKError, frame_pose, solve_ik

from studio.repair.grasp_keys import square_poses
from studio.repair.offline import _chain, _root_change

KINDS = ("grasp", "reach")
BACK_OFF = (0.0, 0.15, 0.3, 0.45)      # metres short of the targets the root stops, arm's lengths
FIT = 0.5                              # share of an event's tolerance an effector may miss by
LOWER = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)          # metres a character with declared legs may crouch
MOST = 2                               # root moves kept per standoff and distance (each checked like a key state)
RISES = (0.0, 0.9, -0.9)               # shares of a grasp's tolerance a held body sits below or above the hands
STANDOFFS = (None, np.array([0.0, 0.0, 0.6]))   # a hand on its target, or above it by 0.6 tolerance (or
                                                # 0.6 tolerance nearer the character: holding an edge)


@dataclass
class Want:
    event: str
    kind: str
    effector: str
    what: str                          # the grasped body, or the reached frame or body
    tolerance: float


def unmet(reports, plan: dict) -> set[str]:
    """Ids of the plan's events that EventsSatisfied finds unmet."""
    return {e.get("event") for r in reports if r.name == "EventsSatisfied" and r.verdict == "fail"
            for e in r.evidence}


def wants(trial, names: set[str]) -> list[Want]:
    """The unmet grasp and reach events whose effector is a named frame, as wants."""
    from studio.checks.events import DEFAULT_TOL
    frames = {f.name for f in trial.scene.frames}
    out = []
    for e in trial.plan.get("events", []) or []:
        subj = list(e.get("subjects", []))
        if e.get("id") not in names or e.get("kind") not in KINDS or len(subj) < 2 or subj[0] not in frames:
            continue
        tol = float((e.get("params") or {}).get("tolerance", DEFAULT_TOL[e["kind"]]))
        out.append(Want(e["id"], e["kind"], subj[0], subj[1], tol))
    return out


def shared_frame(plan: dict, ids: list[str], lo: int, hi: int, prefer: int) -> tuple[int, list[str]]:
    """The frame in lo..hi inside the most of the events' windows (nearest `prefer` on a tie)."""
    windows = {e["id"]: e.get("window") for e in plan.get("events", []) or [] if e.get("id") in ids}
    best, cover = prefer, []
    for f in range(lo, hi + 1):
        here = [i for i, w in windows.items() if w and len(w) == 2 and int(w[0]) <= f <= int(w[1])]
        if len(here) > len(cover) or (len(here) == len(cover) and abs(f - prefer) < abs(best - prefer)):
            best, cover = f, here
    return best, cover


def declared_chain(plan: dict, effector: str) -> list[str]:
    """The joints a plan motion entry declares for the effector (the first that does)."""
    got = _first_declared(plan, lambda v: v.get("frame") == effector and isinstance(v.get("joints"), list))
    return list(got["joints"]) if got else []


def declared_chains(plan: dict, effector: str) -> list[list[str]]:
    """Every chain the plan's motion entries declare for the effector, in the plan's order."""
    out: list[list[str]] = []
    for m in plan.get("motion", []) or []:
        stack = [m.get("params") or {}]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                if v.get("frame") == effector and isinstance(v.get("joints"), list) and v["joints"] not in out:
                    out.append(list(v["joints"]))
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
    return out


def declared_legs(plan: dict, root: str) -> dict:
    """The legs a plan motion entry declares for the character's root ({"root", "legs"}), if any."""
    got = _first_declared(plan, lambda v: v.get("root") == root and isinstance(v.get("legs"), list))
    return {"root": root, "legs": got["legs"]} if got else {}


def _first_declared(plan: dict, wanted) -> dict | None:
    """The first object, anywhere in the plan's motion params, that `wanted` accepts."""
    stack = [m.get("params") or {} for m in reversed(plan.get("motion", []) or [])]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if wanted(v):
                return v
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
    return None


def _moved(trial, pose: Pose, root: str, delta: np.ndarray, legs: dict) -> tuple[Pose, dict] | None:
    """The pose with the root moved by delta and, with declared legs, the feet planted again where
    they stood (shifted across the floor with the root)."""
    change = _root_change(pose, root, delta)
    moved = pose.copy()
    moved.roots[root] = change["to"]
    if legs:
        from studio.timeline.motion.walk import legs_of, sole_placements
        from studio.timeline.motion.walk_feet import place_feet
        try:
            each = legs_of(trial.scene, legs, "repair")
        except ValueError:
            return None
        feet = {k: v + np.array([delta[0], delta[1], 0.0, 0.0]) for k, v in
                sole_placements(trial.scene, pose, each).items()}
        moved, err = place_feet(trial.scene, moved, {leg.name: (leg.joints, leg.sole) for leg in each}, feet, 60)
        if err > 0.003:
            return None
    return moved, change


def _moved_changes(trial, pose: Pose, root: str, delta: np.ndarray, legs: dict) -> list[dict] | None:
    """`_moved` as a key state's changes: the root's, then every joint the planted feet turned."""
    got = _moved(trial, pose, root, delta, legs)
    if got is None:
        return None
    moved, change = got
    return [change] + [{"kind": "joint", "name": k, "from": pose.joints[k], "to": moved.joints[k]}
                       for k in sorted(moved.joints) if moved.joints[k] != pose.joints[k]]


def _targets(trial, pose: Pose, ws: list[Want], standoff: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per effector, where its events want it in this pose (a grasp's surface point moved by
    `standoff` times its tolerance: off the surface, clear of what the body rests on)."""
    scene = trial.scene
    frames = {f.name for f in scene.frames}
    world = pose_world(scene, pose)
    reached = {w.effector: w.what for w in ws if w.kind == "reach" and w.what in frames}
    out: dict[str, np.ndarray] = {}
    for w in sorted(ws, key=lambda w: w.kind != "reach"):
        if w.effector in out:
            continue
        if w.kind == "reach":
            out[w.effector] = (frame_pose(scene, pose, w.what)[:3, 3] if w.what in frames
                               else world[w.what][:3, 3]) + (0.0 if standoff is None else standoff * w.tolerance)
            continue
        aim = reached.get(w.effector)
        if aim is not None and scene.frame(aim).body == w.what:
            out[w.effector] = frame_pose(scene, pose, aim)[:3, 3] + (0.0 if standoff is None else standoff * w.tolerance)
            continue
        m = body_mesh(scene.body(w.what), trial.project.path).copy()
        m.apply_transform(world[w.what])
        here = frame_pose(scene, pose, w.effector)[:3, 3]
        out[w.effector] = trimesh.proximity.closest_point(m, here[None])[0][0] + \
            (0.0 if standoff is None else standoff * w.tolerance)
    return out


def _reach(trial, pose: Pose, ws: list[Want], chains: list[str],
           standoff: np.ndarray | None = None) -> tuple[Pose, float] | None:
    targets = _targets(trial, pose, ws, standoff)
    try:
        return solve_ik(trial.scene, pose, chains, [Goal(e, t) for e, t in targets.items()], 200)
    except IKError:
        return None


def resting(trial, pose: Pose, ws: list[Want], before: Pose | None) -> tuple[Pose, list[dict]]:
    """The pose with each free body a grasp wants still where the state before has it (nothing has
    picked it up yet), and those changes."""
    if before is None:
        return pose, []
    scene, out, changes = trial.scene, pose.copy(), []
    for body in dict.fromkeys(w.what for w in ws if w.kind == "grasp"):
        root = scene.group_root(body)
        if scene.body(root).is_static or list(before.roots[root]) == list(pose.roots[root]):
            continue
        changes.append({"kind": "root", "name": root, "from": list(map(float, pose.roots[root])),
                        "to": [float(v) for v in before.roots[root]]})
        out.roots[root] = changes[-1]["to"]
    return out, changes


def key_poses(trial, pose: Pose, ws: list[Want], before: Pose | None = None,
              frame: int | None = None) -> list[tuple[str, list[dict]]]:
    """Poses with every wanted effector at its target: by IK, by moving the root then IK, or by
    bringing a free grasped body to the effectors; with the key's `frame`, a body two hands grasp
    also held from a stance square before it (`grasp_keys`). With `before` (the pose of the state
    that opens the segment), a grasped body is first put back where it rests there."""
    if not ws:
        return []
    start, put_back = resting(trial, pose, ws, before)
    out = []
    for summary, changes in _key_poses(trial, start, ws, frame):
        touched = {c["name"] for c in changes if c["kind"] == "root"}
        kept = [c for c in put_back if c["name"] not in touched]
        out.append(((f"{summary}, " + ", ".join(f"{c['name']} left where it rests" for c in kept)) if kept
                    else summary, put_back + changes))
    return out


def _key_poses(trial, pose: Pose, ws: list[Want], frame: int | None = None) -> list[tuple[str, list[dict]]]:
    scene = trial.scene
    effs = list(dict.fromkeys(w.effector for w in ws))
    tol = min(w.tolerance for w in ws) * FIT
    own = {e: [j for j in (declared_chain(trial.plan, e) or _chain(scene, scene.frame(e).body, "", 8))
               if scene.joint(j).type != "fixed"] for e in effs}    # a fixed joint has no value to solve
    chains = list(dict.fromkeys(j for e in effs for j in own[e]))
    names = ", ".join(effs)
    what = ", ".join(dict.fromkeys(w.what for w in ws))
    out = []

    def joints(solved: Pose) -> list[dict]:
        return [{"kind": "joint", "name": n, "from": pose.joints[n], "to": solved.joints[n]}
                for n in chains if solved.joints[n] != pose.joints[n]]
    if chains:
        got = _reach(trial, pose, ws, chains)
        if got and got[1] <= tol:
            out.append((f"bring {names} to {what} by IK on {', '.join(chains)} ({got[1] * 1000:.1f} mm off)",
                         joints(got[0])))
    root = scene.group_root(scene.frame(effs[0]).body)
    legs = declared_legs(trial.plan, root)
    leg_joints = {j for leg in legs.get("legs", []) for j in leg.get("joints", [])}
    targets = _targets(trial, pose, ws)
    here = np.array([frame_pose(scene, pose, e)[:3, 3] for e in targets])
    gap = np.mean(np.array(list(targets.values())) - here, axis=0)
    flat = np.array([gap[0], gap[1], 0.0])
    dist = float(np.linalg.norm(flat))
    movable = not scene.body(root).is_static and all(scene.group_root(scene.frame(e).body) == root for e in effs)
    if frame is not None and movable and all(own.values()):
        out += square_poses(trial, pose, ws, own, root, legs, frame, tol)
    if chains and movable:
        toward = np.asarray(pose.roots[root][:3]) - np.mean(list(targets.values()), axis=0)
        toward = np.array([toward[0], toward[1], 0.0]) / max(np.linalg.norm(toward[:2]), 1e-9)
        for lift in (*STANDOFFS, 0.6 * toward):
            for back in BACK_OFF:          # each stand-off distance: the nearest may put the body in the target's part
                found = 0
                for drop in (LOWER if legs else (0.0,)):
                    if found >= MOST or (dist <= back and back > 0):
                        continue
                    delta = (flat * (dist - back) / dist if dist > back else np.zeros(3)) + [0.0, 0.0, -drop]
                    got = _moved(trial, pose, root, delta, legs)
                    if got is None:
                        continue
                    moved, change = got
                    solved = _reach(trial, moved, ws, chains, lift)
                    if not solved or solved[1] > tol:
                        continue
                    found += 1
                    planted = [{"kind": "joint", "name": n, "from": pose.joints[n], "to": moved.joints[n]}
                               for n in sorted(leg_joints) if n not in chains and moved.joints[n] != pose.joints[n]]
                    off = "" if lift is None else (" above" if lift[2] > 0 else " short of")
                    out.append((f"move {root} {np.linalg.norm(delta):.2f} m towards {what}"
                                + (f" ({drop * 100:.0f} cm lower, feet planted)" if drop else "")
                                + f" and bring {names} to{off} it by IK ({solved[1] * 1000:.1f} mm off)",
                                [change] + planted + joints(solved[0])))
    out += _bring(trial, pose, ws, root, tol, (0.0, 0.4, 0.8))
    if chains:                           # the arms held out towards it first, from where the root is or nearer
        for back in BACK_OFF if movable else (dist,):
            if dist <= back and back > 0:
                continue
            delta = flat * (dist - back) / dist if dist > back else np.zeros(3)
            got = _moved(trial, pose, root, delta, legs) if back or dist > 0 else (pose, None)
            if got is None:
                continue
            moved, change = got
            solved = _reach(trial, moved, ws, chains)
            if solved is None:
                continue
            lead = ([change] if change else []) + \
                [{"kind": "joint", "name": n, "from": pose.joints[n], "to": moved.joints[n]}
                 for n in sorted(leg_joints) if n not in chains and moved.joints[n] != pose.joints[n]] + \
                joints(solved[0])
            words = (f"move {root} {np.linalg.norm(delta):.2f} m towards {what}, " if change else "") + \
                f"hold {names} out towards it by IK"
            out += [(f"{words}, {summary}", lead + changes)
                    for summary, changes in _bring(trial, solved[0], ws, root, tol, (0.0, 0.9), RISES)]
    return out


def _bring(trial, pose: Pose, ws: list[Want], root: str, tol: float, aways,
           rises=(0.0,)) -> list[tuple[str, list[dict]]]:
    """Each free body a grasp wants brought to the grasping effectors (off their own bodies by
    `aways` shares of the tolerance, or above or below them by `rises` shares: a hand holds an
    edge from below or above, not from inside it)."""
    scene, out = trial.scene, []
    for body in dict.fromkeys(w.what for w in ws if w.kind == "grasp"):
        if scene.body(body).is_static or scene.group_root(body) == root:
            continue
        held = [w for w in ws if w.kind == "grasp" and w.what == body]
        targets = _targets(trial, pose, held + [w for w in ws if w.kind == "reach"])
        world = pose_world(scene, pose)
        here = np.array([frame_pose(scene, pose, w.effector)[:3, 3] for w in held])
        delta = np.mean(here - np.array([targets[w.effector] for w in held]), axis=0)
        away = np.zeros(3)               # further from the character, still within the grasp's reach
        for w in held:
            v = frame_pose(scene, pose, w.effector)[:3, 3] - world[root][:3, 3]
            away += np.array([v[0], v[1], 0.0]) / max(np.linalg.norm(v[:2]), 1e-9)
        away /= max(np.linalg.norm(away), 1e-9)
        for k in aways:
            for r in rises:
                step = delta + away * k * tol / FIT - np.array([0.0, 0.0, r * tol / FIT])
                out.append((f"bring {body} {np.linalg.norm(step) * 1000:.0f} mm to "
                            f"{', '.join(w.effector for w in held)}"
                            + (f", {k * tol / FIT * 1000:.0f} mm beyond them" if k else "")
                            + (f", {abs(r) * tol / FIT * 1000:.0f} mm {'above' if r < 0 else 'below'} them"
                               if r else ""),
                            [_root_change(pose, scene.group_root(body), step)]))
    return out


def region_poses(trial, pose: Pose, event: dict) -> list[tuple[str, list[dict]]]:
    """An unmet enter_region event's subject brought inside its region: the root of its tree (a free
    body, or a character with its declared legs planted again) moved so the subject's origin stands
    a tenth of the region in from its faces, at the point nearest where it is, at that height or
    at other heights inside (what it rests on decides which fit: each must pass its own checks)."""
    scene, subj = trial.scene, (event.get("subjects") or [None])[0]
    params = event.get("params") or {}
    if subj is None or "min" not in params or "max" not in params:
        return []
    frames = {f.name for f in scene.frames}
    if subj in frames:
        body, at = scene.frame(subj).body, frame_pose(scene, pose, subj)[:3, 3]
    elif subj in scene.body_names:
        body, at = subj, pose_world(scene, pose)[subj][:3, 3]
    else:
        return []
    root = scene.group_root(body)
    if scene.body(root).is_static or root in trial.fixed:
        return []
    lo, hi = np.asarray(params["min"], float), np.asarray(params["max"], float)
    margin = 0.1 * (hi - lo)
    near = np.clip(at, lo + margin, hi - margin)
    heights = sorted(dict.fromkeys(round(float(z), 6) for z in
                                   (near[2], *np.linspace(lo[2] + margin[2], hi[2] - margin[2], 4))),
                     key=lambda z: abs(z - at[2]))
    legs = declared_legs(trial.plan, root)
    out = []
    for z in heights:
        delta = np.array([near[0], near[1], z]) - at
        changes = _moved_changes(trial, pose, root, delta, legs)
        if changes is not None:
            out.append((f"move {root} {np.linalg.norm(delta) * 1000:.0f} mm into the region of {event.get('id')}",
                        changes))
    return out


THROUGH = (0.05, 0.1, 0.2)       # metres beyond the plane a pass_through's subject is brought


def through_poses(trial, pose: Pose, event: dict) -> list[tuple[str, list[dict]]]:
    """An unmet pass_through event's subject brought across its plane: the root of its tree (a free
    body, or a character with its declared legs planted again) moved along the plane's normal so the
    subject's centroid stands a few centimetres on the positive side (the film before the key has it
    on the negative side, so it passes between them). Each must pass its own checks; a way blocked
    by a part on a joint (a door) is cleared by the key's own part moves (`motion_candidates`)."""
    from studio.checks.shape import shape_of
    scene, subj = trial.scene, (event.get("subjects") or [None])[0]
    params = event.get("params") or {}
    if subj not in scene.body_names or "point" not in params or "normal" not in params:
        return []
    root = scene.group_root(subj)
    if scene.body(root).is_static or root in trial.fixed:
        return []
    n = np.asarray(params["normal"], float)
    n = n / max(np.linalg.norm(n), 1e-12)
    w = pose_world(scene, pose)[subj]
    c = w[:3, :3] @ shape_of(trial.check.meshes[subj]).centroid + w[:3, 3]
    side = float((c - np.asarray(params["point"], float)) @ n)
    legs = declared_legs(trial.plan, root)
    out = []
    for beyond in THROUGH:
        if side >= beyond:
            continue
        delta = (beyond - side) * n
        changes = _moved_changes(trial, pose, root, delta, legs)
        if changes is not None:
            out.append((f"move {root} {np.linalg.norm(delta) * 1000:.0f} mm through the plane of "
                        f"{event.get('id')}", changes))
    return out
