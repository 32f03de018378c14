"""The bare baseline beside each example: the same film in a single pass.

Interpolate straight from the first key state to the last over the whole
frame range — no storyboard in between, no motion tools, no repair — so the
score table measures what the method gains instead of claiming it. The
baseline is its own project (same scene and plan, no reviews), named
`<example>-single-pass`.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from studio.scene.io import load_scene, save_scene
from studio.store.project import Project
from studio.timeline.film import save_segment, segment_id
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.storyboard import list_states


def single_pass(source: Path, out: Path) -> Path:
    """Write the single-pass version of the project at `source` to the new folder `out`."""
    with Project.open(source) as src:
        scene = load_scene(src)
        plan = src.get_doc("plan")
        states = list_states(src)
        if len(states) < 2:
            raise ValueError(f"{source}: a single-pass baseline needs at least two key states")
        first, last = states[0], states[-1]
        with Project.create(out, name=f"{src.name}-single-pass", fps=src.fps, frame_start=src.frame_start) as dst:
            save_scene(dst, scene, actor="baseline", action="copy scene for the single-pass baseline")
            if plan:
                dst.put_doc("plan", plan, actor="baseline")
            tracks = interpolate_poses(scene, [(first.frame, first.pose.completed(scene)),
                                               (last.frame, last.pose.completed(scene))])
            save_segment(dst, segment_id(first.id, last.id), tracks, tool="single-pass interpolation",
                         bounds_hash="", actor="baseline")
    meshes = Path(source) / "assets" / "meshes"      # same scene, same tessellated meshes
    if meshes.is_dir():
        shutil.copytree(meshes, Path(out) / "assets" / "meshes", dirs_exist_ok=True)
    for b in scene.bodies:                           # and the mesh files its bodies name (a robot's links, a skin)
        for g in (b.geometry, b.visual):
            if g is not None and g.source in ("mesh", "skin"):
                to = Path(out) / g.path
                if not to.exists():
                    to.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(Path(source) / g.path, to)
    return out
