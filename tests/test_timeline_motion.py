"""Motion tools: IK, interpolation, bake hitting states, footsteps, carry, simulation."""
from __future__ import annotations

import math

import numpy as np
import pytest
from timeline_scenes import arm_scene, author_arm

from studio.scene.kinematics import tracks_world
from studio.scene.pose import Pose, Tracks
from studio.scene.transforms import from_7, quat_from_axis_angle
from studio.timeline import film
from studio.timeline.bake import bake_segment, hits_states
from studio.timeline.motion.carry import carry, handle_targets
from studio.timeline.motion.footsteps import (com_path, contacts, foot_corners, foot_tracks, inside, plan_footsteps,
                                       planted, support_polygon)
from studio.timeline.gate import GateError
from studio.timeline.motion.ik import Goal, bend_angle, frame_pose, solve_ik, solve_limb, two_bone
from studio.timeline.motion.easing import interpolate_poses, slerp_keys, squad
from studio.timeline.motion.planar_pymunk import Mechanism, Plane, simulate_planar
from studio.timeline.motion.simulate_mujoco import simulate_rigid
from studio.timeline.storyboard import get_state


@pytest.mark.parametrize("target", [(0.3, 0.5, 0.3), (0.6, -0.2, 0.3), (-0.2, 0.55, 0.3), (0.85, 0.1, 0.3)])
def test_ik_reaches_target_within_a_millimetre_inside_limits(target):
    scene = arm_scene()
    pose, err = solve_ik(scene, Pose.rest(scene), ["yaw", "elbow"], [Goal("tip", np.array(target))])
    tip = frame_pose(scene, pose, "tip")[:3, 3]
    assert np.linalg.norm(tip - target) < 1e-3 and err < 1e-3
    assert -2 <= pose.joints["yaw"] <= 2 and 0 <= pose.joints["elbow"] <= 2.5


def test_ik_respects_limits_when_target_needs_more():
    """The tip can reach (0, -0.5) only with the elbow bent backwards (below 0): the
    solver stays inside the limits and reports how far it is."""
    scene = arm_scene()
    pose, err = solve_ik(scene, Pose.rest(scene), ["yaw", "elbow"], [Goal("tip", np.array([-0.3, -0.5, 0.3]))])
    assert -2 <= pose.joints["yaw"] <= 2 and 0 <= pose.joints["elbow"] <= 2.5
    tip = frame_pose(scene, pose, "tip")[:3, 3]
    assert err == pytest.approx(np.linalg.norm(tip - [-0.3, -0.5, 0.3]), abs=1e-6) and err > 0.05


def test_two_bone_law_of_cosines_and_pole():
    mid, end, reached = two_bone([0, 0, 1], [0.4, 0, 0.6], 0.3, 0.3, pole=[1, 0, 1])
    assert reached and np.allclose(end, [0.4, 0, 0.6])
    assert np.linalg.norm(mid - [0, 0, 1]) == pytest.approx(0.3) and np.linalg.norm(end - mid) == pytest.approx(0.3)
    assert mid[0] > 0.2                                        # the knee points at the pole
    assert bend_angle(0.3, 0.3, 0.6) == pytest.approx(0.0) and bend_angle(0.3, 0.3, 0.3) == pytest.approx(2 * math.pi / 3)
    _, far, reached = two_bone([0, 0, 1], [0, 0, -1], 0.3, 0.3, pole=[1, 0, 0])
    assert not reached and np.linalg.norm(far - [0, 0, 1]) == pytest.approx(0.6)


def test_solve_limb_reaches_target():
    scene = arm_scene()
    pose, err = solve_limb(scene, Pose.rest(scene), ["yaw", "elbow"], "tip", np.array([0.3, -0.5, 0.3]),
                           pole=np.array([1.0, -1.0, 0.3]))
    assert err < 1e-3 and 0 <= pose.joints["elbow"] <= 2.5


def test_interpolation_hits_keys_exactly_and_eases():
    scene = arm_scene()
    a, b, c = (Pose.rest(scene) for _ in range(3))
    b.joints["elbow"], c.joints["elbow"] = 1.0, 0.5
    b.roots["crate"] = [2.5, 2, 0.1, *quat_from_axis_angle(np.array([0, 0, 1.0]), np.array(1.0))]
    tr = interpolate_poses(scene, [(1001, a), (1013, b), (1031, c)])
    assert tr.frame_start == 1001 and tr.frame_end == 1031
    for f, p in ((1001, a), (1013, b), (1031, c)):
        got = tr.pose_at(f)
        assert got.joints["elbow"] == p.joints["elbow"] and got.roots["crate"] == list(map(float, p.roots["crate"]))
    e = tr.joints["elbow"]
    assert abs(e[1] - e[0]) < abs(e[6] - e[5])                      # eases in
    q = squad(np.array([0, 10, 20.0]), np.array([[1, 0, 0, 0], [0.8775826, 0, 0, 0.4794255], [1, 0, 0, 0.0]]),
              np.arange(21))
    assert np.allclose(np.linalg.norm(q, axis=1), 1) and np.allclose(q[10], [0.8775826, 0, 0, 0.4794255])
    s = slerp_keys(np.array([0, 10.0]), np.array([[1, 0, 0, 0], [0, 0, 0, 1.0]]), np.array([5.0]))
    assert np.allclose(s[0], [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])


