"""The offline repairer: repairs proposed from verifier evidence alone, no model.

Three rules, each tried in order of how little it changes, each candidate
verified before it is proposed (it must remove the failure it targets and add
no new required failure):
- NoPenetration: push the movable body out along the separating axis by the
  depth plus a margin, then by more, both ways (the evidence's axis pushes `a`
  out of `b`, but deep inside a thin wall it may point either way), then a
  clean separation of the two bodies' extents along it; a body on a character
  moves the character's root.
- Supported (floating): if the plan has a named frame grasping the body by
  this frame, attach it to that carrier (move it to within grip of the frame);
  otherwise drop it straight down onto whatever is under it (rays cast down
  from its lowest points onto the other bodies).
- JointLimits: clamp the joint to its limit, then re-solve IK with the chain's
  other joints so the nearest named frame below the joint (a gripper, a sole)
  stays where it was, when that still verifies.
"""
from __future__ import annotations

import numpy as np
import trimesh

from studio.checks.report import Report
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose
from studio.scene.transforms import from_7
from studio.store.project import Project
from studio.timeline.storyboard import State, get_state

from studio.repair.errors import RepairError
from studio.repair.proposals import (Proposal, distinct_failures, report_progress, save_proposal, state_set,
                                     stop_requested, verify_changes)
from studio.tools.verify import check_pose

MARGIN = 1e-3          # metres beyond the evidence's push distance
INSIDE = 1e-6          # how far inside a limit a clamped joint lands


def _root_change(pose: Pose, root: str, delta: np.ndarray) -> dict:
    old = list(map(float, pose.roots[root]))
    new = [*(np.asarray(old[:3]) + delta).tolist(), *old[3:]]
    return {"kind": "root", "name": root, "from": old, "to": [round(v, 9) for v in new]}


def _mover(scene: Scene, a: str, b: str, fixed: set[str] | frozenset = frozenset()) -> tuple[str, float] | None:
    """The body to move and the sign along the axis (which pushes a out of b); never one of the set
    (`fixed`, see `scenery`), nor a body whose tree's root is, since moving it moves that root."""
    def held(x: str) -> bool:
        return scene.body(x).is_static or x in fixed or scene.group_root(x) in fixed
    sa, sb = held(a), held(b)
    if sa and sb:
        return None
    if sb or (not sa and scene.joint_of_child(a) is None):
        return a, 1.0
    if sa or scene.joint_of_child(b) is None:
        return b, -1.0
    return a, 1.0


def _world_vertices(project: Project, scene: Scene, world: dict, body: str) -> np.ndarray:
    m = body_mesh(scene.body(body), project.path)
    return (world[body] @ np.c_[m.vertices, np.ones(len(m.vertices))].T).T[:, :3]


def penetration_candidates(project: Project, scene: Scene, pose: Pose, ev: dict,
                           fixed: set[str] | frozenset = frozenset()) -> list[tuple[str, list[dict]]]:
    """Pushes along the evidence's axis, smallest first, both ways (the axis of a sample
    deep inside a thin wall can point either way); then a clean separation of the two
    bodies' extents along that axis. A link whose tree's root is part of the set (an arm on a
    fixed base) is pushed by its own chain instead, by IK (`ik_push_candidates`)."""
    picked = _mover(scene, ev["a"], ev["b"], fixed)
    if picked is None:
        return ik_push_candidates(project, scene, pose, ev, fixed)
    body, sign = picked
    other = ev["b"] if body == ev["a"] else ev["a"]
    root = scene.group_root(body)
    axis = np.asarray(ev["axis"], float)
    axis /= max(np.linalg.norm(axis), 1e-12)
    push = float(ev.get("push_m", ev["depth_m"])) + MARGIN
    steps = [(k * push, s) for k in (1.0, 1.5, 2.0, 3.0) for s in (sign, -sign)]
    world = pose_world(scene, pose)
    mine = _world_vertices(project, scene, world, body) @ axis
    theirs = _world_vertices(project, scene, world, other) @ axis
    steps += [(theirs.max() - mine.min() + MARGIN, 1.0), (mine.max() - theirs.min() + MARGIN, -1.0)]
    out = []
    for dist, s in steps:
        out.append((f"push {root} out of {other} by {dist * 1000:.1f} mm "
                    f"along [{', '.join(f'{v:+.2f}' for v in s * axis)}]", [_root_change(pose, root, s * dist * axis)]))
    return out


