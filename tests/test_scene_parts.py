"""CAD parts: parameter checks that name the parameter, and closed meshes of the right size."""
from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from studio.scene import parts
from studio.scene.parts import PartError
from studio.scene.tessellate import solid_arrays

SAMPLE = {"capsule": {"length": 0.3, "radius": 0.04},
          "rounded_box": {"size_x": 0.2, "size_y": 0.3, "size_z": 0.1}}


def _mesh(name, params, tolerance=1e-3):
    shape = parts.build(name, params)
    v, f = solid_arrays(shape, tolerance)
    return shape, trimesh.Trimesh(v, f, process=False)


def test_unknown_part_lists_the_known_ones():
    with pytest.raises(PartError) as e:
        parts.build("teapot", {})
    assert "unknown part 'teapot'" in str(e.value) and "spur_gear" in str(e.value)


@pytest.mark.parametrize("name, params, fragment", [
    ("capsule", {"radius": 0.02}, "missing parameter 'length'"),
    ("capsule", {"length": "long", "radius": 0.02}, "parameter 'length': expected a number"),
    ("panel", {"width": -1.2}, "parameter 'width': expected a value > 0"),
    ("panel", {"colour": "red"}, "unknown parameter 'colour'"),
    ("spur_gear", {"teeth": 12.5}, "parameter 'teeth': expected a whole number"),
    ("spur_gear", {"teeth": 3}, "parameter 'teeth': expected a value >= 6"),
    ("sphere", {"radius": float("nan")}, "parameter 'radius': expected a finite number"),
    ("wall_with_opening", {"door_width": 6.0}, "does not fit in the wall"),
    ("spur_gear", {"teeth": 10, "bore": 0.05}, "parameter 'bore'"),
])
def test_bad_parameters_name_the_part_and_parameter(name, params, fragment):
    with pytest.raises(PartError) as e:
        parts.build(name, params)
    assert fragment in str(e.value) and repr(name) in str(e.value)


def test_every_part_tessellates_closed_and_matches_its_cad_volume():
    assert len(parts.PARTS) >= 14
    for name, _, defaults in parts.catalogue():
        params = SAMPLE.get(name, {})
        shape, mesh = _mesh(name, params)
        assert mesh.is_watertight and mesh.is_winding_consistent, name
        assert mesh.volume == pytest.approx(shape.volume, rel=0.03), name
        assert len(mesh.faces) < 5000, name


def test_floor_top_is_at_zero_and_panel_is_centred():
    _, floor = _mesh("floor_slab", {"width": 4, "depth": 3, "thickness": 0.05})
    np.testing.assert_allclose(floor.bounds, [[-2, -1.5, -0.05], [2, 1.5, 0]], atol=1e-9)
    _, panel = _mesh("panel", {"width": 1.2, "depth": 0.6, "thickness": 0.02}, 0.5e-3)
    np.testing.assert_allclose(panel.bounds, [[-0.3, -0.6, -0.01], [0.3, 0.6, 0.01]], atol=1e-6)


def test_wall_has_an_opening_where_the_door_is():
    _, wall = _mesh("wall_with_opening", {"width": 5, "height": 2.6, "thickness": 0.15,
                                          "door_width": 0.9, "door_height": 2.1})
    inside = wall.contains([[0, 0, 1.0], [0, 0.44, 2.0], [0, 0, 2.3], [0, 1.0, 1.0], [0, 0.46, 1.0]])
    assert inside.tolist() == [False, False, True, True, True]
    assert wall.volume == pytest.approx(0.15 * (5 * 2.6 - 0.9 * 2.1))


def test_gear_size_follows_teeth_and_module():
    _, small = _mesh("spur_gear", {"teeth": 12, "module": 0.002, "thickness": 0.004}, 0.1e-3)
    _, big = _mesh("spur_gear", {"teeth": 30, "module": 0.002, "thickness": 0.004}, 0.1e-3)
    for mesh, teeth in ((small, 12), (big, 30)):
        tip = np.linalg.norm(mesh.vertices[:, :2], axis=1).max()
        assert tip == pytest.approx(0.002 * (teeth / 2 + 1), rel=1e-6)
        assert mesh.bounds[1, 2] - mesh.bounds[0, 2] == pytest.approx(0.004)
    _, bored = _mesh("spur_gear", {"teeth": 30, "module": 0.002, "thickness": 0.004, "bore": 0.005}, 0.1e-3)
    assert bored.volume == pytest.approx(big.volume - math.pi * 0.005 ** 2 * 0.004, rel=0.01)
    assert not bored.contains([[0, 0, 0]])[0] and big.contains([[0, 0, 0]])[0]


def test_tolerance_is_absolute_in_metres():
    _, coarse = _mesh("sphere", {"radius": 0.5}, 5e-3)
    _, fine = _mesh("sphere", {"radius": 0.5}, 0.5e-3)
    assert len(fine.faces) > 3 * len(coarse.faces)
    radii = np.linalg.norm(fine.vertices, axis=1)
    np.testing.assert_allclose(radii, 0.5, atol=1e-9)       # vertices lie on the sphere
