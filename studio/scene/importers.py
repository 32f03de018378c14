"""Reading mesh files (glTF 2.0 .glb/.gltf, OBJ, STL) into triangle arrays.

glTF is +Y up by its specification; the studio is +Z up, so glTF files are
turned +90 degrees about X on import. OBJ and STL carry no convention: they
are read as metres, +Z up. Every failure names the file and what was wrong.

An import brings everything or nothing: a .gltf that names external buffers
and images is copied with every file it names into `assets/gltf/<hash>/`
(the same relative paths, so the .gltf is kept byte for byte), a reference
outside the .gltf's own folder is refused, and the copy must load from inside
the project before the scene changes; on any failure nothing is added.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import urllib.parse
from pathlib import Path

import numpy as np
import trimesh

from studio.scene.mesh_limits import MeshFileError, precheck
from studio.store.beneath import ensure_folder
from studio.store.names import NameProblem, inside, relative_inside

FORMATS = {".glb": "glb", ".gltf": "gltf", ".obj": "obj", ".stl": "stl"}
Y_UP_TO_Z_UP = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], float)


__all__ = ["FORMATS", "MeshFileError", "import_mesh", "load_mesh_file"]


def resolve_path(path: str, project_dir: Path | None) -> Path:
    """A geometry's mesh path: relative to the project folder and inside its assets/ (never absolute or climbing)."""
    if project_dir is None:
        raise MeshFileError(f"{path}: a mesh path needs the project folder")
    try:
        relative_inside(path, "assets", "geometry.path")
        return inside(Path(project_dir) / "assets", Path(path).relative_to("assets"), "geometry.path")
    except NameProblem as e:
        raise MeshFileError(str(e)) from None


def load_mesh_file(path: Path, face_limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, faces) of every triangle in the file, in metres, +Z up; a file past the face
    limit, or with a fault the reader would trip on, is refused first (`mesh_limits.precheck`)."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise MeshFileError(f"{path}: unknown mesh format {path.suffix!r}; expected one of "
                            f"{', '.join(FORMATS)}")
    if not path.is_file():
        raise MeshFileError(f"{path}: no such mesh file")
    if path.stat().st_size == 0:
        raise MeshFileError(f"{path}: the file is empty")
    precheck(path, kind, face_limit)
    try:
        loaded = trimesh.load(str(path), file_type=kind, force="mesh", process=False)
    except Exception as e:   # trimesh raises many kinds for malformed input
        from studio.store.shown import shown
        raise MeshFileError(f"{path}: not a readable {kind.upper()} file (the reader stopped: "
                            f"{shown(str(e), 160)})") from None
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


def gltf_references(file: Path) -> list[tuple[str, str]]:
    """(field, uri) of every external file a .gltf names (buffers and images; data: URIs are inline)."""
    try:
        doc = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MeshFileError(f"{file}: not a readable GLTF file ({e})") from None
    if not isinstance(doc, dict):
        raise MeshFileError(f"{file}: not a readable GLTF file (expected a JSON object)")
    refs = []
    for key in ("buffers", "images"):
        items = doc.get(key) or []
        if not isinstance(items, list):
            raise MeshFileError(f"{file}: {key}: expected a list")
        for i, item in enumerate(items):
            uri = item.get("uri") if isinstance(item, dict) else None
            if isinstance(uri, str) and not uri.startswith("data:"):
                refs.append((f"{key}[{i}].uri", uri))
    return refs


def referenced_files(file: Path) -> dict[str, Path]:
    """{path inside the .gltf's folder: source file} for every file it names.
    A reference that leaves that folder (.., an absolute path, a link, a URL) is refused."""
    file = Path(file)
    folder = file.parent.resolve()
    out: dict[str, Path] = {}
    for where, uri in gltf_references(file):
        parts = urllib.parse.urlsplit(uri)
        if parts.scheme or parts.netloc:
            raise MeshFileError(f"{file}: {where} is {uri!r}; only files beside the .gltf can be imported, not URLs")
        rel = os.path.normpath(urllib.parse.unquote(parts.path))
        target = (file.parent / rel).resolve()
        if os.path.isabs(rel) or rel.split(os.sep)[0] == ".." or not target.is_relative_to(folder):
            raise MeshFileError(f"{file}: {where} {uri!r} points outside {folder}; only files in the .gltf's "
                                f"own folder are imported (copy it there)")
        if not target.is_file():
            raise MeshFileError(f"{file}: {where} names {uri!r}, which is missing (expected {target})")
        out[Path(rel).as_posix()] = target
    return out


