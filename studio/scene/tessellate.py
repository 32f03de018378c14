"""CAD solid -> watertight triangle arrays, at an absolute tolerance in metres.

build123d's own `tessellate` meshes with a *relative* deflection, so the
same tolerance gives very different triangle counts on a small ball and on a
wall. Here OCCT's mesher runs with an absolute linear deflection (the
geometry's `tolerance`) and a fixed angular deflection, and the per-face
triangles are welded along shared edges so the result is closed.
"""
from __future__ import annotations

import numpy as np
import trimesh

ANGULAR_DEFLECTION = 0.3   # radians


def solid_arrays(shape, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (N,3) float64, faces (M,3) int64) of a build123d shape."""
    from OCP.BRep import BRep_Tool
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.TopAbs import TopAbs_Orientation
    from OCP.TopLoc import TopLoc_Location

    BRepMesh_IncrementalMesh(shape.wrapped, float(tolerance), False, ANGULAR_DEFLECTION, True)
    verts, faces, offset = [], [], 0
    for face in shape.faces():
        loc = TopLoc_Location()
        poly = BRep_Tool.Triangulation_s(face.wrapped, loc)
        if poly is None:
            continue
        trsf = loc.Transformation()
        n = poly.NbNodes()
        pts = [poly.Node(i).Transformed(trsf) for i in range(1, n + 1)]
        verts.append(np.array([(p.X(), p.Y(), p.Z()) for p in pts], float).reshape(-1, 3))
        tri = np.array([(t.Value(1), t.Value(2), t.Value(3)) for t in poly.Triangles()], np.int64).reshape(-1, 3) - 1
        if face.wrapped.Orientation() == TopAbs_Orientation.TopAbs_REVERSED:
            tri = tri[:, [0, 2, 1]]
        faces.append(tri + offset)
        offset += n
    if not faces:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    return weld(np.concatenate(verts), np.concatenate(faces))


def weld(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge coincident vertices (to 1 nm) and drop the slivers left at poles."""
    m = trimesh.Trimesh(vertices, faces, process=False)
    m.merge_vertices(digits_vertex=9)
    m.update_faces(m.nondegenerate_faces())
    m.remove_unreferenced_vertices()
    if m.is_winding_consistent and m.volume < 0:
        m.invert()
    return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
