"""Footstep planning for bipeds: alternating steps, planted feet, a balanced centre of mass.

A walk from the feet's start placements to a goal is a list of Steps; each foot
alternately lifts, swings along an arc of `step_height` and lands, and between
steps both feet are planted (double support). Planted feet do not move at all
(sole z = 0). The centre of mass is planned over the support polygon: over the
stance foot's centre while the other foot swings, and moving along the line
between the two foot centres while both are planted, so it is inside the
convex hull of the planted feet on every frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from studio.timeline.motion.easing import ease


MARGIN = 0.01        # metres the planned centre of mass keeps inside the stance foot


@dataclass
class Step:
    foot: str                  # "l" or "r"
    lift: int                  # last frame on the floor before swinging
    land: int                  # first frame planted again
    start: np.ndarray          # (x, y, yaw) where the foot leaves
    end: np.ndarray            # (x, y, yaw) where it lands


@dataclass
class FootPlan:
    frame_start: int
    frame_end: int
    start: dict[str, np.ndarray]
    steps: list[Step] = field(default_factory=list)
    foot_size: tuple[float, float] = (0.22, 0.1)     # sole length (along yaw) and width

    def placement(self, foot: str, frame: int) -> np.ndarray:
        """Where a foot is planted last at or before `frame` (x, y, yaw)."""
        p = self.start[foot]
        for s in self.steps:
            if s.foot == foot and s.land <= frame:
                p = s.end
        return p


def plan_footsteps(left, right, goal, frame_start: int, frame_end: int, step_length: float = 0.35,
                   first: str = "l", foot_size: tuple[float, float] = (0.22, 0.1),
                   facing: float | None = None) -> FootPlan:
    """Steps taking the feet from (x, y, yaw) `left`/`right` to stand side by side with their
    midpoint at `goal` (x, y), facing the walking direction, or `facing` (radians) throughout:
    a character without hip yaw sidesteps and walks diagonally that way."""
    start = {"l": np.asarray(left, float), "r": np.asarray(right, float)}
    mid = (start["l"][:2] + start["r"][:2]) / 2
    d = np.asarray(goal, float)[:2] - mid
    dist = float(np.linalg.norm(d))
    plan = FootPlan(frame_start, frame_end, start, foot_size=foot_size)
    if dist < 1e-6:
        return plan
    heading = math.atan2(d[1], d[0]) if facing is None else float(facing)
    u, n = d / dist, np.array([-math.sin(heading), math.cos(heading)])
    half_w = abs(float(np.dot(start["l"][:2] - start["r"][:2], n))) / 2 or 0.1
    order = [first, "r" if first == "l" else "l"]
    moves = max(2, math.ceil(dist / (step_length / 2)) + 1)
    while True:                       # fewest steps with no foot moving more than step_length
        ends = []
        for i in range(moves):
            foot = order[i % 2]
            along = dist if i == moves - 1 else (i + 1) * dist / (moves - 1)
            side = half_w if foot == "l" else -half_w
            ends.append((foot, np.array([*(mid + along * u + side * n), heading])))
        cur = dict(start)
        longest = 0.0
        for foot, end in ends:
            longest = max(longest, float(np.linalg.norm(end[:2] - cur[foot][:2])))
            cur[foot] = end
        if longest <= step_length + 1e-9 or moves > 500:
            break
        moves += 1
    c = (frame_end - frame_start) / (moves + 0.6)
    if 0.6 * c < 2:
        raise ValueError(f"footsteps: {moves} steps do not fit in frames {frame_start}..{frame_end}; "
                         f"allow more frames or longer steps")
    cur = dict(start)
    for i, (foot, end) in enumerate(ends):
        t0 = frame_start + 0.5 * c + i * c
        plan.steps.append(Step(foot, int(round(t0)), int(round(t0 + 0.6 * c)), cur[foot].copy(), end))
        cur[foot] = end
    return plan


def foot_tracks(plan: FootPlan, step_height: float = 0.08) -> dict[str, np.ndarray]:
    """Per foot, (F, 4) sole x, y, z, yaw at every frame; planted frames are constant, z = 0."""
    frames = np.arange(plan.frame_start, plan.frame_end + 1)
    out = {f: np.tile([*plan.start[f][:2], 0.0, plan.start[f][2]], (len(frames), 1)) for f in ("l", "r")}
    for s in plan.steps:
        i0, i1 = s.lift - plan.frame_start, s.land - plan.frame_start
        t = np.clip((frames - s.lift) / (s.land - s.lift), 0, 1)
        h = ease(t)[:, None]
        turn = (s.end[2] - s.start[2] + math.pi) % (2 * math.pi) - math.pi
        yaw0 = s.start[2]
        yaw1 = s.end[2] if abs(turn - (s.end[2] - s.start[2])) < 1e-9 else yaw0 + turn
        xy = s.start[:2] + h * (s.end[:2] - s.start[:2])
        z = step_height * np.sin(math.pi * t)
        yaw = yaw0 + h[:, 0] * (yaw1 - yaw0)
        sel = frames >= s.lift
        out[s.foot][sel] = np.column_stack([xy, z, yaw])[sel]
        out[s.foot][i1:] = [*s.end[:2], 0.0, yaw1]
        out[s.foot][i0] = out[s.foot][i0 - 1] if i0 > 0 else [*s.start[:2], 0.0, yaw0]
    return out


def contacts(plan: FootPlan) -> dict[str, list[tuple[int, int]]]:
    """Per foot, the frame ranges (inclusive) it is planted."""
    out = {}
    for f in ("l", "r"):
        spans, begin = [], plan.frame_start
        for s in plan.steps:
            if s.foot == f:
                spans.append((begin, s.lift))
                begin = s.land
        spans.append((begin, plan.frame_end))
        out[f] = spans
    return out


def planted(plan: FootPlan, frame: int) -> list[str]:
    return [f for f, spans in contacts(plan).items() if any(a <= frame <= b for a, b in spans)]


def com_path(plan: FootPlan, sway: float = 1.0) -> np.ndarray:
    """(F, 2) planned centre of mass: over the stance foot in single support (`sway` of the
    way there from the feet's midpoint, never nearer its edge than MARGIN), between the feet in double support."""
    def centre(p):
        return np.asarray(p[:2], float)
    keys = [(plan.frame_start, (centre(plan.start["l"]) + centre(plan.start["r"])) / 2)]
    for s in plan.steps:
        other = "r" if s.foot == "l" else "l"
        placed = plan.placement(other, s.lift)
        stance = centre(placed)
        lean = (1 - sway) * ((stance + centre(s.start)) / 2 - stance)
        c, sn = math.cos(placed[2]), math.sin(placed[2])
        along, across = lean @ [c, sn], lean @ [-sn, c]          # in the stance foot's frame
        room = (plan.foot_size[0] / 2 - MARGIN, plan.foot_size[1] / 2 - MARGIN)
        k = min(1.0, room[0] / max(abs(along), 1e-12), room[1] / max(abs(across), 1e-12))
        keys += [(s.lift, stance + k * lean), (s.land, stance + k * lean)]
    keys.append((plan.frame_end, (centre(plan.placement("l", plan.frame_end))
                                  + centre(plan.placement("r", plan.frame_end))) / 2))
    frames = np.arange(plan.frame_start, plan.frame_end + 1)
    out = np.zeros((len(frames), 2))
    for (f0, p0), (f1, p1) in zip(keys, keys[1:]):
        sel = (frames >= f0) & (frames <= f1)
        t = ease((frames[sel] - f0) / max(f1 - f0, 1))[:, None]
        out[sel] = p0 + t * (p1 - p0)
    return out


def foot_corners(x: float, y: float, yaw: float, size: tuple[float, float]) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    hl, hw = size[0] / 2, size[1] / 2
    local = np.array([[hl, hw], [hl, -hw], [-hl, -hw], [-hl, hw]])
    return local @ np.array([[c, s], [-s, c]]) + [x, y]


def _cross(a, b) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def support_polygon(points: np.ndarray) -> np.ndarray:
    """Convex hull (counter-clockwise) of 2D points (Andrew's monotone chain)."""
    pts = sorted(map(tuple, np.asarray(points, float)))

    def half(seq):
        h = []
        for p in seq:
            while len(h) >= 2 and _cross(np.subtract(h[-1], h[-2]), np.subtract(p, h[-2])) <= 0:
                h.pop()
            h.append(p)
        return h[:-1]
    return np.array(half(pts) + half(pts[::-1]))


def inside(point, hull: np.ndarray, margin: float = 0.0) -> bool:
    """True if `point` is inside the convex polygon, at least `margin` from every edge."""
    p = np.asarray(point, float)
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        edge = b - a
        if _cross(edge, p - a) / np.linalg.norm(edge) < margin - 1e-9:
            return False
    return True
