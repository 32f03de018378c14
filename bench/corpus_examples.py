"""The five example films exported to animated glTF for the corpus benchmark, with the simple verifier's truth.

Each committed example project (projects/<name>) is read with the studio's own project, scene and
kinematics code (that is the export, not the verifying): every body becomes a node with its mesh in
the body's frame and a translation and rotation key at every frame (static bodies none; the ground
and self-propelled or buoyant bodies are marked in the node's extras). The truth for the simple
verifier gets each body's convex pieces: the body itself where it is within 0.1% of its hull's
volume, else each connected part that is; any other part is handed over as a mesh (vertices and
faces), which the simple verifier measures exactly (python-fcl's mesh distance, and the deepest
point of either surface inside the other, proven by cutting the surfaces where it is undecided).
Joints, declared overlaps and plans do not travel in a glb: both verifiers judge the same file.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import ConvexHull

from corpus_films import Film

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ["doorway", "crates", "shelving", "marble_run", "dog_paper"]


def matrix_quat(m):
    """(F,3,3) rotations -> (F,4) xyzw."""
    from scipy.spatial.transform import Rotation
    return Rotation.from_matrix(m).as_quat()


def nearly_convex(mesh) -> bool:
    try:
        return bool(mesh.is_watertight and abs(mesh.volume - ConvexHull(mesh.vertices).volume)
                    <= 1e-3 * ConvexHull(mesh.vertices).volume)
    except Exception:
        return False


def pieces_of(mesh):
    if nearly_convex(mesh):
        return [np.asarray(mesh.vertices, float)], []
    hulls, meshes = [], []
    for part in mesh.split(only_watertight=False):
        if nearly_convex(part):
            hulls.append(np.asarray(part.vertices, float))
        else:
            meshes.append(part)
    return hulls, meshes


def export(name: str) -> Film:
    from studio.scene.io import load_scene
    from studio.scene.kinematics import tracks_world
    from studio.scene.meshes import scene_meshes
    from studio.store.project import Project
    from studio.timeline.film import load_film_tracks
    project = Project.open(ROOT / "projects" / name)
    scene = load_scene(project)
    meshes = scene_meshes(scene, project.path)
    tracks = load_film_tracks(project)
    world = tracks_world(scene, tracks)
    film = Film(f"example_{name}", tracks.n_frames)
    for body in scene.bodies:
        if body.name not in meshes:
            continue
        mesh = trimesh.Trimesh(meshes[body.name].vertices, meshes[body.name].faces, process=True)
        w = np.asarray(world[body.name], float)
        role = "ground" if body.kind == "ground" else ("self" if body.has("self_propelled") or body.has("buoyant")
                                                       else None)
        hulls, parts = pieces_of(mesh)
        film.add(body.name, mesh, w[:, :3, 3], matrix_quat(w[:, :3, :3]), moving=not body.is_static, role=role,
                 pieces=hulls)
        film.bodies[body.name]["meshes"] = parts
    return film


FILMS = {f"example_{n}": (lambda n=n: export(n)) for n in EXAMPLES}
