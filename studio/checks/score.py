"""The paper's scorer: penetration rate, floating rate and joint violation rate of a film.

P_m = frames with at least one counted penetrating pair / frames;
F_m = unsupported dynamic body-frames / dynamic body-frames;
J_m = joint-frames out of limits / joint-frames.
A film is a project folder (its baked tracks) or an animated .glb.
"""
from __future__ import annotations

from pathlib import Path

from studio.checks.glb import load_glb_verification
from studio.checks.report import Report, required_checks_pass
from studio.checks.run import approved_states, run_checks, tool_attachments

SCORED = ("NoPenetration", "Supported", "JointLimits", "AnimationWellFormed", "EventsSatisfied")


def rates(reports: list[Report]) -> dict:
    by = {r.name: r for r in reports}

    def metric(name: str, key: str) -> float | None:
        r = by.get(name)
        return None if r is None or r.verdict == "error" else float(r.metrics.get(key, 0.0))
    pen = by.get("NoPenetration")
    return {"frames": int(pen.metrics.get("frames", 0)) if pen else 0,
            "penetration_rate": metric("NoPenetration", "penetration_rate"),
            "between_rate": metric("NoPenetration", "between_rate"),
            "frame_pairs_with_penetration": int(pen.metrics.get("frame_pairs_with_penetration", 0)) if pen else 0,
            "frame_pairs_unsettled": int(pen.metrics.get("frame_pairs_unsettled", 0)) if pen else 0,
            "floating_rate": metric("Supported", "floating_rate"),
            "joint_violation_rate": metric("JointLimits", "joint_violation_rate"),
            "required_pass": required_checks_pass(reports)}


def check_film(path: str | Path, names: tuple[str, ...] | None = None) -> list[Report]:
    """Run the verifiers on a project folder or a .glb without storing anything."""
    path = Path(path)
    if path.is_dir():                 # a project: its libraries load only then
        from studio.scene.io import load_scene
        from studio.scene.meshes import scene_meshes
        from studio.store.project import Project
        from studio.timeline.film import load_film_tracks
        with Project.open(path) as project:
            scene = load_scene(project)
            tracks = load_film_tracks(project)
            if tracks is None:
                raise ValueError(f"{path}: nothing is baked yet (no segments in the tracks table)")
            states = [(f, p.completed(scene), i) for f, p, i in approved_states(project)]
            return run_checks(scene, scene_meshes(scene, project.path), tracks, plan=project.get_doc("plan"),
                              states=states, names=list(names) if names else None,
                              attachments=tool_attachments(project))
    scene, meshes, tracks, growth, plan, holds = load_glb_verification(path)
    return run_checks(scene, meshes, tracks, names=list(names) if names else None, growth=growth, plan=plan,
                      attachments=holds)