def test_bake_pins_tracks_to_states_exactly(tmp_project):
    scene = author_arm(tmp_project)
    a, b = get_state(tmp_project, "rest"), get_state(tmp_project, "bent")
    rough = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
    rough.joints["elbow"] = rough.joints["elbow"] + 0.004               # an IK tolerance, say
    rough.roots.pop("crate")                                            # the tool left the crate alone
    stored = bake_segment(tmp_project, "rest..bent", rough, "test")
    assert hits_states(stored, a.pose.completed(scene), b.pose.completed(scene))
    back = film.load_segment(tmp_project, "rest..bent")
    assert back.pose_at(1001).joints["elbow"] == 0.0 and back.pose_at(1024).joints["elbow"] == 1.2
    assert np.allclose(back.roots["crate"], back.roots["crate"][0], atol=1e-12)   # filled from the states
    rough.joints["elbow"] = rough.joints["elbow"] + 0.5
    with pytest.raises(ValueError, match="miss their states by 0.50"):
        bake_segment(tmp_project, "rest..bent", rough, "test")


def test_bake_refused_by_gate(tmp_project):
    scene = author_arm(tmp_project, approve=False)
    tr = interpolate_poses(scene, [(1001, Pose.rest(scene)), (1024, Pose.rest(scene))])
    with pytest.raises(GateError) as e:
        bake_segment(tmp_project, "rest..bent", tr, "interpolate")
    assert [sid for sid, _ in e.value.reasons] == ["rest", "bent"]
    assert film.list_segments(tmp_project) == []


def test_footsteps_keep_com_over_support_and_feet_planted():
    plan = plan_footsteps([0, 0.1, 0], [0, -0.1, 0], [1.6, 0.4], 1001, 1120, step_length=0.35)
    feet = foot_tracks(plan, step_height=0.08)
    com = com_path(plan, sway=0.6)
    feet_order = [s.foot for s in plan.steps]
    assert feet_order[0] == "l" and all(a != b for a, b in zip(feet_order, feet_order[1:]))
    assert all(np.linalg.norm(s.end[:2] - s.start[:2]) <= 0.35 + 1e-9 for s in plan.steps)
    for i, f in enumerate(range(1001, 1121)):
        down = planted(plan, f)
        assert down, f"frame {f}: no foot on the floor"
        corners = np.vstack([foot_corners(*feet[k][i][[0, 1, 3]], plan.foot_size) for k in down])
        assert inside(com[i], support_polygon(corners)), f"frame {f}: centre of mass outside support"
        for k in down:
            assert feet[k][i][2] == 0.0
    for foot, spans in contacts(plan).items():
        for a, b in spans:                                              # planted feet do not slide
            seg = feet[foot][a - 1001:b - 1001 + 1]
            assert np.all(seg == seg[0])
    assert np.allclose((feet["l"][-1, :2] + feet["r"][-1, :2]) / 2, [1.6, 0.4])
    assert max(feet["l"][:, 2]) == pytest.approx(0.08, abs=0.005)


def test_carry_keeps_body_on_hand_then_places_it():
    scene = arm_scene()
    frames = np.arange(1001, 1031)
    hand = from_7(np.column_stack([np.linspace(0, 1, 30), np.zeros(30), np.full(30, 0.5), np.ones(30),
                                   np.zeros((30, 3))]))
    body = np.tile([0.0, 0.0, 0.4, 1, 0, 0, 0], (30, 1))
    out = carry(body, hand, frames, grasp=1005, release=1020)
    assert np.allclose(out[:4], body[:4])
    # the body keeps its grasp-time offset from the hand (x -0.138, z -0.1) while carried
    assert np.allclose(out[4:20, 0], hand[4:20, 0, 3] - hand[4, 0, 3]) and np.allclose(out[4:20, 2], 0.4)
    assert np.allclose(out[20:], out[19])
    tops = handle_targets(scene, np.tile([2, 2, 0.1, 1, 0, 0, 0], (3, 1)), "crate_top")
    assert np.allclose(tops[:, :3, 3], [2, 2, 0.2])


def test_rigid_simulation_is_deterministic_and_lands():
    scene = arm_scene()
    pose = Pose.rest(scene)
    pose.roots["crate"] = [2, 2, 0.6, 1, 0, 0, 0]
    runs = [simulate_rigid(scene, pose, ["crate"], 1001, 36, velocities={"crate": ([0.4, 0, 0], [0, 0, 0])})
            for _ in range(2)]
    assert runs[0].hash() == runs[1].hash()
    np.testing.assert_array_equal(runs[0].roots["crate"], runs[1].roots["crate"])
    end = runs[0].roots["crate"][-1]
    assert end[2] == pytest.approx(0.1, abs=2e-3)                        # resting on the floor
    assert end[0] > 2.05 and runs[0].roots["crate"][0].tolist() == pose.roots["crate"]


