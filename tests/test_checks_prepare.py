"""What a cold verify prepares: convex bodies no distance grid, other bodies one only once they come close."""
from __future__ import annotations

import numpy as np
import trimesh

from checks_films import still, tracks
from studio.checks.run import run_checks
from studio.checks.shape import mesh_hash
from studio.scene.ir import Body, Geometry, Scene


def prepared(cache, mesh) -> set[str]:
    """The arrays kept in the disk cache for a mesh."""
    [path] = (cache / "checks").glob(f"{mesh_hash(mesh)}-v*.npz")
    with np.load(path) as z:
        return set(z.files)


def test_only_bodies_that_are_not_convex_and_come_close_get_a_grid(tmp_path, monkeypatch):
    monkeypatch.setenv("KEYPOSE_CACHE", str(tmp_path))
    ground = trimesh.creation.box(extents=[3.1, 3.1, 0.1])
    crate = trimesh.creation.box(extents=[0.21, 0.17, 0.13])
    near = trimesh.creation.annulus(r_min=0.031, r_max=0.093, height=0.027, sections=40)
    far = trimesh.creation.annulus(r_min=0.033, r_max=0.091, height=0.029, sections=40)
    meshes = {"ground": ground, "crate": crate, "near": near, "far": far}
    sc = Scene(name="prepare", bodies=[Body(n, kind="ground" if n == "ground" else "rigid",
                                            geometry=Geometry("mesh", path=n)) for n in meshes])
    r = {x.name: x for x in run_checks(sc, meshes, tracks(
        ground=still([0, 0, -0.05], n=2), crate=still([0, 0, 0.065], n=2),
        near=still([0.5, 0, 0.0135 - 0.002], n=2), far=still([1.0, 1.0, 2.0], n=2)))}
    assert r["NoPenetration"].verdict == "pass"            # the ring sinks 2 mm: within tau
    assert [(e["frame"], e["body"]) for e in r["Supported"].evidence] == [(1, "far"), (2, "far")]
    assert "grid" not in prepared(tmp_path, ground) and "grid" not in prepared(tmp_path, crate)
    assert "grid" in prepared(tmp_path, near)                # it rests on the ground
    assert "grid" not in prepared(tmp_path, far)             # it never comes near anything


def test_a_hull_and_thickness_without_trimesh_are_trimeshs_to_the_bit():
    """The hull the checks make from Qhull alone (`obb.Hull`) and the tau rule's thickness over it are
    trimesh's: a capsule, a ring, a cloud of points and a thin tilted card."""
    from studio.checks.obb import Hull
    from studio.checks.shape import Surface, thickness_of
    rng = np.random.default_rng(3)
    card = trimesh.creation.box(extents=[0.3, 0.2, 0.002])
    card.apply_transform(trimesh.transformations.rotation_matrix(0.4, [1, 1, 0]))
    ring = trimesh.creation.annulus(r_min=0.04, r_max=0.06, height=0.02)
    for points, mesh in ((trimesh.creation.capsule(0.3, 0.05).vertices, trimesh.creation.capsule(0.3, 0.05)),
                         (ring.vertices, ring), (rng.normal(size=(400, 3)), None), (card.vertices, card)):
        ours, theirs = Hull(points), trimesh.convex.convex_hull(np.asarray(points, float))
        assert np.array_equal(ours.vertices, theirs.vertices) and np.array_equal(ours.faces, theirs.faces)
        assert np.array_equal(ours.face_normals, theirs.face_normals)
        assert np.array_equal(ours.area_faces, theirs.area_faces)
        assert abs(ours.volume - theirs.volume) <= 1e-12 * theirs.volume
        if mesh is not None:
            want = float(np.min(mesh.bounding_box_oriented.primitive.extents))
            got = thickness_of(Surface(np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64)))
            assert abs(got - want) <= 1e-12 * want, (got, want)
