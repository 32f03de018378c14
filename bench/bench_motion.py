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
3. Operate: a turret arm opens a hinged cabinet door by its knob from 0 to 1.2 rad over 96
   frames (the door film of tests/hold_films.py, built through the tool layer) with `operate`
   (the part's joint eased, the arm solved by IK onto the knob every frame, then the worst miss
   measured by forward kinematics); baseline, side by side: `ik_reach` on the same arm, states
   and frames, its hand following the moving knob (the same per-frame IK, no closed loop).
   Then the robot pulling a drawer 25 cm while it walks back 25 cm (`operate` with `walk`)
   against the `walk` tool alone on the same steps. Figures: frames per second and the ratios.
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
    import os
    n = int(argv[0]) if argv else 3
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
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
    operate_figures(cache, n)
    return 0


def operate_figures(cache: Path, n: int) -> None:
    from hold_films import ARM_R, CHAIN, door_film, holding, robot_and_chest

    from studio.scene.io import load_scene
    from studio.timeline.author import segment_of
    door = door_film(cache / "door", frames=96, opened=1.2)
    scene = load_scene(door)
    seg = segment_of(door, "closed..open", scene, door.get_doc("plan"))
    op, reach = motion_tool("operate"), motion_tool("ik_reach")
    oparams = {"part": "door", "handle": "handle", "effectors": [{"frame": "gripper", "joints": CHAIN}]}
    rparams = {"effectors": [{"frame": "gripper", "joints": CHAIN, "target": "handle"}]}
    t_op = best(lambda: op.author(seg, oparams), n)
    t_reach = best(lambda: reach.author(seg, rparams), n)
    door.close()
    print(f"operate: door {seg.frames / t_op:.0f} frames/s ({t_op:.2f} s for {seg.frames} frames); baseline ik_reach "
          f"following the knob on the same arm {seg.frames / t_reach:.0f} frames/s ({t_reach:.2f} s); "
          f"ratio operate/ik_reach time {t_op / t_reach:.2f}")
    robot = robot_and_chest()
    wseg = segment(robot, holding(robot, 0.0, 0.0), holding(robot, -0.25, 0.25), 72, cache)
    walk_params = {"root": "pelvis", "legs": ROBOT_LEGS, "step_length": 0.15}
    pulling = {"part": "drawer", "handle": "pull", "effectors": [{"frame": "gripper_r", "joints": ARM_R}],
               "walk": walk_params}
    op.author(wseg, pulling)
    t_pull = best(lambda: op.author(wseg, pulling), n)
    t_walk = best(lambda: motion_tool("walk").author(wseg, walk_params), n)
    print(f"operate while walking: robot pulling a drawer {wseg.frames / t_pull:.0f} frames/s ({t_pull:.2f} s); "
          f"baseline the walk alone on the same steps {wseg.frames / t_walk:.0f} frames/s ({t_walk:.2f} s); "
          f"ratio {t_pull / t_walk:.2f}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
