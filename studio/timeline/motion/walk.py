"""The `walk` tool: footsteps and a balanced walk along waypoints, for any legged body.

Legs are declared in the tool's parameters, not in the scene: a root body and,
per leg, its joint chain (hip to ankle), its sole frame and its gait phase.
Legs with the same phase swing together and the phases swing in turn, so a
biped is two legs at phases 0 and 0.5, and a quadruped walking in diagonal
pairs is front-left with hind-right at 0 and the other pair at 0.5. The group
that leads in the direction of travel steps first.

The root goes from the first state's place along the waypoints to the second
state's place (its yaw from one state's to the other's, or with facing "path"
turning along the path, corners rounded over TURN metres); each sole keeps its
place relative to the root, changing from the first state's to the second's
along the way, so the walk ends in the second state's stance. A step moves a
foot no farther than `step_length`; the groups stagger by a fraction of a
step and square up at the end. Every step is one quasi-static cycle: with all
feet down the root shifts (`shift`, a share of the step) so the centre of
mass is over the feet that will stay planted — forwards fully, sideways by
`sway`, since a character without ankle roll cannot lean over one foot and
keep it flat — then the group lifts, swings along an arc of `step_height` and
lands. The root glides through these keys without stopping at each (a
monotone cubic, at rest only where the walk starts and ends), and `overlap`
lets each shift run on into the first half of the swing (smoother, a little
less balanced); balance "between" keeps the hips amid the feet instead (a
sidestep of such a character, at a cost in balance that `com_tolerance` must
then allow), and with `sway` moves them sideways over the standing feet from
each lift-off to its landing (the legs tilt, so without ankle roll the feet
roll a little and rest on their lower edge, never in the floor); `settle` keeps a share of the segment after the last step for
the height and tilt to change (a squat at the end), and `lead` a share before
the first step (a carried body lifted clear before the feet move). Feet are kept flat by IK
goals a toe length ahead of the sole and beside it, at the sole's height.

What the tool checks and refuses (never clamps): a path that passes through a
static body (any body of the scene that is not ground and rises above the
step height, hit by the path at the feet, the knees or the root) names the
body and the waypoint; a planted sole that slides (along the floor) more than `max_slide`
(default 5 mm) in the solved motion names the leg and frame; a centre of mass
farther than `com_tolerance` (default 5 cm, COM_TOLERANCE) outside the support
polygon (the convex hull of the planted feet's lowest surface) names the frame.
The worst slide and balance figures are reported in the notes. Only the root
and the leg joints are tracked; the bake in-betweens the rest of the body.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import quat_mul, slerp

from studio.timeline.motion.footsteps import support_polygon
from studio.timeline.motion.ik import Goal, solve_ik
from studio.timeline.motion.walk_feet import TOE, place_feet
from studio.timeline.motion import Authored, MotionError, MotionTool, Segment, register
from studio.timeline.motion.common import (chain_joints, frame_local, need_root, smooth, tilt_of, wrap, world_of, yaw_of,
                                           yaw_quat)

COM_TOLERANCE = 0.05     # metres the centre of mass may be outside the support polygon
MAX_SLIDE = 0.005        # metres a planted sole may move
SHIFT = 1 / 3            # share of each step spent shifting the weight (the rest swings the foot)
MIN_SWING = 3            # frames a swing needs at least
TURN = 0.4               # metres of path over which a walk facing its path turns at a corner
LIFT = 0.05              # share of a swing spent rising before the foot moves across (and settling after):
                         # the foot is clear of the floor by then, and the shorter the rise, the gentler the swing

LEG_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["joints", "sole"],
    "properties": {
        "joints": {"type": "array", "minItems": 1, "items": {"type": "string"},
                   "description": "the leg's joints from the hip down"},
        "sole": {"type": "string", "description": "named frame on the sole, on the floor when planted"},
        "phase": {"type": "number", "minimum": 0, "maximum": 1,
                  "description": "legs with the same phase swing together"},
        "foot": {"type": "string", "enum": ["flat", "point"],
                 "description": "flat (default): the sole is kept level; point: a round foot (a quadruped's "
                                "ball), only its centre placed, the sole frame at that centre"},
    }}

WALK_PROPERTIES = {
    "root": {"type": "string", "description": "the character's root body"},
    "legs": {"type": "array", "minItems": 2, "items": LEG_SCHEMA},
    "waypoints": {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 2,
                                             "items": {"type": "number"}},
                  "description": "root positions (x, y) to pass between the two states"},
    "step_length": {"type": "number", "exclusiveMinimum": 0, "maximum": 3},
    "step_height": {"type": "number", "minimum": 0, "maximum": 1},
    "facing": {"type": "string", "enum": ["states", "path"],
               "description": "yaw eased from state to state, or turning along the path"},
    "sway": {"type": "number", "minimum": 0, "maximum": 1,
             "description": "share of the way sideways the hips go over the standing feet (static: before "
                            "each step; between: while a foot swings)"},
    "balance": {"type": "string", "enum": ["static", "between"],
                "description": "static: the weight over the standing feet before each step; between: the hips "
                               "move amid the feet while a foot swings, sideways over the standing feet by "
                               "`sway` (a character that cannot lean)"},
    "shift": {"type": "number", "minimum": 0.05, "maximum": 0.8,
              "description": "share of each step spent shifting the weight over the standing feet"},
    "lead": {"type": "number", "minimum": 0, "maximum": 0.8,
             "description": "share of the segment before the first step, in which the feet stay and the rest "
                            "of the body (or what it carries) moves first"},
    "settle": {"type": "number", "minimum": 0, "maximum": 0.8,
               "description": "share of the segment after the last step, in which the height and tilt change"},
    "overlap": {"type": "number", "minimum": 0, "maximum": 1,
                "description": "share of the swing's first half the weight shift may go on into "
                               "(smoother, less balanced)"},
    "max_slide": {"type": "number", "exclusiveMinimum": 0},
    "com_tolerance": {"type": "number", "minimum": 0},
}

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["root", "legs"],
          "properties": WALK_PROPERTIES}


@dataclass
class Leg:
    name: str
    joints: list[str]
    sole: str
    phase: float
    point: bool = False             # a round foot: placed by its centre, never levelled


@dataclass
class Walked:
    """A walk's result: per-frame poses, and what it measured."""
    poses: list[Pose]
    roots: list[str]
    joints: list[str]
    planted: dict[str, np.ndarray]           # leg -> (F,) planted
    slide: float
    com_outside: float
    steps: int
    notes: list[str] = field(default_factory=list)


