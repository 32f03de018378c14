"""Supported (floating) and the scorer's floating rate on films whose support is known by construction."""
from __future__ import annotations

import numpy as np
import pytest

from checks_films import box, meshes, scene, still, tracks
from studio.checks.run import run_checks


def by_name(sc, tr, **kw):
    return {r.name: r for r in run_checks(sc, meshes(sc), tr, **kw)}


def floating(report):
    return sorted((e["frame"], e["body"]) for e in report.evidence)


GROUND = box("ground", [4, 4, 0.1], kind="ground")


def test_stack_top_box_is_supported_through_the_middle_one():
    sc = scene([GROUND, box("low", [0.3, 0.3, 0.2]), box("mid", [0.2, 0.2, 0.2]), box("top", [0.1, 0.1, 0.1])])
    r = by_name(sc, tracks(ground=still([0, 0, -0.05]), low=still([0, 0, 0.1]), mid=still([0, 0, 0.3]),
                           top=still([0.02, 0, 0.45])))
    assert r["Supported"].verdict == "pass"
    assert r["Supported"].metrics["floating_rate"] == 0.0
    assert r["NoPenetration"].verdict == "pass"


def test_removing_the_middle_box_leaves_the_top_floating():
    sc = scene([GROUND, box("low", [0.3, 0.3, 0.2]), box("top", [0.1, 0.1, 0.1])])
    r = by_name(sc, tracks(ground=still([0, 0, -0.05]), low=still([0, 0, 0.1]), top=still([0, 0, 0.45])))
    assert floating(r["Supported"]) == [(1, "top")]
    assert r["Supported"].metrics["floating_rate"] == pytest.approx(0.5)


def test_free_fall_floats_until_it_lands():
    sc = scene([GROUND, box("ball", [0.1, 0.1, 0.1])])
    n, fps = 20, 24
    t = np.arange(n) / fps
    z = np.maximum(0.05, 1.0 - 0.5 * 9.81 * t ** 2)
    landed = np.nonzero(z <= 0.05)[0][0]
    ball = np.c_[np.zeros((n, 2)), z, np.tile([1, 0, 0, 0], (n, 1))]
    r = by_name(sc, tracks(1, ground=still([0, 0, -0.05], n=n), ball=ball))
    assert floating(r["Supported"]) == [(f + 1, "ball") for f in range(landed)]
    assert r["Supported"].metrics["floating_rate"] == pytest.approx(landed / n)


def test_self_propelled_flyer_is_exempt():
    sc = scene([GROUND, box("drone", [0.2, 0.2, 0.05], flags=["self_propelled"]), box("crate", [0.1, 0.1, 0.1])])
    r = by_name(sc, tracks(ground=still([0, 0, -0.05], n=3), drone=still([0, 0, 2.0], n=3),
                           crate=still([1, 0, 2.0], n=3)))
    assert floating(r["Supported"]) == [(1, "crate"), (2, "crate"), (3, "crate")]
    assert r["Supported"].metrics["body_frames"] == 3


def carry_film(with_release=True):
    """An arm whose gripper (1 cm off the cup's side; the arm itself never touches it) lifts a cup."""
    bodies = [GROUND, box("arm", [0.1, 0.1, 0.1], flags=["self_propelled"]), box("cup", [0.06, 0.06, 0.08])]
    sc = scene(bodies, frames=[{"name": "gripper", "body": "arm", "local": {"position": [-0.11, 0, 0]}}])
    n = 12
    arm = np.tile([0.15, 0, 0.04, 1, 0, 0, 0], (n, 1)).astype(float)
    cup = np.tile([0, 0, 0.04, 1, 0, 0, 0], (n, 1)).astype(float)
    arm[:3, 2] = [0.34, 0.19, 0.04]                 # comes down beside the cup (frames 1..3)
    arm[3:9, 2] = np.linspace(0.04, 0.55, 6)        # lifts it (frames 4..9)
    cup[3:9, 2] = arm[3:9, 2]
    arm[9:, 0] = 0.6                                # lets go and moves away (frames 10..12)
    arm[9:, 2] = 0.55
    cup[9:, 2] = 0.55                               # the cup is left in the air
    events = [{"id": "pick", "kind": "grasp", "subjects": ["gripper", "cup"], "window": [1, 4]}]
    if with_release:
        events.append({"id": "drop", "kind": "release", "subjects": ["gripper", "cup"], "window": [9, 10]})
    plan = {"events": events}
    return sc, tracks(1, ground=still([0, 0, -0.05], n=n), arm=arm, cup=cup), plan


def test_carried_body_is_supported_between_grasp_and_release():
    sc, tr, plan = carry_film()
    r = by_name(sc, tr, plan=plan)
    assert r["EventsSatisfied"].verdict == "pass", r["EventsSatisfied"].evidence
    assert r["EventsSatisfied"].metrics["first_frames"] == {"pick": 3, "drop": 10}
    # carried from the grasp (frame 3) through the release frame (10); left in the air after
    assert floating(r["Supported"]) == [(11, "cup"), (12, "cup")]


def test_without_a_plan_the_lifted_cup_floats():
    sc, tr, _ = carry_film()
    r = by_name(sc, tr)
    assert floating(r["Supported"]) == [(f, "cup") for f in range(5, 13)]


def test_a_grasp_without_release_carries_to_the_end():
    sc, tr, plan = carry_film(with_release=False)
    r = by_name(sc, tr, plan=plan)
    assert floating(r["Supported"]) == []


@pytest.mark.parametrize("radii", [(0.05, 0.1), (0.02, 0.1)])
def test_touching_is_exact_near_tau_between_bodies_that_are_not_convex(radii):
    """A ring held over a static ring at 0.5, 0.95, 1.05 and 1.5 tau: supported on the first two
    frames only (the rings' flat faces are parallel, so the gap is the height difference)."""
    import trimesh

    from studio.checks.contacts import tau
    from studio.scene.ir import Body, Geometry, Scene
    ring = trimesh.creation.annulus(r_min=radii[0], r_max=radii[1], height=0.02, sections=48)
    assert not ring.is_convex
    t = tau(0.02, 0.02)
    heights = 0.02 + t * np.array([0.5, 0.95, 1.05, 1.5])
    sc = Scene(name="rings", bodies=[Body("base", kind="static", geometry=Geometry("mesh", path="base")),
                                     Body("top", geometry=Geometry("mesh", path="top"))])
    top = np.c_[np.zeros((4, 2)), heights, np.tile([1.0, 0, 0, 0], (4, 1))]
    r = {x.name: x for x in run_checks(sc, {"base": ring, "top": ring.copy()},
                                       tracks(1, base=still([0, 0, 0], n=4), top=top))}
    assert floating(r["Supported"]) == [(3, "top"), (4, "top")]
    assert r["NoPenetration"].verdict == "pass"
