"""The oriented bounding box of a convex body (numpy only), a point set's convex hull and its volume.

`box_extents` is the box search the tau rule's thickness has always used (trimesh's `oriented_bounds`:
one candidate direction per 0.1-radian cell of the hull's face normals on the upper hemisphere, the
smallest rectangle over the silhouette edges seen along it, the least volume kept, then the smallest
rectangle of all the corners seen along the chosen direction), done on a convex body's own welded
surface, which is its hull, so that a film of convex bodies never loads a mesh library or Qhull to
prepare its shapes. `hull_volume` is the volume of the convex hull of points by manifold3d (a
compiled quickhull), for deciding whether a closed surface encloses its hull. `Hull` is a point set's
convex hull as trimesh makes it, from Qhull alone.
"""
from __future__ import annotations

import numpy as np

_ZERO = np.finfo(np.float64).resolution * 100       # trimesh's tol.zero
_MERGE = 1e-8                                        # trimesh's tol.merge


class Hull:
    """The convex hull of points as trimesh's `convex.convex_hull` makes it (Qhull with "Qt QbB Pp",
    "QJ" if that fails; the used points in their order, faces with no area dropped, each wound
    outwards), without loading trimesh: vertices (V,3), faces (F,3), triangles, face_normals,
    area_faces, area, volume."""

    def __init__(self, points: np.ndarray):
        from scipy.spatial import ConvexHull, QhullError
        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        try:
            hull = ConvexHull(p, qhull_options="Qt QbB Pp")
        except QhullError:
            hull = ConvexHull(p, qhull_options="QJ")
        used = np.sort(hull.vertices)
        index = np.zeros(len(p), np.int64)
        index[used] = np.arange(len(used))
        faces = index[hull.simplices]
        v = p[used]
        edge = v[faces][:, 1:] - v[faces][:, :2]              # trimesh's cross: (b - a) x (c - b)
        cross = np.cross(edge[:, 0], edge[:, 1])
        length = np.sqrt(np.dot(cross * cross, [1.0, 1.0, 1.0]))
        valid = length > _ZERO
        faces, cross, length, eq = faces[valid], cross[valid], length[valid], hull.equations[valid]
        normals = cross * (length ** -1)[:, None]
        inward = np.einsum("ij,ij->i", normals, eq[:, :3]) < 0
        faces[inward] = np.fliplr(faces[inward])
        normals[inward] *= -1.0
        self.vertices, self.faces = v, faces
        self.triangles = v[faces]
        self.face_normals = normals
        self.area_faces = np.sqrt((cross ** 2).sum(axis=1)) / 2.0
        self.area = float(self.area_faces.sum())
        self.volume = float(np.einsum("fi,fi->f", self.triangles[:, 0], np.cross(self.triangles[:, 1], self.triangles[:, 2])).sum()) / 6.0


def hull_volume(points: np.ndarray) -> float:
    """Volume of the convex hull of (N,3) points (0 for flat or too few points)."""
    import manifold3d
    p = np.ascontiguousarray(points, dtype=np.float64)
    if len(p) < 4:
        return 0.0
    return float(manifold3d.Manifold.hull_points(p).volume())


def _hemisphere(v: np.ndarray) -> np.ndarray:
    negative = v < -_ZERO
    zero = ~(negative | (v > _ZERO))
    sign = np.ones(len(v))
    sign[negative[:, 2]] = -1.0
    sign[zero[:, 2] & negative[:, 1]] = -1.0
    sign[zero[:, 2] & zero[:, 1] & negative[:, 0]] = -1.0
    return v * sign[:, None]


def _spherical(v: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(v, axis=1)
    valid = length > _ZERO
    unit = np.zeros_like(v)
    unit[valid] = v[valid] / length[valid, None]
    unit[np.abs(unit) < _MERGE] = 0.0
    out = np.zeros((len(v), 2))
    out[valid] = np.column_stack((np.arctan2(unit[valid, 1], unit[valid, 0]), np.arccos(unit[valid, 2])))
    return out


def _cells(spherical: np.ndarray) -> np.ndarray:
    """Index of the first direction in each 0.1-radian cell, in the order of the cells' keys."""
    key = np.round(spherical * 10 - 1e-6).astype(np.int64)
    _, first = np.unique(key[:, 1] * (1 << 32) + key[:, 0], return_index=True)
    return first


def _to_plane(theta: float, phi: float) -> np.ndarray:
    """The rotation taking the direction (theta, phi) to +z (the transpose of Rz(theta) Ry(phi))."""
    ct, st, cp, sp = np.cos(theta), np.sin(theta), np.cos(phi), np.sin(phi)
    rz = np.array([[ct, -st, 0.0], [st, ct, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    return (rz @ ry).T


def _hull_2d(p: np.ndarray) -> np.ndarray:
    """Corners of the convex hull of (N,2) points in order round it (Andrew's monotone chain)."""
    pts = np.unique(p, axis=0)
    if len(pts) < 3:
        return pts

    def chain(points):
        out: list = []
        for q in points:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (q[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (q[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(q)
        return out[:-1]
    return np.array(chain(pts) + chain(pts[::-1]))


def _rectangle(p: np.ndarray) -> np.ndarray:
    """The smallest-area rectangle holding (N,2) points with a side along a hull edge: its two sides."""
    hull = _hull_2d(p)
    vec = np.roll(hull, -1, axis=0) - hull
    length = np.sqrt(np.dot(vec ** 2, [1, 1]))
    vec = vec[length > 1e-10] / length[length > 1e-10, None]
    perp = np.fliplr(vec) * [-1.0, 1.0]
    x, y = vec @ hull.T, perp @ hull.T
    ext = np.column_stack((x.max(1) - x.min(1), y.max(1) - y.min(1)))
    return ext[np.argmin(ext.prod(axis=1))]


def box_extents(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The three extents (ascending) of the oriented bounding box of a convex body given by its closed
    surface (vertices (V,3), faces (F,3) wound outwards)."""
    v = np.asarray(vertices, float)
    f = np.asarray(faces, np.int64)
    tri = v[f]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normal = normal / np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-300)
    edges = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    code = edges[:, 0] * len(v) + edges[:, 1]
    order = np.argsort(code, kind="stable")
    c = code[order]
    two = np.nonzero(c[1:] == c[:-1])[0]                       # an edge and the next face across it
    face = np.arange(3 * len(f)) % len(f)
    adj = np.stack([face[order[two]], face[order[two + 1]]])
    shared = edges[order[two]]
    spherical = _spherical(_hemisphere(normal))
    best, best_volume = None, np.inf
    for theta, phi in spherical[_cells(spherical)]:
        to_2d = _to_plane(theta, phi)
        direction = np.array([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)])
        side = normal @ direction > -1e-10
        if not side.any():
            continue
        projected = v @ to_2d.T
        ev = projected[:, :2][shared[side[adj[0]] ^ side[adj[1]]]]
        vec = ev[:, 1] - ev[:, 0]
        length = np.sqrt(np.dot(vec ** 2, [1, 1]))
        vec = vec[length > 1e-10] / length[length > 1e-10, None]
        perp = np.fliplr(vec) * [-1.0, 1.0]
        x, y = vec @ ev[:, 0].T, perp @ ev[:, 0].T
        area = ((x.max(1) - x.min(1)) * (y.max(1) - y.min(1))).min()
        volume = area * np.ptp(projected[:, 2])
        if volume < best_volume:
            best_volume, best = volume, to_2d
    projected = v @ best.T
    return np.sort(np.append(_rectangle(projected[:, :2]), np.ptp(projected[:, 2])))
