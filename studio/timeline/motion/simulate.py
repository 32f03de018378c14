"""The `simulate` tool: MuJoCo rigid bodies from the state at the segment's start.

The chosen root bodies fall, slide, tumble and collide (convex hulls of their
real meshes; obstacles in convex parts, see studio.timeline.motion.simulate_mujoco) with
masses from the IR and friction and restitution from the tool's `materials`
(the IR holds no friction yet). The simulation's own last frame is returned as
`Authored.end_pose`, to be offered as the next key state, and compared with
the approved next state: the largest difference (metres, or radians of
rotation) is written in the notes, never hidden. Above `max_difference`
(default 0.05, the bake's own limit on a residual it will fade out) the tool
refuses, giving the difference and the body, because the bake pins the ends
to the approved states and would otherwise bend the physics into shape: a
person then approves the offered end state instead, or changes the start.
A simulation that blows up (a NaN) or loses a body (outside `bounds`, by
default the static scene's box grown by 2 m) is refused naming the body.
With `from` the run starts at an earlier state and this segment is its
stretch, so consecutive segments of one run join exactly.
"""
from __future__ import annotations

import numpy as np

from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import quat_conj, quat_mul

from studio.timeline.motion.simulate_mujoco import Material, Setup, SimulationError, simulate_rigid
from studio.timeline.motion import Authored, EndStateOffered, MotionError, MotionTool, Segment, end_offer, register
from studio.timeline.motion.common import need_root

MAX_DIFFERENCE = 0.05
MARGIN = 2.0              # metres the default bounds extend past the static scene
MAX_DIFFERENCE_SCHEMA = {"type": "number", "minimum": 0, "default": MAX_DIFFERENCE,
                         "description": "how far (m or rad) the run's end may lie from the approved second state; "
                                        "the bake fades out at most this much to meet it (default 0.05)"}

VEC3 = {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number"}}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["bodies"],
    "properties": {
        "bodies": {"type": "array", "minItems": 1, "items": {"type": "string"},
                   "description": "root bodies that move freely"},
        "obstacles": {"type": "array", "items": {"type": "string"},
                      "description": "bodies held fixed (default: every static body)"},
        "velocities": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": False,
            "properties": {"linear": VEC3, "angular": VEC3}}, "description": "start velocities, world frame"},
        "materials": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": False,
            "properties": {"friction": {"type": "number", "minimum": 0, "maximum": 5},
                           "restitution": {"type": "number", "minimum": 0, "maximum": 1},
                           "rolling": {"type": "number", "minimum": 0, "maximum": 0.1}}}},
        "substeps": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20},
        "bounds": {"type": "array", "minItems": 2, "maxItems": 2, "items": VEC3},
        "max_difference": MAX_DIFFERENCE_SCHEMA,
        "from": {"type": "string", "description": "an earlier state the run starts at"},
    }}


def setup_of(seg: Segment, params: dict) -> Setup:
    scene = seg.scene
    for b in params["bodies"]:
        need_root(scene, b, "simulate", "bodies names")
    for b in params.get("obstacles", []):
        if b not in scene.body_names:
            raise MotionError(f"simulate: obstacles names {b!r}, which is no body of the scene")
    mats = {}
    for name, m in params.get("materials", {}).items():
        if name not in scene.body_names:
            raise MotionError(f"simulate: materials names {name!r}, which is no body of the scene")
        mats[name] = Material(float(m.get("friction", Material.friction)), float(m.get("restitution", 0.0)),
                              float(m.get("rolling", 0.0)))
    vels = {}
    for name, v in params.get("velocities", {}).items():
        if name not in params["bodies"]:
            raise MotionError(f"simulate: velocities names {name!r}, which is not one of the simulated bodies")
        vels[name] = (np.asarray(v.get("linear", [0, 0, 0]), float), np.asarray(v.get("angular", [0, 0, 0]), float))
    if "bounds" in params:
        lo, hi = (np.asarray(v, float) for v in params["bounds"])
    else:
        lo, hi = scene_box(seg)
    return Setup(list(params["bodies"]), params.get("obstacles"), mats, vels, int(params.get("substeps", 20)),
                 (lo, hi))


def scene_box(seg: Segment) -> tuple[np.ndarray, np.ndarray]:
    """The static scene's bounding box (and the bodies' start), grown by MARGIN."""
    scene = seg.scene
    world = pose_world(scene, seg.a.pose.completed(scene))
    pts = []
    for b in scene.bodies:
        if b.is_static or b.name in scene.roots:
            bounds = body_mesh(b, seg.project_dir).bounds
            corners = np.array([[x, y, z] for x in bounds[:, 0] for y in bounds[:, 1] for z in bounds[:, 2]])
            pts.append(corners @ world[b.name][:3, :3].T + world[b.name][:3, 3])
    pts = np.concatenate(pts)
    return pts.min(axis=0) - MARGIN, pts.max(axis=0) + MARGIN


