"""Small scenes for the timeline tests: a two-link arm beside a crate on a floor."""
from __future__ import annotations

from studio.scene.io import save_scene
from studio.scene.ir import Scene
from studio.timeline.storyboard import State, get_state, put_state


def arm_scene(with_extra: bool = False) -> Scene:
    """Floor, a static base, a yaw+elbow arm (limits yaw ±2, elbow 0..2.5), a crate, two cameras.
    cam_arm frames only the arm; cam_wide also sees the crate at (2, 2)."""
    bodies = [
        {"name": "floor", "kind": "ground", "geometry": {"size": [6, 6, 0.1], "offset": {"position": [0, 0, -0.05]}}},
        {"name": "base", "kind": "static", "geometry": {"size": [0.2, 0.2, 0.3], "offset": {"position": [0, 0, 0.15]}}},
        {"name": "upper", "kind": "link", "geometry": {"size": [0.5, 0.05, 0.05], "offset": {"position": [0.25, 0, 0]}}},
        {"name": "fore", "kind": "link", "geometry": {"size": [0.4, 0.04, 0.04], "offset": {"position": [0.2, 0, 0]}}},
        {"name": "crate", "geometry": {"size": [0.2, 0.2, 0.2]}, "mass": 2.0}]
    if with_extra:
        bodies.append({"name": "lamp", "kind": "static", "geometry": {"size": [0.1, 0.1, 0.1]}})
    rest = {"floor": [0, 0, 0, 1, 0, 0, 0], "base": [0, 0, 0, 1, 0, 0, 0], "crate": [2, 2, 0.1, 1, 0, 0, 0]}
    if with_extra:
        rest["lamp"] = [0.3, 0.0, 0.05, 1, 0, 0, 0]
    return Scene.from_dict({
        "name": "arm", "bodies": bodies,
        "joints": [
            {"name": "yaw", "type": "revolute", "parent": "base", "child": "upper",
             "origin": {"position": [0, 0, 0.3]}, "axis": [0, 0, 1], "lower": -2, "upper": 2},
            {"name": "elbow", "type": "revolute", "parent": "upper", "child": "fore",
             "origin": {"position": [0.5, 0, 0]}, "axis": [0, 0, 1], "lower": 0, "upper": 2.5}],
        "frames": [{"name": "tip", "body": "fore", "local": {"position": [0.4, 0, 0]}},
                   {"name": "crate_top", "body": "crate", "local": {"position": [0, 0, 0.1]}}],
        "cameras": [{"name": "cam_arm", "position": [0.3, -2.5, 0.4], "target": [0.3, 0, 0.3], "lens_mm": 70},
                    {"name": "cam_wide", "position": [1, -6, 4], "target": [1, 1, 0], "lens_mm": 24}],
        "rest": rest})


def arm_plan() -> dict:
    return {"prompt": "the arm points at the crate and back", "scene_brief": "", "motion_brief": "",
            "shots": [{"id": "close", "camera": "cam_arm", "start": 1001, "end": 1048}],
            "states": [{"id": "rest", "frame": 1001, "shot": "close", "description": "arm straight", "objects": ["upper"]},
                       {"id": "bent", "frame": 1024, "shot": "close", "description": "elbow bent", "objects": ["fore"]},
                       {"id": "back", "frame": 1048, "shot": "close", "description": "arm back", "objects": ["upper"]}],
            "objects": [{"name": "upper", "description": "arm"}, {"name": "crate", "description": "a crate"}],
            "events": [{"id": "point", "kind": "enter_region", "subjects": ["tip"], "window": [1010, 1030],
                        "params": {"min": [0.5, 0.2, 0.2], "max": [0.8, 0.5, 0.4]}, "after": []}],
            "motion": [{"segment": "rest..bent", "tool": "interpolate", "notes": ""},
                       {"segment": "bent..back", "tool": "interpolate", "notes": ""}]}


def check_state(project, state_id: str):
    """Run the real verifiers on a state; they store its reports bound to its content hash."""
    from studio.checks.run import verify_state
    return verify_state(project, state_id)


def crate_into_base(project, state_id: str, scene: Scene):
    """Pose the crate half into the arm's base at this state and verify it: a real penetration."""
    state = get_state(project, state_id)
    state.pose.roots["crate"] = [0.15, 0.0, 0.1, 1, 0, 0, 0]
    put_state(project, scene, state)
    return check_state(project, state_id)


ARM_STATES = (("rest", 1001, 0.0), ("bent", 1024, 1.2), ("back", 1048, 0.3))   # id, frame, elbow


def arm_states(project) -> Scene:
    """The arm scene, its plan and its three states (rest, bent, back), unchecked and unreviewed."""
    from studio.scene.pose import Pose
    from studio.timeline.plan import save_plan
    scene = arm_scene()
    save_scene(project, scene)
    save_plan(project, arm_plan(), scene)
    for sid, frame, elbow in ARM_STATES:
        pose = Pose.rest(scene)
        pose.joints["elbow"] = elbow
        put_state(project, scene, State(sid, frame, pose, "close"))
    return scene


def author_arm(project, approve: bool = True) -> Scene:
    """The arm scene, its plan and three states, each passing the real checks (and approved)."""
    from studio.timeline.reviews import record_review
    scene = arm_states(project)
    for sid, _frame, _elbow in ARM_STATES:
        check_state(project, sid)
        if approve:
            record_review(project, sid, "approve", "looks right", "ana", scene)
    return scene
