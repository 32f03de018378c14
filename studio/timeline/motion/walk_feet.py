"""Walking a legged character: the root follows the planned centre of mass, each leg
reaches its foot's planned placement by IK, and the upper body is left to the caller.

Feet are kept flat: besides the sole frame's position, a point `TOE` metres ahead of
the sole (along the foot's yaw) is aimed at the same height. `com_offset` is where the
character's centre of mass sits relative to its root, in the root's heading frame, so
the root is placed such that the real centre of mass follows the plan.
"""
from __future__ import annotations

import math

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import quat_from_axis_angle, quat_to_matrix

from studio.timeline.motion.footsteps import FootPlan, com_path, foot_tracks
from studio.timeline.motion.easing import ease
from studio.timeline.motion.ik import Goal, solve_ik

TOE = 0.1


def centre_of_mass(scene: Scene, pose: Pose, bodies: list[str] | None = None) -> np.ndarray:
    """Mass-weighted centre of the bodies' mesh-free origins (body frames), world xyz."""
    world = pose_world(scene, pose.completed(scene))
    names = bodies or [b.name for b in scene.bodies if not b.is_static]
    m = np.array([scene.body(n).mass for n in names])
    p = np.array([world[n][:3, 3] for n in names])
    return (m[:, None] * p).sum(0) / max(m.sum(), 1e-9)


def foot_goals(sole: str, x: float, y: float, z: float, yaw: float) -> list[Goal]:
    fwd = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    return [Goal(sole, np.array([x, y, z])),
            Goal(sole, np.array([x, y, z]) + TOE * fwd, weight=0.5, offset=(TOE, 0.0, 0.0))]


def place_feet(scene: Scene, pose: Pose, legs: dict[str, tuple[list[str], str]],
               feet: dict[str, np.ndarray], iterations: int = 40) -> tuple[Pose, float]:
    """Solve each leg so its sole stands at feet[side] = (x, y, z, yaw); returns the worst error."""
    worst = 0.0
    for side, (joints, sole) in legs.items():
        x, y, z, yaw = feet[side]
        pose = pose.copy()
        for name in joints:             # a straight knee on its limit is a singularity: start just off it
            j = scene.joint(name)
            v = pose.joints[name]
            if j.type != "ball" and (v <= j.lower + 1e-6 or v >= j.upper - 1e-6):
                step = min(0.2, 0.1 * (j.upper - j.lower))
                pose.joints[name] = v + step if v <= j.lower + 1e-6 else v - step
        pose, err = solve_ik(scene, pose, joints, foot_goals(sole, x, y, z, yaw), iterations)
        worst = max(worst, err)
    return pose, worst


def mid_path(plan: FootPlan) -> np.ndarray:
    """(F, 2) the midpoint of the feet, moving while a foot swings: for a character whose feet
    can only stay flat with its hips straight above them (no ankle roll), at the cost of balance."""
    frames = np.arange(plan.frame_start, plan.frame_end + 1)
    keys = [(plan.frame_start, (plan.start["l"][:2] + plan.start["r"][:2]) / 2)]
    for s in plan.steps:
        keys.append((s.land, (plan.placement("l", s.land)[:2] + plan.placement("r", s.land)[:2]) / 2))
    keys.append((plan.frame_end, keys[-1][1]))
    out = np.zeros((len(frames), 2))
    out[:] = keys[0][1]
    prev = keys[0]
    for s, key in zip(plan.steps, keys[1:]):
        sel = (frames >= s.lift) & (frames <= s.land)
        t = ease((frames[sel] - s.lift) / max(s.land - s.lift, 1))[:, None]
        out[sel] = prev[1] + t * (key[1] - prev[1])
        out[frames > s.land] = key[1]
        prev = key
    return out


def root_track(plan: FootPlan, heights: np.ndarray, yaw: float, com_offset: np.ndarray,
               sway: float | None = 0.6) -> np.ndarray:
    """(F, 7) root transforms: xy from the planned centre of mass (or, sway None, the feet's
    midpoint) less the offset ((2,) or (F, 2), in the heading frame), z given."""
    com = com_path(plan, sway) if sway is not None else mid_path(plan)
    c, s = math.cos(yaw), math.sin(yaw)
    o = np.broadcast_to(np.asarray(com_offset, float)[..., :2], (len(com), 2))
    off = np.column_stack([c * o[:, 0] - s * o[:, 1], s * o[:, 0] + c * o[:, 1]])
    q = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array(yaw))
    return np.column_stack([com - off, heights, np.tile(q, (len(com), 1))])


def walk(scene: Scene, start: Pose, root: str, legs: dict[str, tuple[list[str], str]], plan: FootPlan,
         heights: np.ndarray, com_offset: np.ndarray, step_height: float = 0.06, sway: float | None = 0.6,
         upper=None) -> tuple[list[Pose], float]:
    """One pose per frame of the plan; `upper(i, pose)` may pose the rest of the body first."""
    yaw = float(np.arctan2(*quat_to_matrix(np.asarray(start.roots[root][3:]))[[1, 0], 0]))
    roots = root_track(plan, heights, yaw, com_offset, sway)
    feet = foot_tracks(plan, step_height)
    poses, worst, pose = [], 0.0, start.completed(scene)
    for i in range(len(roots)):
        pose = pose.copy()
        pose.roots[root] = roots[i].tolist()
        if upper is not None:
            pose = upper(i, pose)
        pose, err = place_feet(scene, pose, legs, {k: v[i] for k, v in feet.items()}, iterations=20)
        worst = max(worst, err)
        poses.append(pose)
    return poses, worst