def mesh_file_digest(path: Path) -> str:
    """Hash of a mesh file and, for a .gltf, of every file it names (a changed .bin is a changed mesh)."""
    path = Path(path)
    h = hashlib.sha256(path.read_bytes())
    if path.suffix.lower() == ".gltf":
        try:
            refs = referenced_files(path)
        except MeshFileError:
            refs = {}
        for rel, src in sorted(refs.items()):
            h.update(rel.encode() + b"\0" + hashlib.sha256(src.read_bytes()).digest())
    return h.hexdigest()


def _copy_bundle(project, file: Path, refs: dict[str, Path]) -> tuple[str, bool]:
    """Copy a .gltf and the files it names into assets/gltf/<hash>/ at once (a folder renamed
    into place when complete). Returns (its path in the project, whether this call made it)."""
    from studio.store.project import umask, write_atomic
    items = [(file.name, file)] + sorted(refs.items())
    h = hashlib.sha256()
    for rel, src in items:
        h.update(rel.encode() + b"\0" + hashlib.sha256(src.read_bytes()).digest())
    final = Path(project.path) / "assets" / "gltf" / h.hexdigest()[:32]
    rel_path = (final / file.name).relative_to(project.path).as_posix()
    if final.is_dir():
        return rel_path, False
    ensure_folder(project.path, "assets/gltf")           # no link on the way
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=".import-"))
    try:
        for rel, src in items:
            write_atomic(tmp / rel, src.read_bytes())
        os.chmod(tmp, 0o777 & ~umask())         # mkdtemp makes 0700
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return rel_path, True


def import_mesh(project, file: Path, name: str, kind: str = "rigid", position=(0.0, 0.0, 0.0)):
    """Copy a mesh file (and every file a .gltf names) into the project's assets and add it
    to the scene as a root body.

    The file is read first, so a bad file leaves the project as it was; the
    copy must load from inside the project before the scene is saved, and if
    anything fails what was copied is removed again. Returns the new Body. The
    copy is content-addressed, so the scene keeps working if the original
    files move or change.
    """
    from studio.scene.io import load_scene, save_scene
    from studio.scene.ir import Scene

    file = Path(file)
    ext = FORMATS.get(file.suffix.lower())
    refs = referenced_files(file) if ext == "gltf" and file.is_file() else {}
    load_mesh_file(file)                       # refuse before touching the project
    scene = load_scene(project)
    if name in scene.body_names:
        raise MeshFileError(f"{file}: the scene already has a body named {name!r}")
    project.require_writable()
    made: Path | None = None
    try:
        if refs:
            rel, new_copy = _copy_bundle(project, file, refs)
            made = (Path(project.path) / rel).parent if new_copy else None
        else:
            data = file.read_bytes()
            asset_path = project.asset_path(hashlib.sha256(data).hexdigest(), ext)
            new_copy = not asset_path.exists()
            asset_path = project.asset_path(project.put_asset(data, ext))
            made = asset_path if new_copy else None
            rel = asset_path.relative_to(project.path).as_posix()
        try:
            load_mesh_file(Path(project.path) / rel)   # the copy stands on its own inside the project
        except MeshFileError as e:
            raise MeshFileError(f"{file}: the copy in the project does not load ({e})") from None
        d = scene.to_dict()
        if not scene.bodies and scene.name == "untitled":
            d["name"] = project.name
        d["bodies"].append({"name": name, "kind": kind, "geometry": {"source": "mesh", "path": rel}})
        d["rest"][name] = [*map(float, position), 1.0, 0.0, 0.0, 0.0]
        new = Scene.from_dict(d)
        save_scene(project, new, action=f"import mesh {file.name} as {name}")
    except BaseException:
        if made is not None:                    # nothing added: take back what this import copied
            shutil.rmtree(made, ignore_errors=True) if made.is_dir() else made.unlink(missing_ok=True)
        raise
    return new.body(name)
