"""Planar mechanisms with pymunk: gears, levers, balls and ramps in one plane, mapped into 3D.

The plane has an origin and two in-plane unit axes, u (across) and v (up);
gravity acts along -v. A simulated body keeps its offset along the plane's
normal and its starting orientation, and gains the in-plane rotation about the
normal. With `sections` (what the planar motion tool uses) shapes come from
the real meshes cut by the plane: a moving body is a circle of its section's
size, the convex hull of its section ("poly") or its section's bounding box
("box"), and an obstacle is its section's outline as thin segments, so a
concave one (a bowl, a notched ramp) keeps its shape. Without, shapes come
from the meshes' bounding boxes. Pivots pin a body to the world at a point (a
lever, a gear's axle), gears couple two pivoted bodies with a ratio, and bodies
the scene declares may overlap (meshing teeth) do not collide with each other.
pymunk is deterministic, so tracks repeat exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import quat_from_axis_angle, quat_mul

from studio.scene.meshes import body_mesh

from studio.timeline.motion.footsteps import support_polygon
from studio.timeline.visibility import body_box_points

EDGE = 0.0005            # metres: the radius of an obstacle's outline segments


@dataclass
class Plane:
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    u: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    v: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))

    @property
    def normal(self) -> np.ndarray:
        return np.cross(self.u, self.v)

    def to_2d(self, p: np.ndarray) -> np.ndarray:
        d = np.asarray(p, float) - self.origin
        return np.stack([d @ self.u, d @ self.v], axis=-1)


@dataclass
class Mechanism:
    """What moves and how it is held: shapes ('circle'|'box'), pivots, gears, start velocities."""

    bodies: dict[str, str]
    pivots: dict[str, tuple[float, float]] = field(default_factory=dict)      # body -> plane point
    gears: list[tuple[str, str, float]] = field(default_factory=list)          # (a, b, ratio): b.angle·ratio = a.angle
    velocities: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # vx, vy, spin
    obstacles: list[str] | None = None
    friction: float = 0.7
    elasticity: float = 0.1
    sections: bool = False          # shapes from the meshes' sections (else their bounding boxes)


def section(scene: Scene, name: str, world: np.ndarray, plane: Plane, project_dir: Path | None) -> list[np.ndarray]:
    """The outlines ((N,2) closed loops in plane coordinates) where the plane cuts a body's mesh."""
    mesh = body_mesh(scene.body(name), project_dir).copy()
    mesh.apply_transform(world)
    cut = mesh.section(plane_origin=plane.origin, plane_normal=plane.normal)
    if cut is None:
        return []
    return [plane.to_2d(cut.vertices[e.points]) for e in cut.entities]


def _no_collide_groups(scene: Scene, names: list[str]) -> dict[str, int]:
    """Bodies joined by declared overlaps share a group (pymunk does not collide a group)."""
    parent = {n: n for n in names}

    def find(n):
        while parent[n] != n:
            n = parent[n]
        return n
    for o in scene.allowed_overlaps:
        if o.a in parent and o.b in parent:
            parent[find(o.a)] = find(o.b)
    roots = sorted({find(n) for n in names})
    return {n: roots.index(find(n)) + 1 for n in names if any(find(m) == find(n) for m in names if m != n)}


