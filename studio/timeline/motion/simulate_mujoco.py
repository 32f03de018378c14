"""Rigid-body simulation of 3D bodies with MuJoCo, collision from the real meshes.

Each simulated body becomes a free MuJoCo body whose collision geometry is the
convex hull of its mesh (a box, a ball, a bottle); its mass is the IR's
and its inertia MuJoCo's, from the hull. Obstacles (by default the scene's
static bodies) are fixed at their world pose, split into convex parts first
(`convex_parts`: a body whose hull is much fuller than its mesh — a wall with
an opening, a bowl — is cut in two across its longest side, again and again, and
each part gets its own hull), so a ball can roll into a cup or through a door.
Friction and restitution are per body (restitution becomes the contact's
damping ratio, the usual spring-damper reading of a coefficient of
restitution). The model is built from the same inputs the same way every time
and MuJoCo is deterministic on one machine, so two runs give identical
tracks. Sampling happens once per film frame, after `substeps` physics steps.
A run that goes wrong (a NaN, a body leaving `bounds`) raises SimulationError
naming the body and the frame.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import manifold3d
import numpy as np
import trimesh

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import body_mesh, geometry_hash
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import matrix_to_quat, quat_to_matrix

LOG = logging.getLogger(__name__)
FRICTION, RESTITUTION = 0.8, 0.0
CONCAVITY = 0.08          # a part is convex enough when its hull adds less than this share of its volume
MAX_DEPTH = 4             # at most 2**depth parts per obstacle


class SimulationError(ValueError):
    """A simulation that blew up or lost a body; the message names it and the frame."""


def _warned(message: str) -> None:
    LOG.warning("MuJoCo: %s", message.strip())


def _mujoco():
    """MuJoCo, imported when a simulation first runs (listing the tools does not load it), its
    warnings sent to the studio's log, never MuJoCo's own MUJOCO_LOG.TXT in the cwd."""
    import mujoco
    mujoco.set_mju_user_warning(_warned)
    return mujoco


@dataclass
class Material:
    friction: float = FRICTION
    restitution: float = RESTITUTION
    rolling: float = 0.0           # rolling resistance (metres); above 0 a ball slows down as it rolls

    def geom(self, timestep: float) -> str:
        """The MJCF contact attributes of a geom of this material: contacts as stiff as the step
        allows (a time constant of two steps), so an impact sinks in as little as it can."""
        return (f'friction="{self.friction:.6g} 0.005 {self.rolling:.6g}" condim="{6 if self.rolling else 3}" '
                f'solref="{2 * timestep:.6g} {damping_ratio(self.restitution):.6g}"')


@dataclass
class Setup:
    """What is simulated and how: free bodies, fixed obstacles, materials, start velocities."""
    bodies: list[str]
    obstacles: list[str] | None = None
    materials: dict[str, Material] = field(default_factory=dict)
    velocities: dict[str, tuple] = field(default_factory=dict)        # body -> (linear xyz, angular xyz world)
    substeps: int = 20
    bounds: tuple[np.ndarray, np.ndarray] | None = None               # (min, max) world box bodies must stay in


def _fmt(v) -> str:
    return " ".join(f"{float(x):.9g}" for x in np.ravel(v))


def _hull_points(vertices: np.ndarray) -> np.ndarray:
    hull = trimesh.convex.convex_hull(vertices)
    return np.asarray(hull.vertices, float)


def convex_parts(mesh: trimesh.Trimesh, depth: int = MAX_DEPTH, concavity: float = CONCAVITY) -> list[np.ndarray]:
    """Vertex sets whose hulls together cover the mesh closely (approximate convex decomposition)."""
    try:
        m = manifold3d.Manifold(manifold3d.Mesh(np.asarray(mesh.vertices, np.float32),
                                                np.asarray(mesh.faces, np.uint32)))
        if m.is_empty():
            raise ValueError
    except Exception:                  # not a closed solid: its hull is the best it gets
        return [_hull_points(mesh.vertices)]
    out: list[np.ndarray] = []

    def split(part, level):
        v = np.asarray(part.to_mesh().vert_properties, float)[:, :3]
        if len(v) < 4:
            return
        vol = part.volume()
        hull = trimesh.convex.convex_hull(v)
        if level >= depth or vol <= 0 or hull.volume <= (1 + concavity) * vol:
            out.append(np.asarray(hull.vertices, float))
            return
        lo, hi = v.min(axis=0), v.max(axis=0)
        axis = int(np.argmax(hi - lo))
        normal = np.zeros(3)
        normal[axis] = 1.0
        a, b = part.split_by_plane(normal.tolist(), float((lo[axis] + hi[axis]) / 2))
        for piece in (a, b):
            if not piece.is_empty():
                split(piece, level + 1)
    split(m, 0)
    return out or [_hull_points(mesh.vertices)]


@lru_cache(maxsize=256)
def _parts_cached(key: str, vertices: bytes, faces: bytes, shape_v: tuple, shape_f: tuple) -> tuple:
    mesh = trimesh.Trimesh(np.frombuffer(vertices, float).reshape(shape_v),
                           np.frombuffer(faces, np.int64).reshape(shape_f), process=False)
    return tuple(convex_parts(mesh))


def obstacle_parts(mesh: trimesh.Trimesh, name: str) -> list[np.ndarray]:
    v, f = np.ascontiguousarray(mesh.vertices, float), np.ascontiguousarray(mesh.faces, np.int64)
    return list(_parts_cached(name, v.tobytes(), f.tobytes(), v.shape, f.shape))


_HULLS: dict[str, list[str]] = {}


def _collision_text(scene: Scene, name: str, obstacle: bool, project_dir: Path | None) -> list[str]:
    """The MJCF vertex lists of a body's collision parts (one hull, or an obstacle's convex parts),
    kept per geometry: building them is most of the cost of setting up a run."""
    key = f"{geometry_hash(scene.body(name).geometry)}:{obstacle}"
    if key not in _HULLS:
        mesh = body_mesh(scene.body(name), project_dir)
        parts = obstacle_parts(mesh, name) if obstacle else [_hull_points(mesh.vertices)]
        _HULLS[key] = [_fmt(p) for p in parts]
    return _HULLS[key]


def damping_ratio(restitution: float) -> float:
    """The contact damping ratio whose bounce keeps `restitution` of the approach speed."""
    e = min(max(restitution, 1e-4), 0.99)
    return -math.log(e) / math.sqrt(math.pi ** 2 + math.log(e) ** 2) if restitution > 1e-4 else 1.0


def mjcf(scene: Scene, pose: Pose, setup: Setup, timestep: float, project_dir: Path | None = None) -> str:
    """The MJCF text of the simulation (bodies free with their hulls, obstacles fixed in convex parts)."""
    pose = pose.completed(scene)
    world = pose_world(scene, pose)
    roots = set(scene.roots)
    for b in setup.bodies:
        if b not in roots:
            raise SimulationError(f"simulate: {b!r} is not a root body (a jointed link cannot be simulated freely)")
    obstacles = setup.obstacles
    if obstacles is None:
        obstacles = [b.name for b in scene.bodies if b.is_static and b.name not in setup.bodies]
    assets, bodies = [], []
    for name in obstacles:
        m = world[name]
        mat = setup.materials.get(name, Material())
        geoms = []
        for k, part in enumerate(_collision_text(scene, name, True, project_dir)):
            assets.append(f'<mesh name="{name}__{k}" vertex="{part}"/>')
            geoms.append(f'<geom type="mesh" mesh="{name}__{k}" {mat.geom(timestep)}/>')
        bodies.append(f'<body name="{name}" pos="{_fmt(m[:3, 3])}" quat="{_fmt(matrix_to_quat(m))}">'
                      + "".join(geoms) + "</body>")
    for name in setup.bodies:
        t = pose.roots[name]
        mat = setup.materials.get(name, Material())
        mass = max(scene.body(name).mass, 1e-3)
        assets.append(f'<mesh name="{name}" vertex="{_collision_text(scene, name, False, project_dir)[0]}"/>')
        bodies.append(f'<body name="{name}" pos="{_fmt(t[:3])}" quat="{_fmt(t[3:])}"><freejoint/>'
                      f'<geom type="mesh" mesh="{name}" mass="{mass:.9g}" {mat.geom(timestep)}/></body>')
    return "\n".join([
        f'<mujoco model="{scene.name}"><compiler inertiafromgeom="true"/>'
        f'<option timestep="{timestep:.9g}" integrator="implicitfast"/>',
        '<default><geom solimp="0.99 0.999 0.0005"/></default>',
        "<asset>", *assets, "</asset><worldbody>", *bodies, "</worldbody></mujoco>"])


def build(scene: Scene, pose: Pose, setup: Setup, fps: int = 24, project_dir: Path | None = None):
    """(model, data) ready to step, start velocities set."""
    mujoco = _mujoco()
    model = mujoco.MjModel.from_xml_string(mjcf(scene, pose, setup, 1.0 / (fps * setup.substeps), project_dir))
    data = mujoco.MjData(model)
    for name, (lin, ang) in setup.velocities.items():
        if name not in setup.bodies:
            raise SimulationError(f"simulate: a start velocity is given for {name!r}, which is not simulated")
        adr = model.jnt_dofadr[model.body(name).jntadr[0]]
        data.qvel[adr:adr + 3] = lin
        q = np.asarray(pose.completed(scene).roots[name][3:], float)   # MuJoCo wants it in the body frame
        data.qvel[adr + 3:adr + 6] = quat_to_matrix(q).T @ np.asarray(ang, float)
    mujoco.mj_forward(model, data)
    return model, data


def simulate_rigid(scene: Scene, pose: Pose, bodies: list[str] | Setup, frame_start: int, n_frames: int,
                   fps: int = 24, velocities: dict[str, tuple] | None = None, obstacles: list[str] | None = None,
                   substeps: int = 20, friction: float = FRICTION, project_dir: Path | None = None) -> Tracks:
    """Tracks of the simulated bodies from `pose` over n_frames (velocities: linear and angular, world)."""
    mujoco = _mujoco()
    if isinstance(bodies, Setup):
        setup = bodies
    else:
        setup = Setup(list(bodies), obstacles, {b: Material(friction) for b in bodies}, dict(velocities or {}),
                      substeps)
        if obstacles is None:
            setup.materials.update({b.name: Material(friction) for b in scene.bodies if b.is_static})
    model, data = build(scene, pose, setup, fps, project_dir)
    ids = [model.body(b).id for b in setup.bodies]
    out = {b: np.zeros((n_frames, 7)) for b in setup.bodies}
    lo, hi = setup.bounds if setup.bounds is not None else (None, None)
    unstable = [mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL, mujoco.mjtWarning.mjWARN_BADQACC]
    for f in range(n_frames):
        if f:
            mujoco.mj_step(model, data, nstep=setup.substeps)
        for w in unstable:              # MuJoCo resets a run that blew up and carries on: never let that pass
            if data.warning[w].number:
                dof = int(data.warning[w].lastinfo)
                body = model.body(int(model.dof_bodyid[dof])).name if 0 <= dof < model.nv else "a body"
                raise SimulationError(f"simulate: {body!r} blew up by frame {frame_start + f} (a position, speed "
                                      f"or acceleration that is not a number or is huge); lower the start "
                                      f"velocities or raise substeps")
        for b, i in zip(setup.bodies, ids):
            p, q = data.xpos[i], data.xquat[i]
            if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
                raise SimulationError(f"simulate: {b!r} blew up at frame {frame_start + f} (its position is "
                                      f"not a number); lower the start velocities or raise substeps")
            if lo is not None and (np.any(p < lo) or np.any(p > hi)):
                raise SimulationError(f"simulate: {b!r} left the scene at frame {frame_start + f} (at "
                                      f"{_fmt(np.round(p, 2))}, outside {_fmt(lo)} .. {_fmt(hi)})")
            out[b][f, :3] = p
            out[b][f, 3:] = q if f == 0 or np.dot(q, out[b][f - 1, 3:]) >= 0 else -q
    start = pose.completed(scene)
    for b in setup.bodies:                       # the first frame is the given pose, bit for bit
        out[b][0] = start.roots[b]
    return Tracks(frame_start, out, {})