CLEAR = (MARGIN, 0.02, 0.05)      # metres beyond a clean separation, for a link moved by its chain


def ik_push_candidates(project: Project, scene: Scene, pose: Pose, ev: dict,
                       fixed: set[str] | frozenset = frozenset()) -> list[tuple[str, list[dict]]]:
    """For a link that may not move by its root (an arm on a fixed base): its nearest named frame
    moved by the joints above it (IK within limits, the set's own joints left alone), along the
    evidence's axis by the push, and along each world axis clear of the other body, smallest first."""
    from studio.timeline.motion.ik import Goal, IKError, frame_pose, solve_ik
    world = pose_world(scene, pose)
    out = []
    for body, sign in ((ev["a"], 1.0), (ev["b"], -1.0)):
        if scene.body(body).is_static or body in fixed or scene.joint_of_child(body) is None:
            continue
        eff = next((f.name for f in scene.frames if f.body == body), None)
        chain = [j for j in _chain(scene, body, "", 6) if scene.joint(j).child not in fixed]
        if eff is None or not chain:
            continue
        other = ev["b"] if body == ev["a"] else ev["a"]
        axis = np.asarray(ev["axis"], float)
        axis /= max(np.linalg.norm(axis), 1e-12)
        push = float(ev.get("push_m", ev["depth_m"])) + MARGIN
        moves = [(sign * k * push * axis, f"{k * push * 1000:.1f} mm out of {other}") for k in (1.0, 2.0, 3.0)]
        mine, theirs = _world_vertices(project, scene, world, body), _world_vertices(project, scene, world, other)
        for ax in np.vstack([np.eye(3), -np.eye(3)]):
            clear = float((theirs @ ax).max() - (mine @ ax).min())
            for extra in CLEAR:
                if 0 < clear + extra < 1.0:
                    moves.append((ax * (clear + extra), f"{(clear + extra) * 1000:.0f} mm along "
                                  f"{'+-'[int(ax.sum() < 0)]}{'xyz'[int(np.argmax(np.abs(ax)))]} clear of {other}"))
        here = frame_pose(scene, pose, eff)[:3, 3]
        for move, words in sorted(moves, key=lambda m: float(np.linalg.norm(m[0]))):
            try:
                solved, err = solve_ik(scene, pose, chain, [Goal(eff, here + move)])
            except IKError:
                continue
            changes = [{"kind": "joint", "name": n, "from": pose.joints[n], "to": solved.joints[n]}
                       for n in chain if solved.joints[n] != pose.joints[n]]
            if changes and err < 0.5 * float(np.linalg.norm(move)):
                out.append((f"move {eff} {words} by {', '.join(chain)} ({err * 1000:.1f} mm off)", changes))
    return out


PART_STEPS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8)    # radians (or metres) a part is turned (or slid) on its joint


def driven_joint(scene: Scene, body: str, fixed: set[str] | frozenset = frozenset()):
    """The revolute or prismatic joint that moves `body` (through fixed joints: a knob on a door) when
    the body above it is part of the set (a door on its wall), else None: such a part moves only on
    its joint."""
    j = scene.joint_of_child(body)
    while j is not None and j.type == "fixed":
        j = scene.joint_of_child(j.parent)
    if j is None or j.type not in ("revolute", "prismatic"):
        return None
    if scene.body(j.child).is_static or j.child in fixed:
        return None
    return j if scene.body(j.parent).is_static or j.parent in fixed else None


def part_candidates(scene: Scene, pose: Pose, ev: dict,
                    fixed: set[str] | frozenset = frozenset()) -> list[tuple[str, list[dict]]]:
    """A part that moves only on its own joint (a door on its hinge, a drawer on its slide) turned
    or slid clear of the other body on that joint, both ways, smallest first, inside its limits."""
    out = []
    for body in dict.fromkeys((ev["a"], ev["b"])):
        j = driven_joint(scene, body, fixed)
        if j is None or isinstance(pose.joints.get(j.name), list):
            continue
        other = ev["b"] if body == ev["a"] else ev["a"]
        if scene.group_root(other) == scene.group_root(body):
            continue
        v = float(pose.joints[j.name])
        unit = "rad" if j.type == "revolute" else "m"
        for step in PART_STEPS:
            for s in (1.0, -1.0):
                to = v + s * step
                if j.lower + INSIDE <= to <= j.upper - INSIDE:
                    out.append((f"move {j.child} on {j.name} from {v:.3f} to {to:.3f} {unit} clear of {other}",
                                [{"kind": "joint", "name": j.name, "from": v, "to": round(to, 9)}]))
    return out