def simulate_planar(scene: Scene, pose: Pose, mech: Mechanism, plane: Plane, frame_start: int,
                    n_frames: int, fps: int = 24, substeps: int = 10, gravity: float = 9.81,
                    project_dir: Path | None = None) -> Tracks:
    """Root tracks (F,7) of the mechanism's bodies."""
    import pymunk                      # loaded when a mechanism first runs, not to list the tools
    pose = pose.completed(scene)
    world = pose_world(scene, pose)
    boxes = body_box_points(scene, project_dir)
    space = pymunk.Space()
    space.gravity = (0.0, -gravity)
    space.collision_slop = 2e-4            # metres; pymunk's default (0.1) assumes pixels
    obstacles = mech.obstacles if mech.obstacles is not None else \
        [b.name for b in scene.bodies if b.is_static and b.name not in mech.bodies]
    groups = _no_collide_groups(scene, list(mech.bodies))
    for name in obstacles:
        m = world[name]
        if mech.sections:
            for loop in section(scene, name, m, plane, project_dir):
                for p, q in zip(loop, np.roll(loop, -1, axis=0)):
                    if np.linalg.norm(q - p) < 1e-9:
                        continue
                    shape = pymunk.Segment(space.static_body, tuple(p), tuple(q), EDGE)
                    shape.friction, shape.elasticity = mech.friction, mech.elasticity
                    space.add(shape)
            continue
        hull = support_polygon(plane.to_2d(boxes[name][:8] @ m[:3, :3].T + m[:3, 3]))
        shape = pymunk.Poly(space.static_body, [tuple(p) for p in hull])
        shape.friction, shape.elasticity = mech.friction, mech.elasticity
        space.add(shape)
    sims: dict[str, pymunk.Body] = {}
    for name, kind in mech.bodies.items():
        if name not in pose.roots:
            raise ValueError(f"planar: {name!r} is not a root body")
        m = world[name]
        centre2 = plane.to_2d(m[:3, 3])
        if mech.sections:
            loops = section(scene, name, m, plane, project_dir)
            if not loops:
                raise ValueError(f"planar: the plane does not cut {name!r}; move the plane or the body")
            local = np.concatenate(loops) - centre2
        else:
            local = (boxes[name][:8] @ m[:3, :3].T) @ np.stack([plane.u, plane.v], axis=1)
        mass = max(scene.body(name).mass, 1e-3)
        if kind == "circle":
            r = float(np.max(np.ptp(local, axis=0))) / 2
            off = (local.min(axis=0) + local.max(axis=0)) / 2
            body = pymunk.Body(mass, pymunk.moment_for_circle(mass, 0, r, tuple(off)))
            shape = pymunk.Circle(body, r, tuple(off))
        elif kind == "poly":
            hull = [tuple(p) for p in support_polygon(local)]
            body = pymunk.Body(mass, pymunk.moment_for_poly(mass, hull))
            shape = pymunk.Poly(body, hull)
        elif kind == "box":
            w, h = np.ptp(local[:, 0]), np.ptp(local[:, 1])
            body = pymunk.Body(mass, pymunk.moment_for_box(mass, (w, h)))
            off = (local.min(axis=0) + local.max(axis=0)) / 2
            shape = pymunk.Poly(body, [(off[0] + sx * w / 2, off[1] + sy * h / 2)
                                       for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        else:
            raise ValueError(f"planar: body {name!r} shape must be 'circle', 'poly' or 'box', got {kind!r}")
        if name in groups:
            shape.filter = pymunk.ShapeFilter(group=groups[name])
        body.position = tuple(centre2)
        vx, vy, spin = mech.velocities.get(name, (0.0, 0.0, 0.0))
        body.velocity, body.angular_velocity = (vx, vy), spin
        shape.friction, shape.elasticity = mech.friction, mech.elasticity
        space.add(body, shape)
        sims[name] = body
    for name, at in mech.pivots.items():
        space.add(pymunk.PivotJoint(space.static_body, sims[name], tuple(map(float, at))))
    for a, b, ratio in mech.gears:
        space.add(pymunk.GearJoint(sims[a], sims[b], 0.0, float(ratio)))
    start = {n: np.asarray(pose.roots[n], float) for n in sims}
    offsets = {n: (start[n][:3] - plane.origin) @ plane.normal for n in sims}
    out = {n: np.zeros((n_frames, 7)) for n in sims}
    dt = 1.0 / (fps * substeps)
    for f in range(n_frames):
        if f:
            for _ in range(substeps):
                space.step(dt)
        for n, body in sims.items():
            x, y = body.position
            q = quat_mul(quat_from_axis_angle(plane.normal, np.array(body.angle)), start[n][3:])
            if f and np.dot(q, out[n][f - 1, 3:]) < 0:
                q = -q                     # keep the track on one hemisphere
            out[n][f] = [*(plane.origin + x * plane.u + y * plane.v + offsets[n] * plane.normal), *q]
    for n in sims:
        out[n][0] = start[n]
    return Tracks(frame_start, out, {})
