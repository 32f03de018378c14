"""Body meshes: the CAD mesh cache in a project's assets, and glTF/OBJ/STL import."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from studio.scene import meshes, parts
from studio.scene.ir import Body, Geometry, Scene, Transform
from studio.scene.meshes import MeshError, build_body_mesh, cache_path, clear_memo, geometry_hash


def _gear(teeth=16, offset=(0.0, 0.0, 0.0)) -> Body:
    return Body("gear", "rigid", Geometry("cad", "spur_gear", {"teeth": teeth, "module": 0.003, "thickness": 0.01},
                                          tolerance=0.2e-3, offset=Transform(list(offset), [1, 0, 0, 0])))


def test_cad_mesh_is_cached_in_the_project_then_read_back(tmp_path):
    clear_memo()
    first = build_body_mesh(_gear(), tmp_path)
    assert first.cache == "miss" and first.mesh.is_watertight
    stored = cache_path(tmp_path, first.key)
    assert stored.parent == tmp_path / "assets" / "meshes" and stored.is_file()
    assert build_body_mesh(_gear(), tmp_path).cache == "memo"
    clear_memo()
    again = build_body_mesh(_gear(), tmp_path)
    assert again.cache == "hit"
    np.testing.assert_array_equal(again.mesh.vertices, first.mesh.vertices)
    np.testing.assert_array_equal(again.mesh.faces, first.mesh.faces)


def test_a_memo_hit_still_fills_a_new_projects_cache(tmp_path):
    clear_memo()
    build_body_mesh(_gear(), tmp_path / "a")
    b = build_body_mesh(_gear(), tmp_path / "b")
    assert b.cache == "memo" and cache_path(tmp_path / "b", b.key).is_file()


def test_damaged_cache_file_is_rebuilt(tmp_path):
    clear_memo()
    key = build_body_mesh(_gear(), tmp_path).key
    cache_path(tmp_path, key).write_bytes(b"not an npz")
    clear_memo()
    rebuilt = build_body_mesh(_gear(), tmp_path)
    assert rebuilt.cache == "miss" and rebuilt.mesh.is_watertight
    clear_memo()
    assert build_body_mesh(_gear(), tmp_path).cache == "hit"


def test_parameter_change_changes_key_and_design_but_offset_only_the_design():
    base, more_teeth, moved = _gear(16), _gear(24), _gear(16, (0.1, 0, 0))
    assert meshes.cad_key(more_teeth.geometry) != meshes.cad_key(base.geometry)
    assert meshes.cad_key(moved.geometry) == meshes.cad_key(base.geometry)
    ids = [meshes.scene_design_id(Scene(bodies=[b])) for b in (base, more_teeth, moved)]
    assert len(set(ids)) == 3
    assert geometry_hash(base.geometry) == geometry_hash(_gear(16).geometry)
    m = build_body_mesh(moved).mesh
    assert m.bounds[0, 0] == pytest.approx(build_body_mesh(base).mesh.bounds[0, 0] + 0.1)


def test_editing_a_part_function_invalidates_its_cache(monkeypatch):
    key = meshes.cad_key(_gear().geometry)
    original = parts.PARTS["spur_gear"]

    def spur_gear(teeth, module, thickness, bore):   # same name, different code
        return original.build(teeth, module, thickness * 2, bore)
    monkeypatch.setitem(parts.PARTS, "spur_gear", parts.PartSpec("spur_gear", spur_gear, original.params, original.doc))
    assert meshes.cad_key(_gear().geometry) != key


def test_bad_cad_geometry_names_the_body():
    body = Body("wheel", "rigid", Geometry("cad", "spur_gear", {"teeth": 2}))
    with pytest.raises(MeshError, match="body wheel: part 'spur_gear', parameter 'teeth'"):
        build_body_mesh(body)


def _mesh_body(path: str) -> Body:
    return Body("prop", "rigid", Geometry("mesh", path=path))


@pytest.mark.parametrize("ext", ["glb", "obj", "stl"])
def test_import_mesh_files(tmp_path, ext):
    box = trimesh.creation.box(extents=[0.4, 0.2, 0.1])
    box.apply_translation([0.0, 0.5, 0.0])
    (tmp_path / "assets" / "props").mkdir(parents=True)
    data = box.export(file_type=ext)
    (tmp_path / "assets" / "props" / f"box.{ext}").write_bytes(data.encode() if isinstance(data, str) else data)
    clear_memo()
    built = build_body_mesh(_mesh_body(f"assets/props/box.{ext}"), tmp_path)
    m = built.mesh
    assert built.cache == "miss" and m.is_watertight and len(m.faces) == 12
    assert m.volume == pytest.approx(0.4 * 0.2 * 0.1)
    extents = m.bounds[1] - m.bounds[0]
    if ext == "glb":     # glTF is +Y up: its Y becomes the studio's Z
        np.testing.assert_allclose(extents, [0.4, 0.1, 0.2], atol=1e-6)
        assert m.bounds[:, 2].mean() == pytest.approx(0.5)
    else:
        np.testing.assert_allclose(extents, [0.4, 0.2, 0.1], atol=1e-6)
        assert m.bounds[:, 1].mean() == pytest.approx(0.5)
    clear_memo()
    assert build_body_mesh(_mesh_body(f"assets/props/box.{ext}"), tmp_path).cache == "hit"


@pytest.mark.parametrize("name, data, fragment", [
    ("missing.glb", None, "no such mesh file"),
    ("chair.ply", b"ply\n", "unknown mesh format '.ply'"),
    ("empty.stl", b"", "the file is empty"),
    ("broken.glb", b"glTF" + b"\x07" * 60, "not a readable GLB file"),
    ("points.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\n", "holds no triangles"),
    ("broken.gltf", b"{\"asset\": ", "not a readable GLTF file"),
])
def test_malformed_or_missing_files_name_the_file(tmp_path, name, data, fragment):
    (tmp_path / "assets").mkdir()
    if data is not None:
        (tmp_path / "assets" / name).write_bytes(data)
    with pytest.raises(MeshError) as e:
        build_body_mesh(_mesh_body(f"assets/{name}"), tmp_path)
    assert f"body prop: {tmp_path / 'assets' / name}" in str(e.value) and fragment in str(e.value), str(e.value)
