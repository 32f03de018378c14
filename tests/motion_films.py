"""Films with one known fault each, built through the tool layer (the real gate,
signed reviews), so the truth is known by construction:
- jamb: a box carried straight through a doorway on a line that clips a jamb;
- floating: a hand lets a box go above a table and the box sinks onto it
  slowly, floating after the release;
- grasp: an arm's grasp event whose window the arm never comes near;
- limit: an imported take of the arm whose elbow passes its limit mid-way.
"""
from __future__ import annotations

import numpy as np

from studio.tools.box import ToolBox
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.bake import bounds_hash
from studio.timeline.film import save_segment
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.storyboard import get_state

REVIEWER = "Ada"
A, B = 1001, 1025


def plan(states: list[tuple[str, int]], objects: list[str], events: list[dict], motion: list[dict]) -> dict:
    return {"prompt": "a test film", "scene_brief": "", "motion_brief": "",
            "shots": [{"id": "wide", "camera": "cam", "start": A, "end": B}],
            "states": [{"id": s, "frame": f, "shot": "wide", "description": s, "objects": objects}
                       for s, f in states],
            "objects": [{"name": o, "description": o} for o in objects], "events": events, "motion": motion}


def _body(box: ToolBox, name: str, size, rest, kind="rigid", **extra) -> None:
    box.call("create_body", {"name": name, "kind": kind, "size": list(size), "rest": list(rest), **extra})


def _key(box: ToolBox, sid: str, frame: int, roots: dict | None = None, joints: dict | None = None) -> None:
    box.call("set_state", {"state": sid, "frame": frame, "shot": "wide", "description": sid,
                           "roots": roots or {}, "joints": joints or {}})
    box.call("run_verifiers", {"state": sid})
    box.call("review_state", {"state": sid, "verdict": "approve", "note": "as planned"})


def _camera(box: ToolBox) -> None:
    box.call("add_camera", {"name": "cam", "position": [4, -4, 2.5], "target": [0, 0, 0.6],
                            "resolution": [160, 96]})


def fly_crate(box: ToolBox, prompt: str, start: list, end: list, first: int, last: int) -> None:
    """The film's plan, its two approved key states (the crate at `start` on `first`, at `end` on
    `last`) and the segment between them interpolated and baked: a crate flown straight."""
    box.call("set_plan", {"plan": {
        "prompt": prompt, "scene_brief": "", "motion_brief": "",
        "shots": [{"id": "wide", "camera": "cam", "start": first, "end": last}],
        "states": [{"id": s, "frame": f, "shot": "wide", "description": s, "objects": ["crate"]}
                   for s, f in (("out", first), ("in", last))],
        "objects": [{"name": "crate", "description": "a crate"}], "events": [],
        "motion": [{"segment": "out..in", "tool": "interpolate", "params": {}}]}})
    _key(box, "out", first, {"crate": start})
    _key(box, "in", last, {"crate": end})
    box.call("author_segment", {"segment": "out..in"})


def _doorway(box: ToolBox) -> None:
    """A floor and a doorway of two jambs with a 0.6 m opening along y (its edges at y=±0.3)."""
    _body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "jamb_l", [0.1, 1.2, 2.0], [0, 0.9, 1.0, 1, 0, 0, 0], kind="static")
    _body(box, "jamb_r", [0.1, 1.2, 2.0], [0, -0.9, 1.0, 1, 0, 0, 0], kind="static")