def drop_distance(project: Project, scene: Scene, pose: Pose, body: str) -> float | None:
    """How far the body can fall straight down before touching another body (None: nothing below)."""
    world = pose_world(scene, pose)
    mine = body_mesh(scene.body(body), project.path).copy()
    mine.apply_transform(world[body])
    zmin = mine.vertices[:, 2].min()
    low = mine.vertices[mine.vertices[:, 2] < zmin + 2e-3]
    if len(low) > 64:
        low = low[np.linspace(0, len(low) - 1, 64).astype(int)]
    lo, hi = mine.bounds
    group = scene.group_root(body)
    best = None
    for other in scene.bodies:
        if other.name == body or scene.group_root(other.name) == group or other.kind == "effect":
            continue
        m = body_mesh(other, project.path).copy()
        m.apply_transform(world[other.name])
        olo, ohi = m.bounds
        if ohi[2] > zmin + 1e-3 and olo[2] > zmin:
            continue
        if olo[0] > hi[0] or ohi[0] < lo[0] or olo[1] > hi[1] or ohi[1] < lo[1]:
            continue
        origins = low + [0.0, 0.0, 1e-4]
        dirs = np.tile([0.0, 0.0, -1.0], (len(origins), 1))
        locs, idx, _ = trimesh.ray.ray_triangle.RayMeshIntersector(m).intersects_location(origins, dirs)
        if len(locs):
            d = float(np.min(origins[idx, 2] - locs[:, 2])) - 1e-4
            best = d if best is None else min(best, d)
    return best


def carriers(plan: dict | None, scene: Scene, body: str, frame: int) -> list[str]:
    """Named frames that the plan has grasping `body` at `frame` (grasped by then, not yet released)."""
    events = (plan or {}).get("events", []) or []
    names = {f.name for f in scene.frames}
    out = []
    for g in events:
        subj = list(g.get("subjects", []))[:2]
        if g.get("kind") != "grasp" or len(subj) < 2 or subj[1] != body or subj[0] not in names:
            continue
        if int(g.get("window", [frame])[0]) > frame:
            continue
        released = any(r.get("kind") == "release" and list(r.get("subjects", []))[:2] == subj
                       and int(r.get("window", [0, frame])[1]) < frame for r in events)
        if not released:
            out.append(subj[0])
    return out


def attach_candidates(project: Project, scene: Scene, pose: Pose, body: str, frame: int,
                      plan: dict | None) -> list[tuple[str, list[dict]]]:
    """Bring the body to the frame that carries it: its nearest surface a small gap from the frame."""
    root = scene.group_root(body)
    world = pose_world(scene, pose)
    mesh = body_mesh(scene.body(body), project.path).copy()
    mesh.apply_transform(world[body])
    out = []
    for name in carriers(plan, scene, body, frame):
        f = scene.frame(name)
        origin = (world[f.body] @ from_7(np.asarray(f.local.as_list())))[:3, 3]
        closest, dist, _ = trimesh.proximity.closest_point(mesh, origin[None])
        v = origin - closest[0]
        n = float(np.linalg.norm(v))
        if n < 1e-9:
            continue
        for gap in (0.02, 0.01, 0.0):
            if gap < n:
                out.append((f"attach {body} to its carrier {name}: move it {(n - gap) * 1000:.1f} mm to "
                            f"{gap * 1000:.0f} mm from the grip", [_root_change(pose, root, v / n * (n - gap))]))
    return out


def floating_candidates(project: Project, scene: Scene, pose: Pose, ev: dict, frame: int = 0,
                        plan: dict | None = None, fixed: set[str] | frozenset = frozenset()) -> list[tuple[str, list[dict]]]:
    body = ev["body"]
    if scene.body(body).is_static or body in fixed or scene.group_root(body) in fixed:
        return []
    root = scene.group_root(body)
    out = attach_candidates(project, scene, pose, body, frame, plan)
    d = drop_distance(project, scene, pose, body)
    if d is not None and d > 0:
        out.append((f"drop {root} {d * 1000:.1f} mm onto its support", [_root_change(pose, root, np.array([0, 0, -d]))]))
    return out


