"""What every example film shares: a new project holding its scene, meshes cached."""
from __future__ import annotations

from pathlib import Path

from studio.scene.io import save_scene
from studio.scene.ir import Scene
from studio.scene.meshes import build_body_mesh
from studio.store.project import Project


def create_project(path: str | Path, scene: Scene, action: str) -> Project:
    """A new project folder (fps 24, frames from 1001) with `scene` saved and every mesh built."""
    project = Project.create(path, name=scene.name, fps=24, frame_start=1001)
    save_scene(project, scene, actor="example", action=action)
    for body in scene.bodies:
        build_body_mesh(body, project.path)
    return project