def jamb_film(path, name: str = "jamb", motion: dict | None = None) -> Project:
    """A box flies at 1 m from x=-1 to x=1 along y=0.25; the doorway's opening ends at y=0.3."""
    project = Project.create(path, name=name, fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _doorway(box)
    _body(box, "crate", [0.2, 0.2, 0.2], [-1, 0.25, 1.0, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    box.call("set_plan", {"plan": plan([("out", A), ("in", B)], ["crate"], [],
                                       [motion or {"segment": "out..in", "tool": "interpolate", "params": {}}])})
    _key(box, "out", A, {"crate": [-1, 0.25, 1.0, 1, 0, 0, 0]})
    _key(box, "in", B, {"crate": [1, 0.25, 1.0, 1, 0, 0, 0]})
    box.call("author_segment", {"segment": "out..in"})
    return project


def floating_film(path) -> Project:
    """A hand holds a box 20 cm above a table, lets go by frame 1006, and the box sinks to the
    table over the whole segment, so it floats from 1007 until it lands."""
    project = Project.create(path, name="floating", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "table", [1.0, 1.0, 0.5], [0, 0, 0.25, 1, 0, 0, 0], kind="static")
    _body(box, "parcel", [0.2, 0.2, 0.2], [0, 0, 0.6, 1, 0, 0, 0])
    _body(box, "hand", [0.1, 0.1, 0.1], [0, 0, 0.95, 1, 0, 0, 0], flags=["self_propelled"])
    box.call("add_frame", {"name": "palm", "body": "hand", "position": [0, 0, -0.05]})
    _camera(box)
    events = [{"id": "take", "kind": "grasp", "subjects": ["palm", "parcel"], "window": [A, A + 2]},
              {"id": "let_go", "kind": "release", "subjects": ["palm", "parcel"], "window": [A + 2, A + 5]}]
    box.call("set_plan", {"plan": plan([("held", A), ("landed", B)], ["parcel", "hand"], events,
                                       [{"segment": "held..landed", "tool": "interpolate", "params": {}}])})
    _key(box, "held", A, {"parcel": [0, 0, 0.8, 1, 0, 0, 0], "hand": [0, 0, 0.95, 1, 0, 0, 0]})
    _key(box, "landed", B, {"parcel": [0, 0, 0.6, 1, 0, 0, 0], "hand": [0, 0, 1.35, 1, 0, 0, 0]})
    box.call("author_segment", {"segment": "held..landed"})
    return project


def _arm(box: ToolBox) -> None:
    _body(box, "floor", [6, 6, 0.1], [0, 0, 0, 1, 0, 0, 0], kind="ground", offset=[0, 0, -0.05])
    _body(box, "base", [0.3, 0.3, 0.4], [-1.5, 0, 0.2, 1, 0, 0, 0], group="robot")
    _body(box, "upper", [0.4, 0.08, 0.08], [0, 0, 0, 1, 0, 0, 0], kind="link", group="robot", offset=[0.2, 0, 0],
          parent="base", joint={"name": "shoulder", "type": "revolute", "axis": [0, 1, 0], "origin": [0, 0, 0.3],
                                "lower": -1.5, "upper": 1.5})
    _body(box, "fore", [0.4, 0.06, 0.06], [0, 0, 0, 1, 0, 0, 0], kind="link", group="robot", offset=[0.2, 0, 0],
          parent="upper", joint={"name": "elbow", "type": "revolute", "axis": [0, 1, 0], "origin": [0.4, 0, 0],
                                 "lower": 0.0, "upper": 2.4})
    box.call("add_frame", {"name": "gripper", "body": "fore", "position": [0.42, 0, 0]})
    _body(box, "plate", [0.3, 0.3, 0.02], [-0.85, 0, 0.01, 1, 0, 0, 0])
    _camera(box)


def grasp_film(path) -> Project:
    """The arm waves from one raised pose to another; the plan wants it to grasp the plate meanwhile."""
    project = Project.create(path, name="grasp", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _arm(box)
    events = [{"id": "pick", "kind": "grasp", "subjects": ["gripper", "plate"], "window": [1009, 1017]}]
    box.call("set_plan", {"plan": plan([("up", A), ("over", B)], ["base", "plate"], events,
                                       [{"segment": "up..over", "tool": "interpolate", "params": {}}])})
    _key(box, "up", A, joints={"shoulder": -1.2, "elbow": 0.6})
    _key(box, "over", B, joints={"shoulder": -0.9, "elbow": 0.3})
    box.call("author_segment", {"segment": "up..over"})
    return project


def limit_film(path) -> Project:
    """Two approved arm poses and an imported take between them whose elbow overshoots to 2.7 rad."""
    project = Project.create(path, name="limit", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _arm(box)
    box.call("set_plan", {"plan": plan([("bent", A), ("bent_again", B)], ["base"], [], [])})
    _key(box, "bent", A, joints={"shoulder": -0.6, "elbow": 1.9})
    _key(box, "bent_again", B, joints={"shoulder": -0.8, "elbow": 2.0})
    scene = load_scene(project)
    a, b = get_state(project, "bent"), get_state(project, "bent_again")
    take = interpolate_poses(scene, [(A, a.pose.completed(scene)), (B, b.pose.completed(scene))])
    bump = np.sin(np.linspace(0, np.pi, take.n_frames)) * 0.75
    take.joints["elbow"] = take.joints["elbow"] + bump
    save_segment(project, "bent..bent_again", take, "imported take", bounds_hash(project, "bent..bent_again", scene),
                 actor=REVIEWER)
    return project


def doorway_source(path) -> Project:
    """A crate flown through a doorway by three approved key states (out, in the opening, in),
    from which the single-pass baseline flies it straight through the wall."""
    project = Project.create(path, name="passage", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _doorway(box)
    _body(box, "crate", [0.2, 0.2, 0.2], [-1, 0.7, 1.0, 1, 0, 0, 0], flags=["self_propelled"])
    _camera(box)
    box.call("set_plan", {"plan": plan([("out", A), ("door", 1013), ("in", B)], ["crate"], [],
                                       [{"segment": "out..door", "tool": "interpolate", "params": {}},
                                        {"segment": "door..in", "tool": "interpolate", "params": {}}])})
    _key(box, "out", A, {"crate": [-1, 0.7, 1.0, 1, 0, 0, 0]})
    _key(box, "door", 1013, {"crate": [0, 0, 1.0, 1, 0, 0, 0]})
    _key(box, "in", B, {"crate": [1, 0.7, 1.0, 1, 0, 0, 0]})
    box.call("author_segment", {"segment": "out..door"})
    box.call("author_segment", {"segment": "door..in"})
    return project


def register_glide() -> None:
    """A path tool registered by the test, as any tool module would: a root glides in the plane
    through `waypoints` (its schema's via-points) from the first state to the second."""
    from studio.scene.pose import Tracks
    from studio.timeline.motion import MOTION_TOOLS, Authored, MotionTool, register

    def glide(seg, params: dict) -> Authored:
        body = params["body"]
        a, b = np.asarray(seg.a.pose.roots[body], float), np.asarray(seg.b.pose.roots[body], float)
        pts = np.array([a[:2], *[np.asarray(p, float) for p in params.get("waypoints", [])], b[:2]])
        lengths = np.r_[0, np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))]
        s = np.linspace(0, lengths[-1], seg.frames)
        xy = np.c_[np.interp(s, lengths, pts[:, 0]), np.interp(s, lengths, pts[:, 1])]
        z = np.linspace(a[2], b[2], seg.frames)
        roots = np.c_[xy, z, np.tile(a[3:], (seg.frames, 1))]
        return Authored(Tracks(seg.a.frame, {body: roots}, {}))

    if "glide" not in MOTION_TOOLS:
        register(MotionTool("glide", "A root glides in the plane through via-points.", {
            "type": "object", "additionalProperties": False, "required": ["body"],
            "properties": {"body": {"type": "string"},
                           "waypoints": {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 2,
                                                                   "items": {"type": "number"}}}}}, glide))


def glide_film(path) -> Project:
    """The jamb film with its crate on the glide tool and no via-point: its path clips the jamb."""
    register_glide()
    return jamb_film(path, "glide", {"segment": "out..in", "tool": "glide", "params": {"body": "crate"}})


def step_film(path, height: float = 0.04) -> Project:
    """The robot walks 1.2 m along +x with 30 cm steps across a staggered step: a block `height` high
    and 4 cm deep in each foot's track, where that foot swings (x 0.5 on the right, 0.65 on the left).
    The walk tool lets it cross them (lower than its 5 cm step height plus a centimetre), and each
    foot's swing sweeps through its block's top."""
    from motion_scenes import ROBOT_LEGS, robot_scene, robot_standing

    from studio.scene.io import save_scene
    from studio.scene.ir import Scene
    project = Project.create(path, name="step", fps=24, frame_start=A)
    d = robot_scene().to_dict()
    for name, x, y in (("step_r", 0.5, -0.09), ("step_l", 0.65, 0.09)):
        d["bodies"].append({"name": name, "kind": "static", "flags": ["static"], "mass": 0,
                            "geometry": {"size": [0.04, 0.12, height], "offset": {"position": [0, 0, height / 2]}}})
        d["rest"][name] = [x, y, 0, 1, 0, 0, 0]
    d["cameras"] = [{"name": "cam", "position": [4, -4, 2.5], "target": [0.6, 0, 0.4], "resolution": [160, 96]}]
    scene = Scene.from_dict(d)
    save_scene(project, scene)
    box = ToolBox(project, actor=REVIEWER)
    end = 1001 + 95
    walk = {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.3}
    p = plan([("here", A), ("there", end)], ["pelvis"], [], [{"segment": "here..there", "tool": "walk",
                                                              "params": walk}])
    p["shots"][0]["end"] = end
    box.call("set_plan", {"plan": p})
    for sid, frame, x in (("here", A, 0.0), ("there", end, 1.2)):
        pose = robot_standing(scene, x)
        box.call("set_state", {"state": sid, "frame": frame, "shot": "wide", "description": sid,
                               "roots": {"pelvis": list(pose.roots["pelvis"])}, "joints": dict(pose.joints)})
        box.call("run_verifiers", {"state": sid})
        box.call("review_state", {"state": sid, "verdict": "approve", "note": "as planned"})
    box.call("author_segment", {"segment": "here..there"})
    return project


def cabinet_film(path) -> Project:
    """The arm swings from raised to reaching under a cabinet's shelf; straight in joint space its
    forearm sweeps through the shelf mid-way. The cabinet is plain rigid bodies (not marked static),
    still in every key state: the set a repair must leave alone."""
    project = Project.create(path, name="cabinet", fps=24, frame_start=A)
    box = ToolBox(project, actor=REVIEWER)
    _arm(box)
    _body(box, "cab_side", [0.02, 0.6, 0.6], [-0.51, 0, 0.3, 1, 0, 0, 0], group="cabinet")
    _body(box, "cab_shelf", [0.45, 0.6, 0.02], [-0.725, 0, 0.61, 1, 0, 0, 0], group="cabinet")
    box.call("set_plan", {"plan": plan([("raised", A), ("under", B)], ["base", "cabinet"], [],
                                       [{"segment": "raised..under", "tool": "interpolate", "params": {}}])})
    _key(box, "raised", A, joints={"shoulder": -1.2, "elbow": 0.0})
    _key(box, "under", B, joints={"shoulder": 0.3, "elbow": 0.0})
    box.call("author_segment", {"segment": "raised..under"})
    return project
