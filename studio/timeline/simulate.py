"""Rigid-body simulation of 3D props with MuJoCo, baked to keys.

Each simulated body becomes a free MuJoCo body with one box geom: the bounding
box of its mesh in its own frame (a documented approximation; props are boxes
or close to it). Obstacles (by default the scene's ground and static bodies)
become fixed boxes at their world pose. The model is built from the same
inputs the same way every time and MuJoCo is deterministic on one machine, so
two runs give identical tracks. Sampling happens once per film frame, after
`substeps` physics steps.
"""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import matrix_to_quat

from .visibility import body_box_points


def _box(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = points[:8].min(axis=0), points[:8].max(axis=0)
    return (lo + hi) / 2, np.maximum((hi - lo) / 2, 1e-4)


def _fmt(v) -> str:
    return " ".join(f"{float(x):.9g}" for x in v)


def mjcf(scene: Scene, pose: Pose, bodies: list[str], obstacles: list[str] | None = None,
         timestep: float = 0.002, friction: float = 0.8, project_dir: Path | None = None) -> str:
    """The MJCF text of the simulation (bodies free, obstacles fixed)."""
    pose = pose.completed(scene)
    world = pose_world(scene, pose)
    boxes = body_box_points(scene, project_dir)
    roots = set(scene.roots)
    for b in bodies:
        if b not in roots:
            raise ValueError(f"simulate: {b!r} is not a root body (a jointed link cannot be simulated freely)")
    if obstacles is None:
        obstacles = [b.name for b in scene.bodies if b.is_static and b.name not in bodies]
    lines = [f'<mujoco model="{scene.name}"><option timestep="{timestep}" integrator="implicitfast"/>',
             f'<default><geom friction="{friction} 0.005 0.0001" condim="3"/></default><worldbody>']
    for name in obstacles:
        m = world[name]
        c, h = _box(boxes[name])
        lines.append(f'<body name="{name}" pos="{_fmt(m[:3, 3])}" quat="{_fmt(matrix_to_quat(m))}">'
                     f'<geom type="box" pos="{_fmt(c)}" size="{_fmt(h)}"/></body>')
    for name in bodies:
        t = pose.roots[name]
        c, h = _box(boxes[name])
        mass = max(scene.body(name).mass, 1e-3)
        lines.append(f'<body name="{name}" pos="{_fmt(t[:3])}" quat="{_fmt(t[3:])}"><freejoint/>'
                     f'<geom type="box" pos="{_fmt(c)}" size="{_fmt(h)}" mass="{mass:.9g}"/></body>')
    lines.append("</worldbody></mujoco>")
    return "\n".join(lines)


def simulate_rigid(scene: Scene, pose: Pose, bodies: list[str], frame_start: int, n_frames: int,
                   fps: int = 24, velocities: dict[str, tuple] | None = None, obstacles: list[str] | None = None,
                   substeps: int = 20, friction: float = 0.8, project_dir: Path | None = None) -> Tracks:
    """Tracks of `bodies` from `pose` over n_frames. `velocities[body]` is (linear xyz,
    angular xyz in the body's frame) at the first frame."""
    model = mujoco.MjModel.from_xml_string(
        mjcf(scene, pose, bodies, obstacles, 1.0 / (fps * substeps), friction, project_dir))
    data = mujoco.MjData(model)
    for name, (lin, ang) in (velocities or {}).items():
        adr = model.jnt_dofadr[model.body(name).jntadr[0]]
        data.qvel[adr:adr + 3] = lin
        data.qvel[adr + 3:adr + 6] = ang
    ids = [model.body(b).id for b in bodies]
    out = {b: np.zeros((n_frames, 7)) for b in bodies}
    mujoco.mj_forward(model, data)
    for f in range(n_frames):
        if f:
            mujoco.mj_step(model, data, nstep=substeps)
        for b, i in zip(bodies, ids):
            out[b][f, :3] = data.xpos[i]
            out[b][f, 3:] = data.xquat[i]
    for b in bodies:                       # the first frame is the given pose, bit for bit
        out[b][0] = pose.completed(scene).roots[b]
    return Tracks(frame_start, out, {})