def _effector(scene: Scene, joint: str) -> str | None:
    """The nearest named frame on the joint's child or below it."""
    below = {scene.joint(joint).child}
    grew = True
    while grew:
        grew = False
        for j in scene.joints:
            if j.parent in below and j.child not in below:
                below.add(j.child)
                grew = True
    for f in scene.frames:
        if f.body == scene.joint(joint).child:
            return f.name
    for f in scene.frames:
        if f.body in below:
            return f.name
    return None


def _chain(scene: Scene, body: str, skip: str, n: int = 4) -> list[str]:
    out = []
    j = scene.joint_of_child(body)
    while j is not None and len(out) < n:
        if j.name != skip and j.type in ("revolute", "prismatic"):
            out.append(j.name)
        j = scene.joint_of_child(j.parent)
    return out


def _num(v) -> str:
    """A joint value for a summary: a number, or a ball joint's rotation angle."""
    return f"{float(np.linalg.norm(v)):.4f} rad (ball)" if isinstance(v, list) else f"{float(v):.4f}"


def joint_candidates(scene: Scene, pose: Pose, ev: dict) -> list[tuple[str, list[dict]]]:
    from studio.timeline.motion.ik import Goal, IKError, frame_pose, solve_ik
    j = scene.joint(ev["joint"])
    if j.type == "ball":
        v = np.asarray(pose.joints[j.name], float)
        to = (v * (j.upper - INSIDE) / max(np.linalg.norm(v), 1e-12)).tolist()
    else:
        to = j.upper - INSIDE if ev.get("bound") == "upper" else j.lower + INSIDE
    old = pose.joints[j.name]
    clamp = {"kind": "joint", "name": j.name, "from": old, "to": to}
    out = []
    eff = _effector(scene, j.name)
    if eff is not None:
        chain = _chain(scene, scene.frame(eff).body, j.name)
        clamped = pose.copy()
        clamped.joints[j.name] = to
        if chain:
            try:
                target = frame_pose(scene, pose, eff)[:3, 3]
                solved, err = solve_ik(scene, clamped, chain, [Goal(eff, target)])
                changes = [clamp] + [{"kind": "joint", "name": n, "from": pose.joints[n], "to": solved.joints[n]}
                                     for n in chain if solved.joints[n] != pose.joints[n]]
                out.append((f"clamp {j.name} to its {ev.get('bound')} limit {_num(to)} and re-solve "
                             f"{', '.join(chain)} to keep {eff} in place ({err * 1000:.1f} mm off)", changes))
            except IKError:
                pass
    out.append((f"clamp {j.name} from {_num(old)} to its {ev.get('bound')} limit {_num(to)}", [clamp]))
    return out


RULES = ("NoPenetration", "Supported", "JointLimits")


def propose_offline(project: Project, state_id: str, reports: list[Report] | None = None,
                    store: bool = True, state=None) -> tuple[list[Proposal], list[str]]:
    """Verified proposals for the state's failures, and a line for each failure left without one.

    `state` (optional, a worker's) gets progress per failure and stops the search between
    candidates when cancelled: proposals saved by then stay, the rest are not tried."""
    scene = load_scene(project)
    held: State | None = get_state(project, state_id)
    if held is None:
        raise RepairError(f"{project.path}: no state {state_id!r}")
    pose = held.pose.completed(scene)
    report_progress(state, 0.0, f"checking {state_id}")
    reports = reports if reports is not None else check_pose(project, scene, pose, held.frame, state_id)
    proposals, unsolved = [], []
    fixed = state_set(project, scene, state_id)
    failing = list(distinct_failures(reports, RULES))
    for i, (r, ev, key) in enumerate(failing):
        if stop_requested(state):
            break
        report_progress(state, (i + 1) / (len(failing) + 1), f"{r.name} {' '.join(map(str, key[1:]))}")
        if r.name == "NoPenetration":
            cands = penetration_candidates(project, scene, pose, ev, fixed)
        elif r.name == "Supported":
            cands = floating_candidates(project, scene, pose, ev, held.frame, project.get_doc("plan"), fixed)
        else:
            cands = joint_candidates(scene, pose, ev)
        for summary, changes in cands:
            if stop_requested(state):
                break
            check = verify_changes(project, scene, held, key, changes, reports, fixed)
            if check["ok"]:
                p = Proposal(f"state:{state_id}", r.name, list(key), summary, changes, "offline", check)
                proposals.append(save_proposal(project, p) if store else p)
                break
        else:
            unsolved.append(f"{' '.join(map(str, key))}: no candidate repair passed verification")
    return proposals, unsolved
