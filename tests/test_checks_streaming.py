"""Convex shapes prepared without a mesh library, and the between-frames sweep taken a window of frame
pairs at a time: the same figures and verdicts as before."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from studio.checks import sweep as sweep_module
from studio.checks.shape import Surface, convex_solid, thickness_of, weld


def _convex_meshes():
    rng = np.random.default_rng(5)
    out = {
        "box": trimesh.creation.box([0.4, 0.3, 0.2]),
        "card": trimesh.creation.box([0.2, 0.12, 0.003]),
        "plate subdivided": trimesh.creation.box([0.5, 0.5, 0.001]).subdivide(),
        "ball": trimesh.creation.icosphere(subdivisions=3, radius=0.1),
        "disc": trimesh.creation.cylinder(0.2, 0.004, sections=64),
        "prism": trimesh.creation.cylinder(0.05, 0.3, sections=6),
        "squashed ball": trimesh.creation.icosphere(subdivisions=2, radius=0.1).apply_scale([1.0, 0.6, 0.3]),
    }
    for name in list(out):                 # the same bodies turned and moved, written in float32 as a file would
        m = out[name].copy()
        m.apply_transform(np.r_[np.c_[Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3)],
                                [[0, 0, 0, 1]]])
        m.vertices = m.vertices.astype(np.float32).astype(float)
        out[name + " turned"] = m
    return out


@pytest.mark.parametrize("name", list(_convex_meshes()))
def test_a_convex_bodys_thickness_is_trimeshs_oriented_box_without_trimesh(name):
    """The same box search as trimesh's on the body's own surface: equal on bodies as modelled; on
    float32 vertices turned by a rotation baked into them (faces bent by rounding, so trimesh's hull is
    triangulated otherwise) within 0.1 micrometre, and never thinner than the body (its least width)."""
    mesh = _convex_meshes()[name]
    surface = weld(Surface(mesh.vertices, mesh.faces))
    convex = convex_solid(surface)
    assert convex == _qhull_rule(surface)
    assert convex or name.endswith("turned")
    expected = float(np.min(trimesh.Trimesh(surface.vertices, surface.faces, process=False)
                            .bounding_box_oriented.primitive.extents))
    got = thickness_of(surface, convex=convex)
    if convex and name.endswith("turned"):
        assert got == pytest.approx(expected, abs=1e-7)
        hull = trimesh.convex.convex_hull(surface.vertices)
        width = min(float(np.ptp(surface.vertices @ n)) for n in hull.face_normals)
        brute = min(float(np.ptp(surface.vertices @ n)) for n in _directions(20000))
        assert got >= min(width, brute) - 1e-12
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def _qhull_rule(surface) -> bool:
    """The volume rule as Qhull decides it: the surface encloses its hull's volume within a millionth."""
    from scipy.spatial import ConvexHull
    tri = surface.vertices[surface.faces]
    volume = float(np.einsum("fi,fi->f", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum()) / 6.0
    hull = ConvexHull(surface.vertices).volume
    return abs(volume - hull) <= 1e-6 * hull


def _directions(n):
    d = np.random.default_rng(1).normal(size=(n, 3))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def test_preparing_convex_shapes_loads_no_mesh_library(tmp_path):
    meshes = [m for name, m in _convex_meshes().items() if not name.endswith("turned")]
    np.savez(tmp_path / "meshes.npz", **{f"v{i}": m.vertices for i, m in enumerate(meshes)},
             **{f"f{i}": m.faces for i, m in enumerate(meshes)})
    code = (
        "import sys, numpy as np\n"
        "from studio.checks.shape import Surface, build_shape\n"
        f"z = np.load({str(tmp_path / 'meshes.npz')!r})\n"
        f"shapes = [build_shape(Surface(z[f'v{{i}}'], z[f'f{{i}}'])) for i in range({len(meshes)})]\n"
        "print(all(s.convex for s in shapes), [m for m in ('trimesh', 'scipy', 'igl') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True []"


def test_convexity_still_refuses_two_bodies_and_a_dented_one():
    a = trimesh.creation.box([0.2, 0.2, 0.2])
    b = a.copy()
    b.apply_translation([0.5, 0, 0])
    two = trimesh.util.concatenate([a, b])
    assert not convex_solid(weld(Surface(two.vertices, two.faces)))          # closed, locally convex, two bodies
    dented = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    v = dented.vertices.copy()
    v[0] *= 0.8                                                             # one corner pushed in
    assert not convex_solid(weld(Surface(v, dented.faces)))
    flat = trimesh.creation.box([0.2, 0.2, 0.0])
    assert not convex_solid(weld(Surface(flat.vertices, flat.faces)))
    ball = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    assert convex_solid(weld(Surface(ball.vertices, ball.faces)))


def _wander(frames=48):
    """A box wandering round a slab, every frame within a few millimetres of touching it."""
    from checks_films import sat_depth
    slab, mover, home = [0.3, 0.3, 0.1], [0.1, 0.08, 0.06], [0, 0, 0, 1, 0, 0, 0]
    rng = np.random.default_rng(23)
    pos, rots = [np.array([0.25, 0.0, 0.0])], [Rotation.identity()]
    while len(pos) < frames:
        p = pos[-1] + rng.normal(size=3) * 0.1
        r = Rotation.from_rotvec(rng.normal(size=3) * 0.4) * rots[-1]
        q = r.as_quat()
        if -0.06 < sat_depth(mover, [*p, q[3], q[0], q[1], q[2]], slab, home) <= 0.004:
            pos.append(p)
            rots.append(r)
    return slab, mover, np.array([[*p, r.as_quat()[3], *r.as_quat()[:3]] for p, r in zip(pos, rots)])


def test_the_sweep_in_windows_of_three_frame_pairs_gives_the_report_of_one_pass(monkeypatch):
    from checks_films import box, meshes, scene, still, tracks
    from studio.checks.run import run_checks
    slab, mover, roots = _wander()
    sc = scene([box("slab", slab, kind="static"), box("mover", mover, flags=["self_propelled"]),
                box("crate", [0.1, 0.1, 0.1], flags=["self_propelled"])])
    crate = roots.copy()
    crate[:, 0] += 0.6

    def verdict():
        (pen,) = [r for r in run_checks(sc, meshes(sc), tracks(1, slab=still([0, 0, 0], n=len(roots)), mover=roots,
                                                              crate=crate), names=["NoPenetration"])]
        return pen
    whole = verdict()
    monkeypatch.setattr(sweep_module, "WINDOW", 9)          # 3 counted pairs: 3 frame pairs a window
    windows = verdict()
    between = [e for e in whole.evidence if e.get("between")]
    assert len(between) >= 6                                # frame pairs failing between frames to compare
    assert windows.verdict == whole.verdict == "fail"
    assert windows.evidence == whole.evidence
    assert windows.metrics == whole.metrics
