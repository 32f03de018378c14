"""Bake: store a segment's per-frame tracks, through the gate, hitting its states exactly.

A motion tool may produce tracks for only some bodies and joints; `complete`
fills the rest by joint-space cubic between the two states. `pin` then makes
the first and last frames equal the states bit for bit, fading any residual
(e.g. an IK tolerance) in and out with a smoothstep so velocities at the ends
are unchanged. A residual above `MAX_RESIDUAL` means the tool did not aim at the
states at all, and the bake is refused rather than bent into shape.

Baking never hides a joint past its limit. The one correction allowed is
rounding: a value at most `ROUNDING` (1e-6 rad or m) past a limit, which the
smoothstep fade can leave when a state sits exactly on its limit, is set onto
the limit. Anything further past is kept as the tool made it, so JointLimits
fails the film and names the joint and frames, and the scorer counts it.
"""
from __future__ import annotations

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Scene, canonical_hash
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import quat_conj, quat_mul, quat_normalize, slerp
from studio.store.project import Project

from studio.timeline import film
from studio.timeline.gate import parse_segment, require_storyboards
from studio.timeline.motion.easing import ease, interpolate_poses
from studio.timeline.storyboard import content_hash, get_state

MAX_RESIDUAL = 0.05        # metres or radians
ROUNDING = 1e-6            # the only joint correction baking makes, in radians or metres


def bounds_hash(project: Project, segment: str, scene: Scene | None = None) -> str:
    """Hash of both bounding states' content: a baked segment is current while it matches."""
    scene = scene or load_scene(project)
    a, b = parse_segment(segment)
    sa, sb = get_state(project, a), get_state(project, b)
    return canonical_hash([[s.id, s.frame, content_hash(scene, s.pose, s.frame)] if s else [sid, None]
                           for sid, s in ((a, sa), (b, sb))])[:16]


def complete(scene: Scene, tracks: Tracks, pose_a: Pose, pose_b: Pose, frame_a: int, frame_b: int) -> Tracks:
    """Tracks over frame_a..frame_b with every root and joint; missing channels are in-betweened."""
    base = interpolate_poses(scene, [(frame_a, pose_a), (frame_b, pose_b)])
    if tracks.n_frames and (tracks.frame_start != frame_a or tracks.frame_end != frame_b):
        raise ValueError(f"tracks cover frames {tracks.frame_start}..{tracks.frame_end}, "
                         f"the segment is {frame_a}..{frame_b}")
    roots = {k: np.asarray(tracks.roots.get(k, v), float).copy() for k, v in base.roots.items()}
    joints = {k: np.asarray(tracks.joints.get(k, v), float).copy() for k, v in base.joints.items()}
    extra = (set(tracks.roots) - set(roots)) | (set(tracks.joints) - set(joints))
    if extra:
        raise ValueError(f"tracks name {sorted(extra)[0]!r}, which is no root body or joint of the scene")
    return Tracks(frame_a, roots, joints)


