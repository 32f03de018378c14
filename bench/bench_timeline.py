"""Timeline speed: IK solves on the doorway robot, and baking a walk.

1. IK: N arm solves (gripper to a target in front of the robot, 3 shoulder/elbow
   joints, from a cold start) with the timeline's solver, which evaluates each
   finite-difference batch with a chain FK whose constant parts are precomputed;
   baseline, side by side: the same solver with each batch evaluated by the
   generic studio.scene.kinematics.forward on the same bodies.
   Both must reach every target within 1 mm.
2. A walk: the doorway's tilt..through segment authored by the `carry` tool its plan
   names (121 frames: footsteps, leg IK per frame, the panel on the pelvis, hands
   following it by IK, slide and balance measured), frames per second.
Run: .venv/bin/python bench/bench_timeline.py [N]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from studio.examples.pipeline import replay_stages
from studio.scene.io import load_scene
from studio.scene.kinematics import forward
from studio.scene.pose import Pose
from studio.timeline.motion import ik
from studio.timeline.motion.ik import Goal, frame_pose, solve_ik
from studio.timeline.motion import Segment, motion_tool
from studio.timeline.author import segment_tool
from studio.timeline.storyboard import get_state

ARM_L = ["shoulder_pitch_l", "shoulder_roll_l", "elbow_l"]


class GenericFK:
    """Swap the solver's chain FK for studio.scene.kinematics.forward (the baseline)."""

    def __enter__(self):
        self.saved = ik._chain, ik._chain_world
        ik._chain = lambda sub, pose, moving: (sub, pose, moving)

        def world(chain, qs):
            sub, pose, moving = chain
            roots = {k: np.asarray(v, float)[None] for k, v in pose.roots.items() if k in sub.body_names}
            joints = {k: np.broadcast_to(np.asarray(v, float), (len(qs),)) for k, v in pose.joints.items()}
            joints.update({name: qs[:, k] for name, (k, d) in moving.items()})
            return forward(sub, roots, joints, len(qs))
        ik._chain_world = world
        return self

    def __exit__(self, *exc):
        ik._chain, ik._chain_world = self.saved


def main(n: int = 200) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench_timeline_"))
    project = replay_stages("doorway", folder / "doorway", ("scene", "plan", "storyboard"))  # its calls file
    scene = load_scene(project)
    pose = Pose.rest(scene)
    for s in "lr":
        pose.joints[f"shoulder_pitch_{s}"], pose.joints[f"elbow_{s}"] = -1.0, -0.6
    shoulder = frame_pose(scene, pose, "shoulder_l")[:3, 3]
    rng = np.random.default_rng(7)
    targets = shoulder + np.column_stack([rng.uniform(0.25, 0.38, n), rng.uniform(-0.05, 0.12, n),
                                          rng.uniform(-0.2, 0.05, n)])
    def solve(t):
        return solve_ik(scene, pose, ARM_L, [Goal("gripper_l", t)])[0]

    for name in ("timeline", "baseline"):
        t0 = time.perf_counter()
        if name == "baseline":
            with GenericFK():
                solved = [solve(t) for t in targets]
        else:
            solved = [solve(t) for t in targets]
        dt = time.perf_counter() - t0
        worst = max(np.linalg.norm(frame_pose(scene, p, "gripper_l")[:3, 3] - t) for p, t in zip(solved, targets))
        print(f"ik {name:<9} {n / dt:8.1f} solves/s   worst miss {worst * 1000:.3f} mm")
        if name == "timeline":
            fast = dt
    print(f"ik speed-up over baseline: {dt / fast:.1f}x")
    a, b, plan = get_state(project, "tilt"), get_state(project, "through"), project.get_doc("plan")
    tool, params = segment_tool(plan, "tilt..through")
    seg = Segment("tilt..through", scene, a, b, plan, 24, folder)
    motion_tool(tool).author(seg, params)                 # meshes built and cached first
    t0 = time.perf_counter()
    tracks = motion_tool(tool).author(seg, params).tracks
    dt = time.perf_counter() - t0
    print(f"walk tilt..through: {tracks.n_frames} frames in {dt:.2f} s ({tracks.n_frames / dt:.1f} frames/s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