def difference_parts(a: list[float], b: list[float]) -> tuple[float, float]:
    """Position distance (m) and rotation angle (rad) between two root transforms."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    dq = quat_mul(b[3:], quat_conj(a[3:]))
    return float(np.linalg.norm(b[:3] - a[:3])), 2 * float(np.arccos(min(1.0, abs(dq[0]))))


def difference(a: list[float], b: list[float]) -> float:
    """Largest of the position distance (m) and the rotation angle (rad) between two root transforms."""
    return max(difference_parts(a, b))


def _off(parts: tuple[float, float]) -> str:
    metres, radians = parts
    return f"{metres:.4f} m and {radians:.4f} rad"


def judge_end(seg: Segment, tracks: Tracks, start, params: dict, what: str) -> tuple[Pose, str, dict]:
    """The run's end as the second state's pose, the note comparing it with the approved state, and
    the offer of that end (`end_offer`).

    A run that passes further than `max_difference` from where it should start (a run continued
    `from` an earlier state) is refused; one that ends further than it from the approved state is
    refused with the end state offered (`EndStateOffered`), naming the body furthest off and by how
    much. `max_difference` is the same limit the bake puts on the residual it fades out."""
    end = seg.b.pose.completed(seg.scene).copy()
    for b in tracks.roots:
        end.roots[b] = tracks.roots[b][-1].tolist()
    approved = seg.b.pose.completed(seg.scene)
    parts = {b: difference_parts(end.roots[b], approved.roots[b]) for b in tracks.roots}
    diffs = {b: max(v) for b, v in parts.items()}
    worst = max(diffs, key=diffs.get)
    limit = float(params.get("max_difference", MAX_DIFFERENCE))
    note = (f"{what} {seg.id}: the run ends {diffs[worst]:.4f} (m or rad) from the approved state {seg.b.id!r}, "
            f"furthest at {worst!r} ({_off(parts[worst])})")
    if len(diffs) > 1:
        note += "; " + ", ".join(f"{b} {d:.4f}" for b, d in diffs.items())
    first = seg.a.pose.completed(seg.scene)
    begin = {b: difference(tracks.roots[b][0], first.roots[b]) for b in tracks.roots}
    far = max(begin, key=begin.get)
    if start.id != seg.a.id:
        note += f"; it passes {begin[far]:.4f} from {seg.a.id!r}"
    if begin[far] > limit:
        raise MotionError(f"{note}; more than max_difference {limit}: the run from {start.id!r} does not "
                          f"pass through {seg.a.id!r} ({far!r} is {begin[far]:.4f} off); change the start")
    if diffs[worst] > limit:
        raise EndStateOffered(
            f"{note}; more than max_difference {limit}, so the bake would bend the run into shape: adopt the "
            f"run's end state as {seg.b.id!r} (tool adopt_end_state, `studio bake --adopt-end`, or Adopt end "
            f"state in the window) and review it, or change the start",
            seg.id, seg.b.id, end, parts, worst, limit)
    return end, note, end_offer(seg.id, seg.b.id, end, parts, worst, limit)


def run_start(seg: Segment, params: dict, tool: str):
    """The state a run starts at: the segment's first, or with `from` an earlier one."""
    if "from" not in params:
        return seg.a
    start = seg.states.get(params["from"])
    if start is None or start.frame > seg.a.frame:
        raise MotionError(f"{tool}: 'from' names {params['from']!r}, which is no state at or before {seg.a.id!r}")
    return start


def simulate(seg: Segment, params: dict) -> Authored:
    setup = setup_of(seg, params)
    first = run_start(seg, params, "simulate")
    start = first.pose.completed(seg.scene)
    try:
        run = simulate_rigid(seg.scene, start, setup, first.frame, seg.b.frame - first.frame + 1, seg.fps,
                             project_dir=seg.project_dir)
    except SimulationError as e:
        raise MotionError(f"{seg.id}: {e}") from None
    k = seg.a.frame - first.frame
    tracks = Tracks(seg.a.frame, {b: v[k:].copy() for b, v in run.roots.items()}, {})
    end, note, offer = judge_end(seg, tracks, first, params, "simulate")
    return Authored(tracks, notes=[note], end_pose=end, offer=offer)


register(MotionTool(
    "simulate", "MuJoCo rigid-body simulation of chosen bodies from the first state (hulls of the real "
    "meshes, IR masses, given friction and restitution); its end state is offered and compared with the second.",
    SCHEMA, simulate, offers_end=True))
