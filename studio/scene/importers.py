"""Reading mesh files (glTF 2.0 .glb/.gltf, OBJ, STL) into triangle arrays.

glTF is +Y up by its specification; the studio is +Z up, so glTF files are
turned +90 degrees about X on import. OBJ and STL carry no convention: they
are read as metres, +Z up. Every failure names the file and what was wrong.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh

from studio.store.names import NameProblem, inside, relative_inside

FORMATS = {".glb": "glb", ".gltf": "gltf", ".obj": "obj", ".stl": "stl"}
Y_UP_TO_Z_UP = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], float)


class MeshFileError(ValueError):
    """A mesh file that is missing, of an unknown kind, or cannot be read."""


def resolve_path(path: str, project_dir: Path | None) -> Path:
    """A geometry's mesh path: relative to the project folder and inside its assets/ (never absolute or climbing)."""
    if project_dir is None:
        raise MeshFileError(f"{path}: a mesh path needs the project folder")
    try:
        relative_inside(path, "assets", "geometry.path")
        return inside(Path(project_dir) / "assets", Path(path).relative_to("assets"), "geometry.path")
    except NameProblem as e:
        raise MeshFileError(str(e)) from None


def load_mesh_file(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, faces) of every triangle in the file, in metres, +Z up."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise MeshFileError(f"{path}: unknown mesh format {path.suffix!r}; expected one of "
                            f"{', '.join(FORMATS)}")
    if not path.is_file():
        raise MeshFileError(f"{path}: no such mesh file")
    if path.stat().st_size == 0:
        raise MeshFileError(f"{path}: the file is empty")
    try:
        loaded = trimesh.load(str(path), file_type=kind, force="mesh", process=False)
    except Exception as e:   # trimesh raises many kinds for malformed input
        raise MeshFileError(f"{path}: not a readable {kind.upper()} file ({type(e).__name__}: {e})") from None
    if isinstance(loaded, trimesh.Scene):
        loaded = loaded.to_mesh() if loaded.geometry else None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise MeshFileError(f"{path}: the {kind.upper()} file holds no triangles")
    vertices = np.asarray(loaded.vertices, float)
    faces = np.asarray(loaded.faces, np.int64)
    if not np.all(np.isfinite(vertices)):
        raise MeshFileError(f"{path}: the {kind.upper()} file has vertices that are not finite numbers")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise MeshFileError(f"{path}: a triangle refers to a vertex the file does not have")
    if kind in ("glb", "gltf"):
        vertices = vertices @ Y_UP_TO_Z_UP[:3, :3].T
    m = trimesh.Trimesh(vertices, faces, process=False)
    m.merge_vertices(digits_vertex=9)
    m.update_faces(m.nondegenerate_faces())
    m.remove_unreferenced_vertices()
    return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)


def import_mesh(project, file: Path, name: str, kind: str = "rigid", position=(0.0, 0.0, 0.0)):
    """Copy a mesh file into the project's assets and add it to the scene as a root body.

    The file is read first, so a bad file leaves the project as it was.
    Returns the new Body. The copy is content-addressed, so the scene keeps
    working if the original file moves or changes.
    """
    from .io import load_scene, save_scene
    from .ir import Scene

    file = Path(file)
    load_mesh_file(file)                       # refuse before touching the project
    scene = load_scene(project)
    if name in scene.body_names:
        raise MeshFileError(f"{file}: the scene already has a body named {name!r}")
    asset = project.put_asset(file.read_bytes(), FORMATS[file.suffix.lower()])
    rel = project.asset_path(asset).relative_to(project.path).as_posix()
    d = scene.to_dict()
    if not scene.bodies and scene.name == "untitled":
        d["name"] = project.name
    d["bodies"].append({"name": name, "kind": kind, "geometry": {"source": "mesh", "path": rel}})
    d["rest"][name] = [*map(float, position), 1.0, 0.0, 0.0, 0.0]
    new = Scene.from_dict(d)
    save_scene(project, new, action=f"import mesh {file.name} as {name}")
    return new.body(name)