def test_planar_marble_on_ramp_and_gears_repeat():
    from studio.scene.ir import Scene
    a = math.radians(15)
    scene = Scene.from_dict({"name": "ramp", "bodies": [
        {"name": "floor", "kind": "ground", "geometry": {"size": [8, 1, 0.1], "offset": {"position": [0, 0, -0.05]}}},
        {"name": "ramp", "kind": "static", "geometry": {"size": [1.0, 0.2, 0.02]}},
        {"name": "marble", "geometry": {"size": [0.04, 0.04, 0.04]}, "mass": 0.05},
        {"name": "gear_a", "geometry": {"size": [0.2, 0.02, 0.2]}}, {"name": "gear_b", "geometry": {"size": [0.1, 0.02, 0.1]}}],
        "rest": {"ramp": [0, 0, 0.3, math.cos(a / 2), 0, math.sin(a / 2), 0], "marble": [0.4, 0, 0.45, 1, 0, 0, 0],
                 "gear_a": [-1.5, 0, 0.6, 1, 0, 0, 0], "gear_b": [-1.35, 0, 0.6, 1, 0, 0, 0]}})
    mech = Mechanism({"marble": "circle", "gear_a": "circle", "gear_b": "circle"},
                     pivots={"gear_a": (-1.5, 0.6), "gear_b": (-1.35, 0.6)}, gears=[("gear_a", "gear_b", -2.0)],
                     velocities={"gear_a": (0, 0, 1.0)}, obstacles=["floor", "ramp"])
    runs = [simulate_planar(scene, Pose.rest(scene), mech, Plane(), 1001, 48) for _ in range(2)]
    assert runs[0].hash() == runs[1].hash()
    m = runs[0].roots["marble"]
    assert m[-1, 0] > 0.6 and m[-1, 2] == pytest.approx(0.02, abs=2e-3)   # rolled down +x onto the floor
    assert np.all(m[:, 1] == 0.0)                                          # stays in the plane
    world = tracks_world(scene, runs[0])
    ang_a = math.atan2(world["gear_a"][-1, 2, 0], world["gear_a"][-1, 0, 0])
    ang_b = math.atan2(world["gear_b"][-1, 2, 0], world["gear_b"][-1, 0, 0])
    assert ang_a == pytest.approx(-2.0 * ang_b, abs=1e-3) and abs(ang_a) > 0.5
    assert np.allclose(runs[0].roots["gear_a"][:, :3], [-1.5, 0, 0.6])


def test_sidesteps_keep_com_inside_stance_foot():
    plan = plan_footsteps([0, 0.09, 0], [0, -0.09, 0], [0, -0.75], 1001, 1049, step_length=0.35, first="r",
                          facing=0.0)
    feet, com = foot_tracks(plan), com_path(plan, sway=0.6)
    assert np.allclose(feet["l"][:, 3], 0) and np.allclose(feet["r"][:, 3], 0)     # facing stays +X
    assert np.allclose(feet["r"][-1, :2], [0, -0.84]) and np.allclose(feet["l"][-1, :2], [0, -0.66])
    for i, f in enumerate(range(1001, 1050)):
        corners = np.vstack([foot_corners(*feet[k][i][[0, 1, 3]], plan.foot_size) for k in planted(plan, f)])
        assert inside(com[i], support_polygon(corners), margin=0.005), f


def test_simulated_drop_baked_between_states(tmp_project):
    """A crate dropped from its approved start state; the settled pose becomes the next state,
    is approved, and the simulation bakes through the gate hitting both exactly."""
    from studio.scene.io import save_scene
    from studio.timeline.reviews import record_review
    from studio.timeline.storyboard import State, put_state
    from timeline_scenes import check_state
    scene = arm_scene()
    save_scene(tmp_project, scene)
    start = Pose.rest(scene)
    start.roots["crate"] = [2, 2, 0.5, 1, 0, 0, 0]
    sim = simulate_rigid(scene, start, ["crate"], 1001, 30)
    landed = start.copy()
    landed.roots["crate"] = sim.roots["crate"][-1].tolist()
    for sid, frame, pose in (("held", 1001, start), ("landed", 1030, landed)):
        put_state(tmp_project, scene, State(sid, frame, pose))
        check_state(tmp_project, sid)
        record_review(tmp_project, sid, "approve", "", "ana", scene)
    stored = bake_segment(tmp_project, "held..landed", sim, "simulate")
    np.testing.assert_allclose(stored.roots["crate"], sim.roots["crate"], atol=1e-12)   # already on both keys
    held_s, landed_s = (get_state(tmp_project, sid).pose.completed(scene) for sid in ("held", "landed"))
    assert hits_states(stored, held_s, landed_s)
    assert film.list_segments(tmp_project)[0]["tool"] == "simulate"