def legs_of(scene: Scene, params: dict, tool: str = "walk") -> list[Leg]:
    need_root(scene, params["root"], tool, "root")
    legs = []
    for i, d in enumerate(params["legs"]):
        moving = chain_joints(scene, d["joints"], tool, f"legs[{i}]")      # a fixed ankle has no value
        if not moving:
            raise MotionError(f"{tool}: legs[{i}].joints: every joint of the leg is fixed; name joints that move")
        frame_local(scene, d["sole"], tool)
        legs.append(Leg(d["sole"], moving, d["sole"], float(d.get("phase", 0.5 * (i % 2))),
                        d.get("foot") == "point"))
    return legs


def sole_placements(scene: Scene, pose: Pose, legs: list[Leg]) -> dict[str, np.ndarray]:
    """Per leg, (x, y, z, yaw) of its sole frame in the world."""
    world = pose_world(scene, pose)
    out = {}
    for leg in legs:
        body, local = frame_local(scene, leg.sole, "walk")
        m = world[body] @ local
        out[leg.name] = np.array([m[0, 3], m[1, 3], m[2, 3], math.atan2(m[1, 0], m[0, 0])])
    return out


class _Path:
    """The root's way in the plane: a polyline, arc-length parametrised, with a yaw along it."""

    def __init__(self, points: np.ndarray, yaw_a: float, yaw_b: float, facing: str):
        self.points = np.asarray(points, float)
        seg = np.linalg.norm(np.diff(self.points, axis=0), axis=1)
        self.cum = np.concatenate([[0.0], np.cumsum(seg)])
        self.length = float(self.cum[-1])
        self.yaw_a, self.yaw_b, self.facing = yaw_a, yaw_a + wrap(yaw_b - yaw_a), facing

    def xy(self, p: float) -> np.ndarray:
        if self.length < 1e-9:
            return self.points[0].copy()
        s = p * self.length            # beyond either end: along the first or last leg, extended
        i = min(max(int(np.searchsorted(self.cum, s, side="right")) - 1, 0), len(self.points) - 2)
        t = (s - self.cum[i]) / max(self.cum[i + 1] - self.cum[i], 1e-12)
        return self.points[i] + t * (self.points[i + 1] - self.points[i])

    def yaw(self, p: float) -> float:
        p = float(np.clip(p, 0, 1))
        plain = self.yaw_a + p * (self.yaw_b - self.yaw_a)
        if self.facing != "path" or self.length < 1e-9:
            return plain
        delta = min(TURN, self.length / 4) / self.length       # the heading over a stretch: corners rounded
        d = self.xy(min(p + delta, 1.0)) - self.xy(max(p - delta, 0.0))
        heading = self.yaw_a + wrap(math.atan2(d[1], d[0]) - self.yaw_a)
        turn_in, turn_out = float(smooth(p / 0.2)), float(smooth((1 - p) / 0.2))
        along = self.yaw_a + turn_in * (heading - self.yaw_a)
        return self.yaw_b + turn_out * (along - self.yaw_b)


