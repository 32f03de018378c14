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


def bake_plan(project: Project, stack=None, segments: list[str] | None = None, actor: str = "example") -> list[str]:
    """Bake every segment the plan lists with the motion tool and parameters it names (the
    generic bake, through the gate and the command stack); returns the segments baked."""
    from studio.timeline.commands import CommandStack
    from studio.timeline.plan import load_plan, plan_segments
    from studio.timeline.segment_commands import AuthorSegment

    stack = stack or CommandStack()
    done = []
    for seg in plan_segments(load_plan(project) or {}):
        if segments is not None and seg not in segments:
            continue
        stack.run(AuthorSegment(project, seg, actor))
        done.append(seg)
    return done
