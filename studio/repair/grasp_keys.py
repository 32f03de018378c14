"""Two-hand grasp key poses: the character stood square before the held body, a hand on each of
two opposite faces, the arms held out clear of the trunk.

A body that two effectors of one character grasp is held as a person holds a box: the character
turns about the vertical so the line between its two arms' bases runs along one of the body's
horizontal axes, stands before the face across that axis (the body in front of it: where its
hands go as its elbows bend from rest; its arms' bases a range of arm's lengths off the body,
lower where legs are declared: crouching), and each effector goes to the middle of the face on
its side, just off the surface by what its own hand pokes past it. Only the arms' own joints
move (joints both chains name are the trunk's and stay). The arms are solved by IK within limits,
each first drawn through a carry posture (its middle body, the elbow, pushed out and down away
from the trunk, as two-bone IK with a pole places it) with the hand's flat side drawn to the face,
then solved exactly from there (turning the hand exactly where the arm has six joints or more),
so the solve keeps the elbows out of the torso. With legs the plan declares for the root, the
feet are planted again, turned and moved with it. Each pose must pass the one-frame checks like
any key state; the first few that do are kept, the least turn, step and arm motion first.
"""
from __future__ import annotations

import math
from weakref import WeakKeyDictionary

import numpy as np

from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose
from studio.scene.transforms import matrix_to_quat, quat_from_axis_angle, quat_mul, quat_to_matrix
from studio.store.reports import failing_required
from studio.timeline.motion.ik import Goal, IKError, frame_pose, solve_ik, two_bone

GAPS = (0.2, 0.35, 0.5, 0.65)          # arm's lengths from the arms' bases to the face before them
CLEAR = 0.3                            # share of the grasp's tolerance a hand stays off its face
DROPS = (0.0, 0.1, 0.2)                # metres a character with declared legs may crouch
WITHIN = 0.9                           # share of the grasp's tolerance the held-off effector must stay within
FIT = 0.5                              # (tol is this share of the grasp's tolerance: event_keys.FIT)
MOST = 2                               # poses kept (each passed its one-frame checks)
TRIES = 24                             # stances checked at most per key (IK that misses costs no check)

_found: WeakKeyDictionary = WeakKeyDictionary()     # per trial: the poses found for a frame's wants


def square_poses(trial, pose: Pose, ws, chains: dict[str, list[str]], root: str, legs: dict, frame: int,
                 tol: float) -> list[tuple[str, list[dict]]]:
    """For each body two of the wanted effectors grasp: stances square before it, both hands on
    opposite faces, that pass the one-frame checks at `frame` (`chains`: each effector's joints)."""
    key = (frame, tuple((w.event, w.effector, w.what) for w in ws),
           tuple((n, tuple(map(float, v))) for n, v in sorted(pose.roots.items())))
    memo = _found.setdefault(trial, {})
    if key not in memo:
        memo[key] = [got for body, pair in _pairs(ws) for got in
                     _stances(trial, pose, body, pair, _arms(chains, pair), root, legs, frame, tol)]
    return memo[key]


def _arms(chains: dict[str, list[str]], pair: tuple[str, str]) -> dict[str, list[str]]:
    """Each effector's own joints: those both chains name are the trunk's, which stays as it is."""
    a, b = (chains[e] for e in pair)
    return {pair[0]: [j for j in a if j not in b] or a, pair[1]: [j for j in b if j not in a] or b}


def _pairs(ws) -> list[tuple[str, tuple[str, str]]]:
    """The bodies grasped by exactly two effectors, with those effectors."""
    by: dict[str, list[str]] = {}
    for w in ws:
        if w.kind == "grasp" and w.effector not in by.setdefault(w.what, []):
            by[w.what].append(w.effector)
    return [(b, (e[0], e[1])) for b, e in by.items() if len(e) == 2]


def _base(scene, joints: list[str], other: list[str]) -> str:
    """The body the arm hangs from: the child of its joint nearest the root that the other arm's
    chain does not share (a waist both chains name is the trunk's, not the arm's)."""
    def depth(j: str) -> int:
        n, at = 0, scene.joint(j).parent
        while scene.joint_of_child(at) is not None:
            n, at = n + 1, scene.joint_of_child(at).parent
        return n
    own = [j for j in joints if j not in other] or joints
    return scene.joint(min(own, key=depth)).child


def _middle(scene, world, joints: list[str], base: str) -> str | None:
    """The chain's body nearest half way along it from its base to the effector (the elbow)."""
    children = [scene.joint(j).child for j in joints]
    if len(children) < 2:
        return None
    b0 = world[base][:3, 3]
    dist = {c: float(np.linalg.norm(world[c][:3, 3] - b0)) for c in children}
    far = max(dist.values())
    return min(children, key=lambda c: abs(dist[c] - far / 2)) if far > 1e-6 else None