def pin(tracks: Tracks, pose_a: Pose, pose_b: Pose) -> tuple[Tracks, float]:
    """Tracks whose first and last frames are exactly the two poses; returns the largest residual."""
    n = tracks.n_frames
    s = ease(np.linspace(0.0, 1.0, n))[:, None]
    worst = 0.0
    roots, joints = {}, {}
    for k, v in tracks.roots.items():
        a, b = np.asarray(pose_a.roots[k], float), np.asarray(pose_b.roots[k], float)
        da, db = a[:3] - v[0, :3], b[:3] - v[-1, :3]
        qa = quat_mul(a[3:], quat_conj(v[0, 3:]))
        qb = quat_mul(b[3:], quat_conj(v[-1, 3:]))
        ident = np.array([1.0, 0, 0, 0])
        rot = quat_mul(slerp(np.tile(ident, (n, 1)), np.tile(qa, (n, 1)), 1 - s[:, 0]),
                       quat_mul(slerp(np.tile(ident, (n, 1)), np.tile(qb, (n, 1)), s[:, 0]), v[:, 3:]))
        out = np.concatenate([v[:, :3] + (1 - s) * da + s * db, quat_normalize(rot)], axis=1)
        out[0], out[-1] = a, b
        worst = max(worst, *np.abs(da), *np.abs(db), 2 * np.arccos(min(1.0, abs(qa[0]))),
                    2 * np.arccos(min(1.0, abs(qb[0]))))
        roots[k] = out
    for k, v in tracks.joints.items():
        a, b = np.asarray(pose_a.joints[k], float), np.asarray(pose_b.joints[k], float)
        sv = s if v.ndim == 2 else s[:, 0]
        da, db = a - v[0], b - v[-1]
        out = v + (1 - sv) * da + sv * db
        out[0], out[-1] = a, b
        worst = max(worst, float(np.max(np.abs(da))), float(np.max(np.abs(db))))
        joints[k] = out
    return Tracks(tracks.frame_start, roots, joints), worst


def round_to_limits(scene: Scene, tracks: Tracks) -> None:
    """Set values within ROUNDING past a joint limit onto the limit; leave larger overshoots for JointLimits."""
    for j in scene.joints:
        v = tracks.joints.get(j.name)
        if v is None or j.type == "fixed":
            continue
        if j.type == "ball":
            n = np.linalg.norm(v, axis=1, keepdims=True)
            hair = (n > j.upper) & (n <= j.upper + ROUNDING)
            tracks.joints[j.name] = np.where(hair, v * (j.upper / np.maximum(n, 1e-12)), v)
        else:
            v = np.where((v < j.lower) & (v >= j.lower - ROUNDING), j.lower, v)
            tracks.joints[j.name] = np.where((v > j.upper) & (v <= j.upper + ROUNDING), j.upper, v)


def hits_states(tracks: Tracks, pose_a: Pose, pose_b: Pose) -> bool:
    """True if the first and last frames equal the two poses exactly."""
    first, last = tracks.pose_at(tracks.frame_start), tracks.pose_at(tracks.frame_end)
    return all(first.roots[k] == list(map(float, pose_a.roots[k])) and last.roots[k] == list(map(float, pose_b.roots[k]))
               for k in tracks.roots) and \
        all(np.array_equal(np.asarray(first.joints[k], float), np.asarray(pose_a.joints[k], float)) and
            np.array_equal(np.asarray(last.joints[k], float), np.asarray(pose_b.joints[k], float))
            for k in tracks.joints)


def residual_limit(schema: dict, params: dict) -> float:
    """How far a tool's tracks may miss their states for the bake to fade the rest out: the tool's own
    `max_difference` where it has one (so the tool and the bake mean the same by it), else MAX_RESIDUAL."""
    if "max_difference" in schema.get("properties", {}):
        return float(params.get("max_difference", MAX_RESIDUAL))
    return MAX_RESIDUAL


def bake_segment(project: Project, segment: str, tracks: Tracks, tool: str, actor: str = "person",
                 scene: Scene | None = None, max_residual: float = MAX_RESIDUAL) -> Tracks:
    """Gate, complete, pin and store a segment's tracks; returns what was stored."""
    scene = scene or load_scene(project)
    require_storyboards(project, segment, scene)
    a, b = (get_state(project, sid) for sid in parse_segment(segment))
    pa, pb = a.pose.completed(scene), b.pose.completed(scene)
    full = complete(scene, tracks, pa, pb, a.frame, b.frame)
    pinned, residual = pin(full, pa, pb)
    round_to_limits(scene, pinned)
    if residual > max_residual:
        raise ValueError(f"segment {segment}: the {tool} tracks miss their states by {residual:.3f} "
                         f"(m or rad, more than {max_residual}); aim the tool at the approved states")
    film.save_segment(project, segment, pinned, tool, bounds_hash(project, segment, scene), actor=actor)
    return pinned
