"""A seeded generator builds a correct film, injects declared defects, and the verifiers must
report exactly those defects: the same pair-frames, body-frames and joint-frames, no more, no fewer."""
from __future__ import annotations

import numpy as np
import pytest

from checks_films import box, meshes, scene
from studio.checks.run import run_checks
from studio.scene.pose import Tracks
from studio.scene.transforms import quat_from_axis_angle

N_FRAMES = 40


def correct_film(rng):
    """Ground, boxes resting in their own lanes (some stacked, some sliding, turning), an arm."""
    bodies = [box("ground", [8, 8, 0.1], kind="ground")]
    roots = {"ground": np.tile([0, 0, -0.05, 1, 0, 0, 0], (N_FRAMES, 1)).astype(float)}
    stacked_on: dict[str, str] = {}
    for k in range(6):
        size = [rng.uniform(0.08, 0.25), rng.uniform(0.08, 0.25), rng.uniform(0.06, 0.2)]
        name = f"box{k}"
        bodies.append(box(name, size))
        x = rng.uniform(-1, 1) + (np.linspace(0, rng.uniform(-0.5, 0.5), N_FRAMES) if k % 2 else 0)
        yaw = np.linspace(0, rng.uniform(-1, 1), N_FRAMES) if k % 3 == 0 else np.zeros(N_FRAMES)
        q = quat_from_axis_angle(np.tile([0, 0, 1.0], (N_FRAMES, 1)), yaw)
        t = np.zeros((N_FRAMES, 7))
        t[:, 0], t[:, 1], t[:, 2], t[:, 3:] = x, 0.6 * k - 1.5, size[2] / 2, q
        roots[name] = t
        if k % 2 == 0:                        # a smaller box stacked on it, moving with it
            top = f"top{k}"
            tsize = [0.5 * size[0], 0.5 * size[1], rng.uniform(0.05, 0.1)]
            bodies.append(box(top, tsize))
            tt = t.copy()
            tt[:, 2] = size[2] + tsize[2] / 2
            roots[top] = tt
            stacked_on[top] = name
    bodies += [box("base", [0.2, 0.2, 0.2]), box("forearm", [0.3, 0.04, 0.04])]
    roots["base"] = np.tile([2.5, 0, 0.1, 1, 0, 0, 0], (N_FRAMES, 1)).astype(float)
    sc = scene(bodies, joints=[{"name": "elbow", "type": "revolute", "parent": "base", "child": "forearm",
                                "origin": {"position": [0, 0, 0.2]}, "axis": [0, 1, 0],
                                "lower": -0.5, "upper": 1.2}])
    tr = Tracks(1, roots, {"elbow": np.sin(np.linspace(0, 3, N_FRAMES)) * 0.5})
    return sc, tr, stacked_on


def window(rng):
    a = int(rng.integers(0, N_FRAMES - 8))
    return a, a + int(rng.integers(1, 8))


def inject(rng, sc, tr, stacked_on):
    """Sink one uncovered box into the ground, lift another, bend the elbow too far; return the truth."""
    covered = set(stacked_on.values())
    free = [b.name for b in sc.bodies if b.name.startswith("box") and b.name not in covered]
    tops = list(stacked_on)
    sink = free[int(rng.integers(len(free)))]
    lift = tops[int(rng.integers(len(tops)))]
    a, b = window(rng)
    tr.roots[sink][a:b + 1, 2] -= rng.uniform(0.012, 0.03)
    c, d = window(rng)
    tr.roots[lift][c:d + 1, 2] += rng.uniform(0.02, 0.1)
    e, f = window(rng)
    tr.joints["elbow"][e:f + 1] = 1.2 + rng.uniform(0.05, 0.3)
    pen = {(fr + 1, *sorted((sink, "ground"))) for fr in range(a, b + 1)}
    flo = {(fr + 1, lift) for fr in range(c, d + 1)}
    return pen, flo, (e + 1, f + 1)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_verifiers_report_exactly_the_injected_defects(seed):
    rng = np.random.default_rng(seed)
    sc, tr, stacked_on = correct_film(rng)
    clean = {r.name: r for r in run_checks(sc, meshes(sc), tr)}
    for name in ("NoPenetration", "Supported", "JointLimits", "AnimationWellFormed"):
        assert clean[name].verdict == "pass", (name, clean[name].evidence[:3])
    pen, flo, (j0, j1) = inject(rng, sc, tr, stacked_on)
    r = {x.name: x for x in run_checks(sc, meshes(sc), tr)}
    got_pen = {(e["frame"], *sorted((e["a"], e["b"]))) for e in r["NoPenetration"].evidence}
    got_flo = {(e["frame"], e["body"]) for e in r["Supported"].evidence}
    assert got_pen == pen
    assert got_flo == flo
    assert [e["frames"] for e in r["JointLimits"].evidence] == [[j0, j1]]
    assert r["NoPenetration"].metrics["penetration_rate"] == pytest.approx(len(pen) / N_FRAMES)
