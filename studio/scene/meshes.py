"""Body meshes: the triangle mesh of each body in its own frame.

`body_mesh` gives a body's mesh from its geometry: a box directly, a CAD part
tessellated through `studio.scene.parts` and cached in the project's assets by
content hash, an imported glTF/OBJ/STL file through trimesh. `geometry_hash`
is the content hash that design_id and the verifiers' caches key on.

The mesh cache: a CAD mesh is keyed by the hash of (the part function's
source, its full parameters, the tolerance), an imported mesh by the hash of
the file's bytes. The arrays live in `assets/meshes/<key>.npz` (written
atomically) and in an in-process memo, so a second build never imports
build123d. Cached meshes are in the part's frame; Geometry.offset is applied
after, so moving a part within its body reuses the cache.
"""
from __future__ import annotations

import hashlib
import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from studio.store.project import write_atomic

from studio.scene.importers import MeshFileError, load_mesh_file, mesh_file_digest, resolve_path
from studio.scene.ir import Body, Geometry, Scene, canonical_hash, design_id
from studio.scene.reading import read_memo
from studio.scene.transforms import from_7

MESH_CACHE_VERSION = 1
MEMO_LIMIT = 512
_MEMO: dict[str, tuple[np.ndarray, np.ndarray]] = {}


class MeshError(ValueError):
    """A body whose mesh cannot be made; the message names the body and why."""


@dataclass
class MeshBuild:
    """A body's mesh and how it was obtained: cache 'memo', 'hit', 'miss' or 'box'."""

    body: str
    mesh: trimesh.Trimesh
    cache: str
    seconds: float
    key: str = ""


def geometry_hash(geometry: Geometry) -> str:
    """Hash of what the mesh is made from (source, part and the part's code, parameters, tolerance, file)."""
    from studio.scene import parts
    d = {"source": geometry.source, "offset": geometry.offset.as_list()}
    if geometry.source == "box":
        d["size"] = geometry.size
    elif geometry.source == "cad":
        code = parts.PARTS[geometry.part].source_hash() if geometry.part in parts.PARTS else "unknown part"
        d.update(part=geometry.part, code=code, params=geometry.params, tolerance=geometry.tolerance)
    else:
        d["path"] = geometry.path
    return canonical_hash(d)[:16]


def box_mesh(size) -> trimesh.Trimesh:
    return trimesh.creation.box(extents=np.asarray(size, float))


def cad_key(geometry: Geometry) -> str:
    """Mesh cache key of a CAD geometry; checks the part and its parameters."""
    from studio.scene import parts
    full = parts.resolve(geometry.part, geometry.params)
    return canonical_hash({"v": MESH_CACHE_VERSION, "part": geometry.part,
                           "source": parts.spec(geometry.part).source_hash(),
                           "params": full, "tolerance": geometry.tolerance})[:32]


def cache_path(project_dir: Path, key: str) -> Path:
    return Path(project_dir) / "assets" / "meshes" / f"{key}.npz"


def _read_cached(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        with np.load(path) as z:
            return z["vertices"].astype(float), z["faces"].astype(np.int64)
    except (OSError, KeyError, ValueError):
        return None     # missing or damaged: rebuild it


def _write_cached(path: Path, vertices: np.ndarray, faces: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, vertices=vertices, faces=faces.astype(np.int32))
    try:
        write_atomic(path, buf.getvalue(), beneath=path.parents[2])     # <project>/assets/meshes/<key>.npz
    except OSError:
        pass   # a read-only project or a full disk: the mesh is rebuilt next time


def _cached_arrays(key: str, project_dir: Path | None, make) -> tuple[tuple[np.ndarray, np.ndarray], str]:
    path = cache_path(project_dir, key) if project_dir is not None else None
    if key in _MEMO:
        if path is not None and not path.exists():
            _write_cached(path, *_MEMO[key])     # a new project gets its own copy
        return _MEMO[key], "memo"
    arrays = _read_cached(path) if path is not None and path.exists() else None
    cache = "hit"
    if arrays is None:
        arrays, cache = make(), "miss"
        if path is not None:
            _write_cached(path, *arrays)
    _MEMO[key] = arrays
    while len(_MEMO) > MEMO_LIMIT:          # forget the oldest: a long editing session stays small
        _MEMO.pop(next(iter(_MEMO)))
    return arrays, cache


def _cad_arrays(body: Body) -> tuple[np.ndarray, np.ndarray]:
    from studio.scene import parts
    from studio.scene.tessellate import solid_arrays
    g = body.geometry
    vertices, faces = solid_arrays(parts.build(g.part, g.params), g.tolerance)
    if len(faces) == 0:
        raise MeshError(f"body {body.name}: part {g.part!r} tessellated to no triangles")
    return vertices, faces


def build_body_mesh(body: Body, project_dir: Path | None = None) -> MeshBuild:
    """The body's mesh (offset applied) with where it came from and how long it took."""
    from studio.scene.parts import PartError
    t0 = time.perf_counter()
    g = body.geometry
    key = ""
    if g.source == "box":
        mesh, cache = box_mesh(g.size), "box"
    else:
        try:
            if g.source == "cad":
                if g.tolerance <= 0:
                    raise MeshError(f"body {body.name}: geometry.tolerance must be positive, got {g.tolerance}")
                key = cad_key(g)
                make = lambda: _cad_arrays(body)  # noqa: E731
            else:
                path = resolve_path(g.path, project_dir)
                if not path.is_file():
                    load_mesh_file(path)           # raises the precise error
                digest = mesh_file_digest(path)      # a .gltf with the files it names
                key = canonical_hash({"v": MESH_CACHE_VERSION, "file": digest, "ext": path.suffix.lower()})[:32]
                make = lambda: load_mesh_file(path)  # noqa: E731
            (vertices, faces), cache = _cached_arrays(key, project_dir, make)
        except (PartError, MeshFileError) as e:
            raise MeshError(f"body {body.name}: {e}") from None
        mesh = trimesh.Trimesh(vertices.copy(), faces.copy(), process=False)
    mesh.apply_transform(from_7(np.asarray(g.offset.as_list())))
    return MeshBuild(body.name, mesh, cache, time.perf_counter() - t0, key)


def body_mesh(body: Body, project_dir: Path | None = None) -> trimesh.Trimesh:
    """The body's mesh in its own frame (metres, +Z up)."""
    return build_body_mesh(body, project_dir).mesh


def scene_meshes(scene: Scene, project_dir: Path | None = None) -> dict[str, trimesh.Trimesh]:
    return {b.name: body_mesh(b, project_dir) for b in scene.bodies}


def clear_memo() -> None:
    """Forget in-process meshes (the next build reads the project's cache)."""
    _MEMO.clear()


def scene_design_id(scene: Scene) -> str:
    memo = read_memo()
    if memo is not None and id(scene) in memo:
        return memo[id(scene)][1]
    value = design_id(scene, {b.name: geometry_hash(b.geometry) for b in scene.bodies})
    if memo is not None:
        memo[id(scene)] = (scene, value)
    return value


def build_scene_meshes(scene: Scene, project_dir: Path | None, progress=None) -> list[MeshBuild]:
    """Make (or fetch from the cache) every body's mesh; `progress(i, n, build)` after each."""
    out = []
    for i, b in enumerate(scene.bodies):
        out.append(build_body_mesh(b, project_dir))
        if progress is not None:
            progress(i + 1, len(scene.bodies), out[-1])
    return out
