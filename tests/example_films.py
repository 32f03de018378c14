"""Example films replayed from their calls files (resources/examples/<name>/calls.jsonl),
stage by stage, for the tests that look inside them."""
from __future__ import annotations

from pathlib import Path

from studio.examples import calls_file
from studio.examples.pipeline import by_stage, example_calls, replay_example, replay_stages, run_pipeline
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.store.project import Project
from studio.store.reports import load_reports
from studio.timeline.film import load_film_tracks
from studio.timeline.storyboard import list_states

STORYBOARD = ("scene", "plan", "storyboard")


def storyboard(name: str, path: Path) -> Project:
    """The example's project up to its verified key states, nothing reviewed or baked."""
    return replay_stages(name, path, STORYBOARD)


def scene_only(name: str, path: Path) -> Project:
    return replay_stages(name, path, ("scene",))


def example_scene(name: str, path: Path) -> Scene:
    with scene_only(name, path) as project:
        return load_scene(project)


def finish(name: str, project: Project, stages: tuple[str, ...] = ("review", "motion")) -> None:
    """Replay the example's remaining stages (its reviews, then its motion) into `project`."""
    part = by_stage(example_calls(name), str(calls_file(name)))
    for st in stages:
        replay_example(project, part[st], str(calls_file(name)))


def state_reports(project: Project) -> dict:
    """Each key state's stored reports (the calls file ran the verifiers)."""
    return {s.id: load_reports(project, f"state:{s.id}")[0] for s in list_states(project)}


def replayed(tmp_path_factory, name: str):
    """Yield (summary, open project, film tracks) of the example `name` replayed without rendering."""
    out = tmp_path_factory.mktemp(name) / name
    summary = run_pipeline(name, out, render=False)
    with Project.open(out) as project:
        yield summary, project, load_film_tracks(project)
