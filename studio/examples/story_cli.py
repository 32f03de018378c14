"""`python -m studio.examples.<name>_story storyboard|motion PATH`: an example's two halves, with a
person's review in between (`studio board approve PATH STATE`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from studio.store.project import Project
from studio.timeline.gate import GateError


def main(name: str, scene_module, story_module, argv: list[str] | None = None) -> int:
    """storyboard: a new project with the plan and key states; motion: bake the approved film."""
    parser = argparse.ArgumentParser(prog=f"{name}_story")
    parser.add_argument("step", choices=("storyboard", "motion"))
    parser.add_argument("path", type=Path)
    args = parser.parse_args(argv)
    if args.step == "storyboard":
        with scene_module.create(args.path) as project:
            story_module.author_plan(project)
            for state in story_module.author_states(project):
                print(f"state {state.id:<12} frame {state.frame}: review it with  "
                      f"studio board approve {args.path} {state.id}")
        return 0
    with Project.open(args.path) as project:
        try:
            for seg in story_module.author_motion(project):
                print(f"baked {seg}")
        except GateError as e:
            print(f"{name}_story: {e}")
            return 1
    return 0
