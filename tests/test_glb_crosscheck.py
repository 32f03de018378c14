"""The verifier against an independent exact implementation: python-fcl's box-box penetration depth
(GJK/EPA), with the poses, rotations and tau written out here, sharing no code with studio/checks."""
from __future__ import annotations

import itertools

import fcl
import numpy as np

from glb_films import GlbWriter
from studio.checks.score import check_film

SIZES = {"anchor": [0.12, 0.1, 0.06], "card": [0.1, 0.07, 0.003], "thin": [0.08, 0.08, 0.002],
         "block": [0.05, 0.09, 0.04]}


def rotation(q_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = q_xyzw / np.linalg.norm(q_xyzw)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def scorer_tau(a: str, b: str) -> float:
    return max(0.001, min(0.005, 0.5 * min(min(SIZES[a]), min(SIZES[b]))))


def fcl_depth(a, pa, qa, b, pb, qb) -> float:
    oa = fcl.CollisionObject(fcl.Box(*SIZES[a]), fcl.Transform(rotation(qa), pa))
    ob = fcl.CollisionObject(fcl.Box(*SIZES[b]), fcl.Transform(rotation(qb), pb))
    res = fcl.CollisionResult()
    fcl.collide(oa, ob, fcl.CollisionRequest(enable_contact=True, num_max_contacts=1), res)
    return max((c.penetration_depth for c in res.contacts), default=0.0)


def test_penetration_verdicts_agree_with_fcl_frame_by_frame(tmp_path):
    rng = np.random.default_rng(11)
    frames = 48
    g = GlbWriter({"up": "Z", "fps": 1})
    poses = {"anchor": (np.zeros((frames, 3)), np.tile([0, 0, 0, 1.0], (frames, 1)))}
    g.box("anchor", SIZES["anchor"])
    for name in ("card", "thin", "block"):
        node = g.box(name, SIZES[name])
        pos = rng.uniform([-0.09, -0.08, 0.0], [0.09, 0.08, 0.06], (frames, 3))
        axis = rng.normal(size=(frames, 3))
        angle = rng.choice([0.0, 0.02, 0.4, 1.2], frames)
        if name == "card":                     # every other frame flat on the anchor, overlapping near tau
            even = np.arange(0, frames, 2)
            pos[even, 2] = 0.03 + 0.0015 - rng.uniform(0.0012, 0.0018, len(even))
            angle[even] = rng.choice([0.0, 0.01], len(even))
        q = np.c_[axis / np.linalg.norm(axis, axis=1, keepdims=True) * np.sin(angle / 2)[:, None], np.cos(angle / 2)]
        g.animate(node, "translation", np.arange(frames), pos, "STEP")
        g.animate(node, "rotation", np.arange(frames), q, "STEP")
        poses[name] = (pos.astype(np.float32).astype(float), q.astype(np.float32).astype(float))   # as stored
    reports = {r.name: r for r in check_film(g.write(tmp_path / "boxes.glb"))}
    found = {(e["frame"], frozenset((e["a"], e["b"]))) for e in reports["NoPenetration"].evidence}
    truth, near, close = set(), 0, 0
    for f in range(frames):
        for a, b in itertools.combinations(SIZES, 2):
            d = fcl_depth(a, poses[a][0][f], poses[a][1][f], b, poses[b][0][f], poses[b][1][f])
            t = scorer_tau(a, b)
            if abs(d - t) < 1e-5:
                near += 1                      # within EPA's tolerance of tau: no verdict to compare
                found.discard((f + 1, frozenset((a, b))))
            elif d > t:
                truth.add((f + 1, frozenset((a, b))))
            close += 0 < abs(d - t) < 0.0003
    assert 20 < len(truth) < frames * 6 - 20 and close >= 8 and near <= 2
    assert found == truth
