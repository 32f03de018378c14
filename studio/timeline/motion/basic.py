"""The simplest motion tools: eased in-betweens between the two states, and a hold."""
from __future__ import annotations

from studio.scene.pose import Tracks

from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.motion import Authored, MotionError, MotionTool, Segment, register

EASES = ["linear", "ease_in", "ease_out", "ease_in_out"]


def interpolate(seg: Segment, params: dict) -> Authored:
    rotation = params.get("rotation", "squad")
    tracks = interpolate_poses(seg.scene, [(seg.a.frame, seg.a.pose), (seg.b.frame, seg.b.pose)], rotation=rotation)
    return Authored(tracks)


def hold(seg: Segment, params: dict) -> Authored:
    """Stay in the first state, then move to the second over the last `blend` frames."""
    blend = int(params.get("blend", 0))
    if blend >= seg.frames:
        raise MotionError(f"hold {seg.id}: blend of {blend} frames does not fit in {seg.frames} frames")
    pa = seg.a.pose.completed(seg.scene)
    if blend == 0:
        if seg.a.pose.completed(seg.scene).to_dict() != seg.b.pose.completed(seg.scene).to_dict():
            raise MotionError(f"hold {seg.id}: the two states differ; give 'blend' frames to move between them")
        return Authored(Tracks.from_poses(seg.a.frame, [pa] * seg.frames))
    start = seg.b.frame - blend
    held = Tracks.from_poses(seg.a.frame, [pa] * (start - seg.a.frame))
    moved = interpolate_poses(seg.scene, [(start, pa), (seg.b.frame, seg.b.pose)])
    return Authored(Tracks.from_poses(seg.a.frame, [held.pose_at(f) for f in held.frames] +
                                      [moved.pose_at(f) for f in moved.frames]))


register(MotionTool(
    "interpolate", "Eased in-betweens from the first state to the second (positions by cubic, "
    "rotations by squad or slerp, joints by cubic).",
    {"type": "object", "additionalProperties": False,
     "properties": {"rotation": {"type": "string", "enum": ["squad", "slerp"], "default": "squad"}}},
    interpolate))

register(MotionTool(
    "hold", "Hold the first state; with 'blend', move to the second over the segment's last frames.",
    {"type": "object", "additionalProperties": False,
     "properties": {"blend": {"type": "integer", "minimum": 0, "maximum": 100000, "default": 0}}},
    hold))
