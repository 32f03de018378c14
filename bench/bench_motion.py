"""Motion tool speed: the walk tool's frames per second, and the simulate tool against MuJoCo
called directly on the same model.

1. Walk: the robot walks 1.2 m (72 frames) and the dog 0.7 m (72 frames) with the `walk`
   tool (footstep plan, per-frame leg IK, then the foot-slide and balance measurements);
   baseline, side by side: the timeline's older biped walk (studio.timeline.motion.walk_feet.walk with
   studio.timeline.motion.footsteps) over the same robot distance and frames, which plans and solves
   but measures nothing. Figures: frames per second, and the ratio.
2. Simulate: four bodies (two crates, a ball, a capsule) dropped on a floor beside a cup, 72
   frames at 20 substeps, with the `simulate` tool (its whole author call: materials, hulls,
   the MJCF, the run with its NaN and bounds checks, the end-state comparison); baseline: the
   same MJCF text loaded into MuJoCo and stepped directly, reading the same poses. Figures:
   seconds per run (best of N) and the overhead ratio tool / direct.
Run: .venv/bin/python bench/bench_motion.py [N]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from motion_scenes import DOG_LEGS, ROBOT_LEGS, dog_scene, dog_standing, robot_scene, robot_standing, segment  # noqa: E402
from test_motion_simulate import BODIES, drop_scene  # noqa: E402

from studio.scene.pose import Pose  # noqa: E402
from studio.timeline.motion.footsteps import plan_footsteps  # noqa: E402
from studio.timeline.motion import motion_tool  # noqa: E402
from studio.timeline.motion.simulate import setup_of  # noqa: E402
from studio.timeline.motion.simulate_mujoco import mjcf  # noqa: E402
from studio.timeline.motion.walk_feet import walk  # noqa: E402


def best(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 3
    cache = Path(tempfile.mkdtemp(prefix="bench_motion_"))
    frames = 72
    robot = robot_scene()
    pa, pb = robot_standing(robot, 0.0), robot_standing(robot, 1.2)
    seg = segment(robot, pa, pb, frames, cache)
    tool = motion_tool("walk")
    params = {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.4}
    tool.author(seg, params)                                    # meshes built and cached once
    t_robot = best(lambda: tool.author(seg, params), n)
    dog = dog_scene()
    dseg = segment(dog, dog_standing(dog, -1.0), dog_standing(dog, -0.3), frames, cache)
    dparams = {"root": "torso", "legs": DOG_LEGS, "step_length": 0.25}
    tool.author(dseg, dparams)
    t_dog = best(lambda: tool.author(dseg, dparams), n)

    legs = {f"sole_{s}": (ROBOT_LEGS[i]["joints"], f"sole_{s}") for i, s in enumerate("lr")}

    def old_walk():
        plan = plan_footsteps([0.05, 0.09, 0.0], [0.05, -0.09, 0.0], [1.25, 0.0], 1001, 1001 + frames - 1,
                              step_length=0.4, foot_size=(0.22, 0.09))
        renamed = {"l": legs["sole_l"], "r": legs["sole_r"]}
        walk(robot, pa, "pelvis", renamed, plan, np.full(frames, 0.67), np.array([-0.05, 0.0]), 0.05, sway=None)
    t_old = best(old_walk, n)
    print(f"walk: robot {frames / t_robot:.0f} frames/s ({t_robot:.2f} s), dog {frames / t_dog:.0f} frames/s "
          f"({t_dog:.2f} s); baseline older biped walk {frames / t_old:.0f} frames/s ({t_old:.2f} s); "
          f"ratio tool/baseline time (robot) {t_robot / t_old:.2f}")

    scene = drop_scene()
    start = Pose.rest(scene)
    sseg = segment(scene, start, start, frames, cache)
    sparams = {"bodies": BODIES, "max_difference": 100.0}
    sim = motion_tool("simulate")
    sim.author(sseg, sparams)                                   # hulls and convex parts built once
    t_tool = best(lambda: sim.author(sseg, sparams), n)
    setup = setup_of(sseg, sparams)
    xml = mjcf(scene, start, setup, 1.0 / (24 * setup.substeps), cache)

    def direct():
        model = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        ids = [model.body(b).id for b in BODIES]
        out = np.zeros((frames, len(ids), 7))
        for f in range(frames):
            if f:
                mujoco.mj_step(model, data, nstep=setup.substeps)
            out[f, :, :3] = data.xpos[ids]
            out[f, :, 3:] = data.xquat[ids]
        return out
    t_direct = best(direct, n)
    print(f"simulate: tool {t_tool * 1000:.1f} ms per {frames}-frame run, MuJoCo directly on the same model "
          f"{t_direct * 1000:.1f} ms; overhead ratio {t_tool / t_direct:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
