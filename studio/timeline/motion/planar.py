"""The `planar` tool: pymunk mechanisms in a declared plane (rolling, ramps, hinged parts, gears).

The bodies move in the plane (origin, u across, v up; gravity along -v), with
shapes from their meshes' sections (studio.timeline.motion.planar_pymunk): circles, convex
polygons or boxes for the moving bodies, outlines for the obstacles. Pivots
pin a body to the world at a plane point (a lever, a gear's axle); gears
couple two pivoted bodies with a ratio, and bodies the scene declares may
overlap (meshing teeth) do not collide. A run starts at the segment's first
state, or with `from` at an earlier state, simulated through and sampled over
this segment, so consecutive segments of one run join exactly (pymunk is
deterministic). As with `simulate`, the run's last frame is the offered end
state, its difference from the approved second state is reported, and above
`max_difference` the tool refuses; a body leaving the scene is refused by name.
"""
from __future__ import annotations

import numpy as np

from studio.scene.pose import Tracks

from studio.timeline.motion.planar_pymunk import Mechanism, Plane, simulate_planar
from studio.timeline.motion import Authored, MotionError, MotionTool, Segment, register
from studio.timeline.motion.common import need_root
from studio.timeline.motion.simulate import MAX_DIFFERENCE_SCHEMA, judge_end, run_start, scene_box

VEC2 = {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "number"}}
VEC3 = {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number"}}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["bodies"],
    "properties": {
        "bodies": {"type": "object", "minProperties": 1,
                   "additionalProperties": {"type": "string", "enum": ["circle", "poly", "box"]},
                   "description": "root bodies that move, and their shape in the plane"},
        "plane": {"type": "object", "additionalProperties": False,
                  "properties": {"origin": VEC3, "u": VEC3, "v": VEC3}},
        "pivots": {"type": "object", "additionalProperties": VEC2},
        "gears": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                             "required": ["a", "b", "ratio"],
                                             "properties": {"a": {"type": "string"}, "b": {"type": "string"},
                                                            "ratio": {"type": "number", "description": "a turns ratio times as far as b"}}}},
        "velocities": {"type": "object", "additionalProperties": VEC3,
                       "description": "start velocity in the plane (u, v) and spin"},
        "obstacles": {"type": "array", "items": {"type": "string"}},
        "friction": {"type": "number", "minimum": 0, "maximum": 5, "default": 0.7},
        "elasticity": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1},
        "substeps": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
        "from": {"type": "string", "description": "an earlier state the run starts at"},
        "max_difference": MAX_DIFFERENCE_SCHEMA,
    }}


def _unit(v, where: str) -> np.ndarray:
    v = np.asarray(v, float)
    n = float(np.linalg.norm(v))
    if n < 1e-9:
        raise MotionError(f"planar: plane.{where} must not be zero")
    return v / n


def planar(seg: Segment, params: dict) -> Authored:
    scene = seg.scene
    for b in params["bodies"]:
        need_root(scene, b, "planar", "bodies names")
    for b in [*params.get("pivots", {}), *[g[k] for g in params.get("gears", []) for k in ("a", "b")]]:
        if b not in params["bodies"]:
            raise MotionError(f"planar: a pivot or gear names {b!r}, which is not one of the moving bodies")
    for b in params.get("obstacles", []):
        if b not in scene.body_names:
            raise MotionError(f"planar: obstacles names {b!r}, which is no body of the scene")
    pl = params.get("plane", {})
    plane = Plane(np.asarray(pl.get("origin", [0, 0, 0]), float), _unit(pl.get("u", [1, 0, 0]), "u"),
                  _unit(pl.get("v", [0, 0, 1]), "v"))
    if abs(float(plane.u @ plane.v)) > 1e-6:
        raise MotionError("planar: plane.u and plane.v must be at right angles")
    start = run_start(seg, params, "planar")
    mech = Mechanism(dict(params["bodies"]), {k: tuple(v) for k, v in params.get("pivots", {}).items()},
                     [(g["a"], g["b"], float(g["ratio"])) for g in params.get("gears", [])],
                     {k: tuple(v) for k, v in params.get("velocities", {}).items()},
                     params.get("obstacles"), float(params.get("friction", 0.7)),
                     float(params.get("elasticity", 0.1)), sections=True)
    n = seg.b.frame - start.frame + 1
    try:
        run = simulate_planar(scene, start.pose.completed(scene), mech, plane, start.frame, n, seg.fps,
                              int(params.get("substeps", 10)), project_dir=seg.project_dir)
    except ValueError as e:
        raise MotionError(f"{seg.id}: {e}") from None
    lo, hi = scene_box(seg)
    for b, v in run.roots.items():
        bad = ~np.isfinite(v).all(axis=1) | np.any(v[:, :3] < lo, axis=1) | np.any(v[:, :3] > hi, axis=1)
        if bad.any():
            raise MotionError(f"planar {seg.id}: {b!r} left the scene at frame {start.frame + int(np.argmax(bad))}")
    k = seg.a.frame - start.frame
    tracks = Tracks(seg.a.frame, {b: v[k:].copy() for b, v in run.roots.items()}, {})
    end, note, offer = judge_end(seg, tracks, start, params, "planar")
    return Authored(tracks, notes=[note], end_pose=end, offer=offer)


register(MotionTool(
    "planar", "A pymunk mechanism in a declared plane (rolling bodies, ramps, hinged parts, gears), shapes "
    "from the meshes' sections; the end state is offered and compared with the second.", SCHEMA, planar,
    offers_end=True))