def _rot(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s], [s, c]])


def blocking(scene: Scene, pose: Pose, path: _Path, lateral: list[float], heights: list[float],
             project_dir: Path | None, waypoint_names: list[str]) -> None:
    """Refuse a path that runs through a static body (above the step height), naming both."""
    world = pose_world(scene, pose)
    static = [b for b in scene.bodies if b.is_static and b.kind != "ground"]
    if not static or len(path.points) < 2:
        return
    for b in static:
        mesh = body_mesh(b, project_dir).copy()
        mesh.apply_transform(world[b.name])
        for i in range(len(path.points) - 1):
            p0, p1 = path.points[i], path.points[i + 1]
            d = p1 - p0
            length = float(np.linalg.norm(d))
            u = d / length
            n = np.array([-u[1], u[0]])
            origins, dirs = [], []
            for off in lateral:
                for h in heights:
                    origins.append([*(p0 + off * n), h])
                    dirs.append([*u, 0.0])
            hits, rays, _ = mesh.ray.intersects_location(np.array(origins), np.array(dirs), multiple_hits=False)
            for loc, r in zip(hits, rays):
                if np.linalg.norm(loc[:2] - np.array(origins[r])[:2]) <= length + 1e-9:
                    raise MotionError(f"walk: the path from {waypoint_names[i]} to {waypoint_names[i + 1]} "
                                      f"runs through {b.name!r} (at x {loc[0]:.2f}, y {loc[1]:.2f}, "
                                      f"z {loc[2]:.2f}); go around it with waypoints")


def _outside(points: np.ndarray, p: np.ndarray) -> float:
    """How far p lies outside the convex hull of 2D points (0 inside)."""
    pts = np.unique(np.round(points, 9), axis=0)
    if len(pts) == 1:
        return float(np.linalg.norm(p - pts[0]))
    hull = support_polygon(pts) if len(pts) >= 3 else pts
    if len(hull) < 3:
        a, b = hull[0], hull[-1]
        t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-12), 0, 1)
        return float(np.linalg.norm(p - (a + t * (b - a))))
    e = np.roll(hull, -1, axis=0) - hull
    nrm = np.stack([e[:, 1], -e[:, 0]], 1) / np.linalg.norm(e, axis=1, keepdims=True)
    if np.all(np.einsum("ij,ij->i", p - hull, nrm) <= 1e-12):
        return 0.0
    t = np.clip(np.einsum("ij,ij->i", p - hull, e) / np.einsum("ij,ij->i", e, e), 0, 1)
    return float(np.min(np.linalg.norm(p - (hull + t[:, None] * e), axis=1)))