def _front(scene, pose: Pose, root: str, chains: dict[str, list[str]], bases: dict[str, str]) -> np.ndarray | None:
    """The character's front in the world, horizontal: where its hands go when its elbows bend from
    the rest pose (each arm's middle joint to the middle of its range); None when that says nothing."""
    rest = Pose.rest(scene)
    rest.roots[root] = list(pose.roots[root])
    rest = rest.completed(scene)
    world = pose_world(scene, rest)
    total = np.zeros(3)
    for e, joints in chains.items():
        mid = _middle(scene, world, joints, bases[e])
        j = next((scene.joint(n) for n in joints if mid is not None and scene.joint(n).child == mid), None)
        if j is None or j.type != "revolute" or not np.isfinite(j.upper - j.lower) or j.upper - j.lower < 0.5:
            continue
        bent = rest.copy()
        bent.joints[j.name] = (j.lower + j.upper) / 2
        total += frame_pose(scene, bent, e)[:3, 3] - frame_pose(scene, rest, e)[:3, 3]
    total[2] = 0.0
    return total / np.linalg.norm(total) if np.linalg.norm(total) > 1e-3 else None


def _yaw(q) -> np.ndarray:
    return quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array(q))


def _turned(trial, pose: Pose, root: str, theta: float, shift: np.ndarray, legs: dict) -> tuple[Pose, dict] | None:
    """The pose with the root turned by theta about the vertical through it and moved by shift and,
    with declared legs, the feet planted again where they stood, turned and moved with the root."""
    old = np.asarray(pose.roots[root], float)
    to = [*(old[:3] + shift).tolist(), *quat_mul(_yaw(theta), old[3:]).tolist()]
    change = {"kind": "root", "name": root, "from": old.tolist(), "to": [round(float(v), 9) for v in to]}
    moved = pose.copy()
    moved.roots[root] = change["to"]
    if legs:
        from studio.timeline.motion.walk import legs_of, sole_placements
        from studio.timeline.motion.walk_feet import place_feet
        try:
            each = legs_of(trial.scene, legs, "repair")
        except ValueError:
            return None
        c, s = math.cos(theta), math.sin(theta)
        feet = {}
        for k, v in sole_placements(trial.scene, pose, each).items():
            d = v[:2] - old[:2]
            feet[k] = np.array([old[0] + c * d[0] - s * d[1] + shift[0], old[1] + s * d[0] + c * d[1] + shift[1],
                                v[2], v[3] + theta])
        moved, err = place_feet(trial.scene, moved, {leg.name: (leg.joints, leg.sole) for leg in each}, feet, 60)
        if err > 0.003:
            return None
    return moved, change


