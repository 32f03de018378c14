"""State and pose tools: create or change a key state, set one joint, place a
root body relative to a named frame, solve IK; each is one SetState command."""
from __future__ import annotations


import numpy as np

from studio.scene.io import load_scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import compose, from_7, to_7
from studio.timeline.commands import SetState
from studio.timeline.film import list_segments
from studio.timeline.plan import PlanError, load_plan, validate_plan
from studio.timeline.segment_commands import KeyInside
from studio.timeline.shots import shot_at
from studio.timeline.split import find_split, split_plan
from studio.timeline.storyboard import State, get_state, list_states

from studio.tools.context import ToolContext, ToolOutcome
from studio.tools.errors import ToolRefused


def set_state(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    cur = get_state(box.project, a["state"])
    if cur is None and "frame" not in a:
        raise ToolRefused(f"set_state: state {a['state']!r} is new; give its frame")
    pose = cur.pose.copy() if cur else Pose.rest(scene)
    for body, t in a.get("roots", {}).items():
        if body not in scene.roots:
            raise ToolRefused(f"set_state.roots.{body}: not a root body of the scene "
                              f"(roots: {', '.join(scene.roots)})")
        pose.roots[body] = list(t)
    for joint, v in a.get("joints", {}).items():
        box.check_joint(scene, joint, v, f"set_state.joints.{joint}")
        pose.joints[joint] = v
    pose = Pose.from_dict(pose.to_dict(), scene, where="set_state")
    st = State(a["state"], int(a.get("frame", cur.frame if cur else 0)), pose,
               a.get("shot", cur.shot if cur else ""), a.get("description", cur.description if cur else ""),
               cur.still if cur else "", cur.visible if cur else [])
    cmd = SetState(box.project, st, box.actor)
    if cur is not None and set(a) <= {"state", "roots", "joints"}:
        cmd.label = f"pose {st.id}"               # only the pose changes
    if cur is None:
        return _new_key(box, a, st, cmd)
    return box.run("set_state", a, cmd, {"state": st.id, "frame": st.frame})


def _new_key(box: ToolContext, a: dict, st: State, cmd: SetState) -> ToolOutcome:
    """A new state; inside a segment it splits it (the plan's entry and the baked tracks)."""
    states = {s.id: s for s in list_states(box.project)}
    plan = load_plan(box.project)
    split = find_split(plan, states, st.id, st.frame)
    if not st.shot and plan:
        st.shot = shot_at(plan, list(states.values()), st.frame)
    after = None
    if split is not None:
        after = split_plan(plan, split, st.shot, st.description, list(states.values()))
        try:
            validate_plan(after, load_scene(box.project))
        except PlanError as e:
            raise ToolRefused(f"set_state: {st.id} at frame {st.frame} splits {split.segment}, but the plan "
                              f"would not hold: {e}") from None
    cut = [r["segment"] for r in list_segments(box.project) if r["start"] < st.frame < r["end"]]
    if split is None and not cut:
        return box.run("set_state", a, cmd, {"state": st.id, "frame": st.frame})
    result = {"state": st.id, "frame": st.frame}
    if split is not None:
        result.update(split=split.segment, into=list(split.halves), **({"notes": split.notes} if split.notes else {}))
    if cut:
        result["cut"] = cut
    return box.run("set_state", a, KeyInside(box.project, cmd, split, after, box.actor), result)


def _pose_edit(box: ToolContext, name: str, a: dict, st: State, pose: Pose, extra: dict) -> ToolOutcome:
    new = State(st.id, st.frame, pose, st.shot, st.description, st.still, st.visible)
    cmd = SetState(box.project, new, box.actor)
    cmd.label = f"{name} {st.id}"
    return box.run(name, a, cmd, {"state": st.id, **extra})


def set_joint(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    st = box.state(a["state"])
    box.check_joint(scene, a["joint"], a["value"], "set_joint.value")
    pose = st.pose.completed(scene)
    pose.joints[a["joint"]] = a["value"]
    return _pose_edit(box, "set_joint", a, st, pose, {"joint": a["joint"], "value": a["value"]})


def place_relative(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    st = box.state(a["state"])
    if a["body"] not in scene.roots:
        raise ToolRefused(f"place_relative.body: {a['body']!r} is not a root body (roots: {', '.join(scene.roots)})")
    frame = scene.frame(a["frame"])
    if scene.group_root(frame.body) == a["body"]:
        raise ToolRefused(f"place_relative: frame {a['frame']!r} is on {a['body']!r} itself")
    pose = st.pose.completed(scene)
    world = pose_world(scene, pose)[frame.body] @ from_7(np.asarray(frame.local.as_list()))
    rot = np.asarray(a.get("rotation", [1, 0, 0, 0]), float)
    if abs(np.linalg.norm(rot) - 1) > 1e-3:
        raise ToolRefused(f"place_relative.rotation: expected a unit quaternion, length {np.linalg.norm(rot):.4f}")
    local = compose(np.asarray(a.get("offset", [0, 0, 0]), float)[None], (rot / np.linalg.norm(rot))[None])[0]
    placed = to_7(world @ local)
    pose.roots[a["body"]] = [float(v) for v in placed]
    return _pose_edit(box, "place_relative", a, st, pose, {"body": a["body"], "at": pose.roots[a["body"]]})


def solve_ik(box: ToolContext, a: dict) -> ToolOutcome:
    from studio.timeline.motion.ik import Goal, IKError, frame_pose, solve_ik as solve
    scene = load_scene(box.project)
    st = box.state(a["state"])
    if ("target_frame" in a) == ("target_position" in a):
        raise ToolRefused("solve_ik: give exactly one of target_frame or target_position")
    pose = st.pose.completed(scene)
    try:
        target = (frame_pose(scene, pose, a["target_frame"])[:3, 3] if "target_frame" in a
                  else np.asarray(a["target_position"], float))
        for j in a["joints"]:
            scene.joint(j)
        solved, err = solve(scene, pose, a["joints"], [Goal(a["effector"], target)])
    except IKError as e:
        raise ToolRefused(f"solve_ik: {e}") from None
    if err > 0.01:
        raise ToolRefused(f"solve_ik: the effector {a['effector']!r} cannot reach the target "
                          f"(closest {err * 1000:.1f} mm away within the joint limits); the state is unchanged")
    return _pose_edit(box, "solve_ik", a, st, solved, {"error_m": round(err, 6),
                                                       "joints": {j: solved.joints[j] for j in a["joints"]
                                                                  if j in solved.joints}})


TOOLS = {"set_state": set_state, "set_joint": set_joint, "place_relative": place_relative, "solve_ik": solve_ik}