def _mass_points(scene: Scene, root: str, project_dir: Path | None,
                 carried: tuple[str, ...] = ()) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The character's bodies (and what it carries), masses and centres of mass in their own frames
    (a body's declared centre of mass, a robot link's inertial one, else its mesh's centroid)."""
    names = [b.name for b in scene.bodies if scene.group_root(b.name) == root or b.name in carried]
    masses, cents = [], []
    for n in names:
        b = scene.body(n)
        masses.append(b.mass)
        if b.com is not None:
            cents.append(np.asarray(b.com, float))
            continue
        try:
            cents.append(np.asarray(body_mesh(b, project_dir).centroid, float))
        except Exception:                 # a body without geometry weighs at its origin
            cents.append(np.zeros(3))
    return names, np.array(masses), np.array(cents)


def _sole_points(scene: Scene, leg: Leg, project_dir: Path | None) -> tuple[str, np.ndarray]:
    """The foot body and the points of its mesh's underside (within 1 cm of the sole frame's level)."""
    body, local = frame_local(scene, leg.sole, "walk")
    v = np.asarray(body_mesh(scene.body(body), project_dir).convex_hull.vertices, float)
    z_sole = local[2, 3]
    low = v[v[:, 2] <= z_sole + 0.01] if (v[:, 2] <= z_sole + 0.01).any() else v[v[:, 2] <= v[:, 2].min() + 0.01]
    if len(low) >= 3:                 # only the outline matters (a flat foot's underside, seen from below)
        ring = support_polygon(low[:, :2])
        keep = [int(np.argmin(np.linalg.norm(low[:, :2] - q, axis=1))) for q in ring]
        low = low[sorted(set(keep))]
    return body, low


def smoother(t) -> np.ndarray:
    """Quintic ease: no jump in speed or acceleration where a move starts and stops."""
    t = np.clip(np.asarray(t, float), 0.0, 1.0)
    return t * t * t * (t * (6 * t - 15) + 10)


def glide(times: list[float], values: list[float], t: np.ndarray) -> np.ndarray:
    """Through (time, value) keys without stopping at each (monotone cubic, so never past a key
    between two it lies between), at rest at the first and last: a body that moves on, not in jerks."""
    x, y = np.asarray(times, float), np.asarray(values, float)
    if len(x) < 2:
        return np.full(len(t), y[0] if len(y) else 0.0)
    from scipy.interpolate import CubicHermiteSpline, PchipInterpolator     # on first use: listing tools stays light
    slopes = PchipInterpolator(x, y).derivative()(x)
    slopes[0] = slopes[-1] = 0.0
    return CubicHermiteSpline(x, y, slopes)(np.clip(t, x[0], x[-1]))


SIDE, ROLL_WEIGHT = 0.04, 0.3     # a point beside the sole, held at its height: keeps the foot from rolling


def place_flat(scene: Scene, pose: Pose, legs: dict[str, tuple[list[str], str]], feet: dict[str, np.ndarray],
               iterations: int, points: frozenset[str] = frozenset()) -> tuple[Pose, float]:
    """Each sole to (x, y, z, yaw), level: its toe and its side held at its height (a leg that cannot
    both reach and stay level trades a little of the level); a leg in `points` (a round foot) only
    places its sole. Returns the worst position error."""
    worst = 0.0
    for name, (joints, sole) in legs.items():
        x, y, z, yaw = feet[name]
        c, s_ = math.cos(yaw), math.sin(yaw)
        at = np.array([x, y, z])
        goals = [Goal(sole, at)] if name in points else [
            Goal(sole, at), Goal(sole, at + TOE * np.array([c, s_, 0.0]), weight=0.5, offset=(TOE, 0.0, 0.0)),
            Goal(sole, at + SIDE * np.array([-s_, c, 0.0]), weight=ROLL_WEIGHT, offset=(0.0, SIDE, 0.0))]
        pose, _ = place_feet(scene, pose, {name: (joints, sole)}, {name: feet[name]}, 1)  # off a straight knee
        pose, err = solve_ik(scene, pose, joints, goals, iterations)
        worst = max(worst, err)
    return pose, worst


def _foot_hull(scene: Scene, leg: Leg, project_dir: Path | None) -> tuple[str, np.ndarray]:
    """The foot body and its mesh's convex hull vertices (in its own frame)."""
    body, _ = frame_local(scene, leg.sole, "walk")
    return body, np.asarray(body_mesh(scene.body(body), project_dir).convex_hull.vertices, float)


def edges_below(scene: Scene, pose: Pose, legs: list[Leg], hulls: dict, feet: dict[str, np.ndarray]) -> dict[str, float]:
    """Per leg whose foot is rolled (a leg without ankle roll, its hips to one side), how far the
    roll sinks the underside's lowest edge below the height the sole was placed at (over half a millimetre)."""
    world = pose_world(scene, pose)
    out = {}
    for leg in legs:
        if leg.point:                       # a round foot rolls on its centre: nothing sinks
            continue
        body, v = hulls[leg.name]
        low = float(np.min((v @ world[body][:3, :3].T)[:, 2]) + world[body][2, 3])
        rolled = float(np.max(np.abs(v[:, 1]))) * abs(float(world[body][2, 1]))   # what the roll alone sinks
        below = min(float(feet[leg.name][2]) - low, rolled)
        if below > 5e-4:
            out[leg.name] = below
    return out


def landings(groups: int, cycles: int) -> list[tuple[int, float]]:
    """(group, progress it lands at) for every swing: the groups stagger by 1/groups of a cycle,
    and all but the last square up at the end."""
    out = [(g, (c + (g + 1) / groups) / cycles) for c in range(cycles) for g in range(groups)]
    return out + [(g, 1.0) for g in range(groups - 1)]


LIMIT_ROOM = 0.01        # radians (or metres) the walk's IK keeps inside a leg joint's limits


def inside_limits(scene: Scene, joints: list[str]) -> Scene:
    """The scene with these joints' limits narrowed by LIMIT_ROOM (at most a tenth of the range): a
    foot placed against a limit leaves the bake's fade of the end residuals room, so the baked film
    stays inside the real limits (the bake never clamps)."""
    import copy
    room = copy.copy(scene)
    room.joints = list(scene.joints)
    names = set(joints)
    for i, j in enumerate(room.joints):
        if j.name in names and j.type in ("revolute", "prismatic"):
            m = min(LIMIT_ROOM, 0.1 * (j.upper - j.lower))
            room.joints[i] = copy.copy(j)
            room.joints[i].lower, room.joints[i].upper = j.lower + m, j.upper - m
    return room


def walk_poses(seg: Segment, params: dict, upper=None, carried: tuple[str, ...] = ()) -> Walked:
    """The walk over the segment's frames; `upper(i, pose) -> pose` may pose the rest first, and
    the `carried` bodies count in the centre of mass."""
    scene = seg.scene
    legs = legs_of(scene, params)
    root = params["root"]
    step_length = float(params.get("step_length", 0.35))
    step_height = float(params.get("step_height", 0.05))
    sway = float(params.get("sway", 0.0))
    max_slide = float(params.get("max_slide", MAX_SLIDE))
    com_tol = float(params.get("com_tolerance", COM_TOLERANCE))
    pa, pb = seg.a.pose.completed(scene), seg.b.pose.completed(scene)
    ra, rb = np.asarray(pa.roots[root], float), np.asarray(pb.roots[root], float)
    yaw_a, yaw_b = yaw_of(ra[3:]), yaw_of(rb[3:])
    tilt_a, tilt_b = tilt_of(ra[3:]), tilt_of(rb[3:])
    if np.dot(tilt_a, tilt_b) < 0:
        tilt_b = -tilt_b
    feet_a, feet_b = sole_placements(scene, pa, legs), sole_placements(scene, pb, legs)
    waypoints = [np.asarray(w, float) for w in params.get("waypoints", [])]
    raw = [(ra[:2], "the first state"), *[(w, f"waypoint {i}") for i, w in enumerate(waypoints)],
           (rb[:2], "the second state")]
    kept = [raw[0]]
    for p, name in raw[1:]:
        if np.linalg.norm(p - kept[-1][0]) > 1e-6:
            kept.append((p, name))
    path = _Path(np.array([p for p, _ in kept]), yaw_a, yaw_b, params.get("facing", "states"))

    def offsets(feet, xy, yaw):
        return {k: np.array([*(_rot(-yaw) @ (v[:2] - xy)), v[2], wrap(v[3] - yaw)]) for k, v in feet.items()}
    off_a, off_b = offsets(feet_a, ra[:2], yaw_a), offsets(feet_b, rb[:2], yaw_b)

    if len(path.points) > 1:
        lateral = sorted({0.0, *[float(v[1]) for v in off_a.values()]})
        lowest = min(ra[2], rb[2])
        blocking(scene, pa, path, lateral, [step_height + 0.01, 0.5 * lowest, lowest], seg.project_dir,
                 [name for _, name in kept])

    def target(leg: Leg, p: float) -> np.ndarray:
        a, b = off_a[leg.name], off_b[leg.name]
        o = a + p * np.array([*(b[:3] - a[:3]), wrap(b[3] - a[3])])
        yaw = path.yaw(p)
        return np.array([*(path.xy(p) + _rot(yaw) @ o[:2]), o[2], yaw + o[3]])

    moves = any(np.linalg.norm(target(leg, 1.0)[:3] - feet_a[leg.name][:3]) > 1e-3 or
                abs(wrap(target(leg, 1.0)[3] - feet_a[leg.name][3])) > 0.01 for leg in legs)
    phases = sorted({round(leg.phase, 6) for leg in legs})
    travel = _rot(-yaw_a) @ (path.xy(1.0) - path.xy(0.0))
    travel = travel / max(np.linalg.norm(travel), 1e-9)
    groups = [[leg for leg in legs if round(leg.phase, 6) == ph] for ph in phases]
    lead = [round(float(np.mean([off_a[leg.name][:2] @ travel for leg in g])), 3) for g in groups]
    groups = [g for _, _, g in sorted(zip([-x for x in lead], range(len(groups)), groups), key=lambda t: t[:2])]
    if len(groups) < 2:
        raise MotionError("walk: every leg has the same phase; give the legs that swing together one phase "
                          "and the others another, so some feet always stand")
    order = []
    if moves:
        for cycles in range(1, 501):
            order = landings(len(groups), cycles)
            at = {leg.name: 0.0 for leg in legs}
            longest = 0.0
            for g, p in order:
                for leg in groups[g]:
                    longest = max(longest, float(np.linalg.norm(target(leg, p)[:2] - target(leg, at[leg.name])[:2])))
                    at[leg.name] = p
            if longest <= step_length + 1e-9:
                break
        else:
            raise MotionError(f"walk {seg.id}: no footsteps of at most {step_length} m reach the second state")

    com_names, com_m, com_c = _mass_points(scene, root, seg.project_dir, carried)

    def com_offset(pose: Pose) -> np.ndarray:
        w = pose_world(scene, pose)
        c = sum(m * (w[n][:3, :3] @ c_ + w[n][:3, 3]) for n, m, c_ in zip(com_names, com_m, com_c)) / com_m.sum()
        r = np.asarray(pose.roots[root][:2], float)
        return _rot(-yaw_of(pose.roots[root][3:])) @ (c[:2] - r)
    com_a = com_offset(pa)

    # the schedule: body keys (progress, shift off the path) and swings (group, where its feet land)
    between = params.get("balance", "static") == "between"
    swings, keys, leans = [], [(0.0, np.zeros(2))], []
    place = {leg.name: feet_a[leg.name].copy() for leg in legs}
    at = {leg.name: 0.0 for leg in legs}          # the progress each foot was placed for
    for gi, land in order:
        g = groups[gi]
        stance = [place[leg.name] for leg in legs if leg not in g]
        centre = np.mean([s[:2] for s in stance], axis=0)
        swings.append((g, {leg.name: (place[leg.name].copy(), target(leg, land)) for leg in g}))
        if between:                               # amid the feet as they will be once this step lands,
            p_k = float(np.mean(list(at.values())))   # sideways by `sway` over the standing ones while it swings
            yaw = path.yaw(p_k)
            d = _rot(-yaw) @ (centre - (path.xy(p_k) + _rot(yaw) @ com_a))
            leans.append(_rot(yaw) @ np.array([0.0, sway * d[1]]))
            for leg in g:
                at[leg.name] = land
            keys.append((float(np.mean(list(at.values()))), np.zeros(2)))
        else:
            p_k = float(np.mean(list(at.values())))   # the body amid its feet, then over the standing ones:
            yaw = path.yaw(p_k)                       # forwards fully, sideways by `sway`
            d = _rot(-yaw) @ (centre - (path.xy(p_k) + _rot(yaw) @ com_a))
            keys.append((p_k, _rot(yaw) @ np.array([d[0], sway * d[1]])))
        for leg in g:
            at[leg.name] = land
            place[leg.name] = target(leg, land)
    keys.append((1.0, np.zeros(2)))

    n_frames = seg.frames
    span = n_frames - 1
    shift_, SWING = float(params.get("shift", SHIFT)), 1.0 - float(params.get("shift", SHIFT))
    overlap = 1.0 if between else float(params.get("overlap", 0.0))
    settle = float(params.get("settle", 0.0)) * span if swings else 0.0
    lead = float(params.get("lead", 0.0)) * span if swings else 0.0
    if settle + lead >= span:
        raise MotionError(f"walk {seg.id}: lead and settle leave no frames to walk in")
    unit = (span - settle - lead) / (len(swings) * (shift_ + SWING) + shift_)
    if swings and SWING * unit < MIN_SWING:
        raise MotionError(f"walk {seg.id}: {len(swings)} steps do not fit in {n_frames} frames; "
                          f"allow more frames or a longer step_length (now {step_length} m)")
    t = np.arange(n_frames, dtype=float)
    # body: after the lead, shift k runs from k(S+W)u and reaches key k+1 (S + overlap W/2)u later, the last at the end
    knots = [(0.0, keys[0])] + ([(lead, keys[0])] if lead else [])
    for k in range(1, len(keys) - 1):
        start = lead + (k - 1) * (shift_ + SWING) * unit
        reach = start + (shift_ + overlap * SWING / 2) * unit
        if overlap == 0 and start > knots[-1][0] + 1e-9:
            knots.append((start, knots[-1][1]))   # held over the standing feet while the foot swings
        knots.append((reach, keys[k]))
    knots.append((float(span), keys[-1]))
    body_p = glide([k for k, _ in knots], [v[0] for _, v in knots], t)
    body_side = np.column_stack([glide([k for k, _ in knots], [v[1][i] for _, v in knots], t) for i in (0, 1)])
    if between and sway:                          # over the standing feet from lift-off to landing
        times, sides = [0.0] + ([lead] if lead else []), [np.zeros(2)] * (2 if lead else 1)
        for k, side in enumerate(leans):
            t0 = lead + (k * (shift_ + SWING) + shift_) * unit
            times += [t0, t0 + SWING * unit]
            sides += [side, side]
        times.append(float(span))
        sides.append(np.zeros(2))
        body_side = np.column_stack([glide(times, [v[i] for v in sides], t) for i in (0, 1)])
    feet = {leg.name: np.tile(feet_a[leg.name], (n_frames, 1)) for leg in legs}
    planted = {leg.name: np.ones(n_frames, bool) for leg in legs}
    for k, (g, moves_) in enumerate(swings):
        t0 = lead + (k * (shift_ + SWING) + shift_) * unit
        t1 = t0 + SWING * unit
        s = np.clip((t - t0) / (t1 - t0), 0, 1)
        e = smooth((s - LIFT) / (1 - 2 * LIFT))        # up first, across, then down
        for leg in g:
            f0, f1 = moves_[leg.name]
            dyaw = wrap(f1[3] - f0[3])
            arc = np.column_stack([f0[:2] + e[:, None] * (f1[:2] - f0[:2]),
                                   f0[2] + e * (f1[2] - f0[2]) + step_height * np.sin(math.pi * s),
                                   f0[3] + e * dyaw])
            sel = t > t0
            feet[leg.name][sel] = arc[sel]
            planted[leg.name] &= ~((t > t0) & (t < t1))
    # root: along the path, height and tilt eased over the segment
    ease_all = smooth((t - (span - settle)) / max(settle, 1)) if settle else smooth(t / max(span, 1))
    tilts = slerp(np.tile(tilt_a, (n_frames, 1)), np.tile(tilt_b, (n_frames, 1)), ease_all)
    root_track = np.zeros((n_frames, 7))
    for i in range(n_frames):
        yaw = path.yaw(body_p[i])
        q = quat_mul(yaw_quat(yaw), tilts[i])
        root_track[i] = [*(path.xy(body_p[i]) + body_side[i]), ra[2] + ease_all[i] * (rb[2] - ra[2]), *q]
    root_track[0], root_track[-1] = ra, rb

    leg_map = {leg.name: (leg.joints, leg.sole) for leg in legs}
    points = frozenset(leg.name for leg in legs if leg.point)
    hulls = {leg.name: _foot_hull(scene, leg, seg.project_dir) for leg in legs}
    room = inside_limits(scene, [j for leg in legs for j in leg.joints])
    poses, pose, worst_ik = [], pa, 0.0
    for i in range(n_frames):
        pose = pose.copy()
        pose.roots[root] = root_track[i].tolist()
        if upper is not None:
            pose = upper(i, pose)
        at_i = {k: v[i].copy() for k, v in feet.items()}
        pose, err = place_flat(room, pose, leg_map, at_i, 25, points)
        sunk = edges_below(scene, pose, legs, hulls, at_i)
        if sunk:                                  # a foot that cannot stay level rests on its lower edge
            for name, depth in sunk.items():
                at_i[name][2] += depth
            pose, err = place_flat(room, pose, leg_map, at_i, 25, points)
        worst_ik = max(worst_ik, err)
        poses.append(pose)

    leg_joints = [j for leg in legs for j in leg.joints]
    world = world_of(scene, Tracks.from_poses(seg.a.frame, poses))     # everything as posed, carried bodies too
    slide, where = 0.0, ""
    soles = {}
    for leg in legs:
        body, local = frame_local(scene, leg.sole, "walk")
        soles[leg.name] = (world[body] @ local)[:, :3, 3]
        pl = planted[leg.name]
        start = 0
        for i in range(1, n_frames + 1):
            if i == n_frames or pl[i] != pl[start]:
                if pl[start]:
                    d = float(np.max(np.linalg.norm(soles[leg.name][start:i, :2] - soles[leg.name][start, :2], axis=1)))
                    if d > slide:
                        slide, where = d, f"{leg.name} at frame {seg.a.frame + start + int(np.argmax(np.linalg.norm(soles[leg.name][start:i, :2] - soles[leg.name][start, :2], axis=1)))}"
                start = i
    if slide > max_slide:
        raise MotionError(f"walk {seg.id}: the planted foot {where} slides {slide * 1000:.1f} mm "
                          f"(more than {max_slide * 1000:.1f} mm): the leg cannot reach; shorten the steps "
                          f"or change the root height")
    under = {leg.name: _sole_points(scene, leg, seg.project_dir) for leg in legs}
    cm = sum(m * (np.einsum("fij,j->fi", world[n][:, :3, :3], c_) + world[n][:, :3, 3])
             for n, m, c_ in zip(com_names, com_m, com_c)) / com_m.sum()
    outside, out_at = 0.0, seg.a.frame
    for i in range(n_frames):
        pts = [np.einsum("ij,cj->ci", world[b][i, :3, :3], v)[:, :2] + world[b][i, :2, 3]
               for leg in legs if planted[leg.name][i] for b, v in [under[leg.name]]]
        if not pts:
            continue
        d = _outside(np.concatenate(pts), cm[i, :2])
        if d > outside:
            outside, out_at = d, seg.a.frame + i
    if outside > com_tol:
        raise MotionError(f"walk {seg.id}: at frame {out_at} the centre of mass is {outside * 100:.1f} cm outside "
                          f"the feet (more than {com_tol * 100:.1f} cm); use more sway or shorter steps")
    notes = [f"walk {seg.id}: {len(swings)} steps; planted feet slide at most "
             f"{slide * 1000:.2f} mm; centre of mass at most {outside * 100:.1f} cm outside the feet "
             f"(tolerance {com_tol * 100:.1f} cm); worst foot IK error {worst_ik * 1000:.2f} mm"]
    return Walked(poses, [root], leg_joints, planted, slide, outside, len(swings), notes)


def walk(seg: Segment, params: dict) -> Authored:
    w = walk_poses(seg, params)
    tracks = Tracks(seg.a.frame, {r: np.array([p.roots[r] for p in w.poses], float) for r in w.roots},
                    {j: np.array([p.joints[j] for p in w.poses], float) for j in w.joints})
    return Authored(tracks, notes=w.notes)


register(MotionTool(
    "walk", "Footsteps and a balanced walk of a legged body (legs, sole frames and gait phases given) "
    "from the first state along waypoints to the second, feet flat and planted feet still.",
    SCHEMA, walk))