def _stances(trial, pose: Pose, body: str, pair: tuple[str, str], chains: dict[str, list[str]], root: str,
             legs: dict, frame: int, tol: float) -> list[tuple[str, list[dict]]]:
    from studio.tools.verify import check_pose
    from studio.repair.proposals import apply_changes
    scene = trial.scene
    world = pose_world(scene, pose)
    mesh = body_mesh(scene.body(body), trial.project.path).copy()
    mesh.apply_transform(world[body])
    verts = np.asarray(mesh.vertices)
    centre = (verts.min(axis=0) + verts.max(axis=0)) / 2
    bases = {e: _base(scene, chains[e], chains[o]) for e, o in (pair, pair[::-1])}
    at = {e: world[bases[e]][:3, 3] for e in pair}
    reach = {e: _length(scene, world, pose, chains[e], bases[e], e) for e in pair}
    across = at[pair[1]] - at[pair[0]]
    heading = math.atan2(across[1], across[0])
    mid = (at[pair[0]] + at[pair[1]]) / 2
    here = np.asarray(pose.roots[root][:3], float)
    rot = world[body][:3, :3]
    front = _front(scene, pose, root, chains, bases)
    stances = []
    for axis in (rot[:, 0], rot[:, 1], -rot[:, 0], -rot[:, 1]):
        a = np.array([axis[0], axis[1], 0.0])
        if np.linalg.norm(a) < 0.5:                # a body on its side: no horizontal axis here
            continue
        a /= np.linalg.norm(a)
        theta = (math.atan2(a[1], a[0]) - heading + math.pi) % (2 * math.pi) - math.pi
        half_a = float(np.max((verts - centre) @ a))
        targets = {pair[0]: centre - a * (half_a + CLEAR * tol), pair[1]: centre + a * (half_a + CLEAR * tol)}
        for side in (1.0, -1.0):
            n = side * np.cross([0.0, 0.0, 1.0], a)
            c, s = math.cos(theta), math.sin(theta)
            if front is not None and np.dot([c * front[0] - s * front[1], s * front[0] + c * front[1]], n[:2]) > 0:
                continue                           # the body would be behind it
            half_n = float(np.max((verts - centre) @ n))
            shifts = []
            for gap in GAPS:
                spot = centre + n * (half_n + gap * np.mean(list(reach.values())))
                d = here - mid
                shifts.append((gap, np.array([spot[0] + c * d[0] - s * d[1] - here[0],
                                              spot[1] + s * d[0] + c * d[1] - here[1], 0.0])))
            stances.append((_effort(trial, pose, root, theta, shifts[len(shifts) // 2][1], legs, chains, targets,
                                    bases, centre), theta, shifts, targets))
    stances.sort(key=lambda t: t[0])          # the least turn, step and arm motion first (a reach behind
    out, tried = [], 0                        # the back, or across the trunk, costs the most)
    for _, theta, shifts, targets in stances:
        for gap, shift in shifts:
            for drop in (DROPS if legs else (0.0,)):
                if len(out) >= MOST or tried >= TRIES:
                    return out
                got = _turned(trial, pose, root, theta, shift + [0.0, 0.0, -drop], legs)
                if got is None:
                    continue
                moved, change = got
                solved = _held_out(scene, trial.project, moved, chains, targets, bases, centre)
                if solved is None or solved[1] > tol or CLEAR * tol + solved[2] + solved[1] > WITHIN * tol / FIT:
                    continue                    # missed, or held off the face further than the grasp allows
                joints = [{"kind": "joint", "name": j, "from": pose.joints[j], "to": solved[0].joints[j]}
                          for j in sorted(solved[0].joints) if j in pose.joints and solved[0].joints[j] != pose.joints[j]]
                changes = [change] + joints
                tried += 1
                try:
                    fixed = apply_changes(scene, pose, changes)
                except (KeyError, ValueError):
                    continue
                if failing_required(check_pose(trial.project, scene, fixed, frame, "grasp_key")):
                    continue
                out.append((f"turn {root} {math.degrees(theta):.0f} deg and step it {np.linalg.norm(shift[:2]):.2f} m "
                            f"square before {body}" + (f" ({drop * 100:.0f} cm lower, feet planted)" if drop else "")
                            + f", {pair[0]} and {pair[1]} on its opposite faces by IK ({solved[1] * 1000:.1f} mm off)",
                            changes))
    return out


def _effort(trial, pose: Pose, root: str, theta: float, shift: np.ndarray, legs: dict, chains, targets, bases,
            centre) -> float:
    """How much a stance changes: the turn (rad), the step (m) and the arms' joint motion (rad) to hold
    the body from it (infinite where the arms cannot)."""
    got = _turned(trial, pose, root, theta, shift, {})
    solved = got and _held_out(trial.scene, trial.project, got[0], chains, targets, bases, centre)
    if not solved:
        return math.inf
    moved = [abs(float(np.linalg.norm(np.subtract(solved[0].joints[j], pose.joints[j]))))
             for e in targets for j in chains[e]]
    return abs(theta) + float(np.linalg.norm(shift[:2])) + sum(moved) + (math.inf if solved[1] > 0.05 else 0.0)


def _length(scene, world, pose: Pose, joints: list[str], base: str, effector: str) -> float:
    """The chain's length from its base through each joint's body to the effector."""
    pts = [world[base][:3, 3]] + sorted((world[scene.joint(j).child][:3, 3] for j in joints),
                                        key=lambda p: float(np.linalg.norm(p - world[base][:3, 3])))
    pts.append(frame_pose(scene, pose, effector)[:3, 3])
    return float(sum(np.linalg.norm(np.diff(np.array(pts), axis=0), axis=1)))


def _held_out(scene, project, pose: Pose, chains: dict[str, list[str]], targets: dict[str, np.ndarray],
              bases: dict[str, str], centre: np.ndarray) -> tuple[Pose, float, float] | None:
    """Both effectors on their targets, each arm first drawn through a carry posture (its elbow
    out to the side and down, away from the trunk between the two arms), then solved exactly; an
    arm with joints enough to turn its hand (six or more) also lays the hand's flat side, the one
    its effector sits on, against the face (the hand's thinnest axis pointing at `centre`)."""
    world = pose_world(scene, pose.completed(scene))
    joints = list(dict.fromkeys(j for e in targets for j in chains[e]))
    trunk = np.mean([world[bases[e]][:3, 3] for e in targets], axis=0)
    goals, poles = [Goal(e, t) for e, t in targets.items()], []
    for e, t in targets.items():
        base = world[bases[e]][:3, 3]
        mid = _middle(scene, world, chains[e], bases[e])
        if mid is None:
            continue
        l1 = float(np.linalg.norm(world[mid][:3, 3] - base))
        l2 = float(np.linalg.norm(frame_pose(scene, pose, e)[:3, 3] - world[mid][:3, 3]))
        if l1 < 1e-6 or l2 < 1e-6:
            continue
        out = base - trunk
        out = np.array([out[0], out[1], 0.0]) / max(np.linalg.norm(out[:2]), 1e-9)
        want, _, _ = two_bone(base, t, l1, l2, base + out - np.array([0.0, 0.0, 1.0]))
        poles.append(Goal(mid, want, weight=0.3))
    try:
        if poles:
            pose, _ = solve_ik(scene, pose, joints, goals + poles, 100)
        for shifted in (False, True):       # the second time off the face by what the hand pokes past it
            dof = {g.name: sum(scene.joint(j).dof for j in chains[g.name]) for g in goals}
            flat = [_flat(scene, project, pose, g, centre) if dof[g.name] >= 6 else g for g in goals]
            palms = [_palm(scene, project, pose, g, centre) for g in goals if dof[g.name] < 6]
            if palms:                      # a hand that cannot be turned exactly is drawn flat first
                pose, _ = solve_ik(scene, pose, joints, flat + palms, 100)
            got = solve_ik(scene, pose, joints, flat, 200)
            if got[1] > 1e-3 and any(g.rotation is not None for g in flat):
                got = min(got, solve_ik(scene, pose, joints, goals, 200), key=lambda r: r[1])
            pose = got[0]
            poke = {g.name: _poke(scene, project, pose, g.name, g.position, centre) for g in goals}
            if shifted or max(poke.values()) < 1e-3:
                break
            goals = [Goal(g.name, g.position - _inwards(g.position, centre) * poke[g.name]) for g in goals]
        return got[0], got[1], max(float(np.linalg.norm(g.position - targets[g.name])) for g in goals)
    except IKError:
        return None


def _inwards(at: np.ndarray, centre: np.ndarray) -> np.ndarray:
    v = np.asarray(centre, float) - at
    return v / max(np.linalg.norm(v), 1e-9)


def _poke(scene, project, pose: Pose, effector: str, target: np.ndarray, centre: np.ndarray) -> float:
    """How far the effector's own body reaches past its target towards `centre` (into the face)."""
    body = scene.frame(effector).body
    mesh = body_mesh(scene.body(body), project.path).copy()
    mesh.apply_transform(pose_world(scene, pose.completed(scene))[body])
    here = frame_pose(scene, pose, effector)[:3, 3]
    return max(0.0, float(np.max((np.asarray(mesh.vertices) - here) @ _inwards(target, centre))))


def _thin(scene, project, pose: Pose, goal: Goal, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hand's thinnest axis, in the world and in the effector frame, on the side the effector
    sits (or, with the effector half way across it, the side now nearer facing `centre`)."""
    f = scene.frame(goal.name)
    local = body_mesh(scene.body(f.body), project.path).bounds
    k = int(np.argmin(local[1] - local[0]))
    hand = pose_world(scene, pose.completed(scene))[f.body][:3, :3]
    along = f.local.as_list()[k] - (local[0][k] + local[1][k]) / 2
    sign = np.sign(along) if abs(along) > 0.25 * (local[1][k] - local[0][k]) else \
        (1.0 if np.dot(hand[:, k], _inwards(goal.position, centre)) >= 0 else -1.0)
    m = frame_pose(scene, pose, goal.name)
    return hand[:, k] * sign, m[:3, :3].T @ (hand[:, k] * sign)


def _palm(scene, project, pose: Pose, goal: Goal, centre: np.ndarray, reach: float = 0.05) -> Goal:
    """A soft goal drawing the hand's thinnest axis towards `centre`: a point that far along it from
    the effector, to the point that far in from the target."""
    _, axis = _thin(scene, project, pose, goal, centre)
    return Goal(goal.name, goal.position + _inwards(goal.position, centre) * reach, weight=0.3,
                offset=tuple(float(v) for v in axis * reach))


def _flat(scene, project, pose: Pose, goal: Goal, centre: np.ndarray) -> Goal:
    """The goal with the effector turned (the least turn) so its hand's thinnest axis, on the side
    the effector sits, points from the target at `centre`."""
    now, _ = _thin(scene, project, pose, goal, centre)
    m = frame_pose(scene, pose, goal.name)
    want = _inwards(goal.position, centre)
    axis = np.cross(now, want)
    angle = math.atan2(float(np.linalg.norm(axis)), float(np.dot(now, want)))
    turn = quat_to_matrix(quat_from_axis_angle(axis / max(np.linalg.norm(axis), 1e-12), np.array(angle))) \
        if np.linalg.norm(axis) > 1e-9 else np.eye(3)
    return Goal(goal.name, goal.position, matrix_to_quat(turn @ m[:3, :3]))
