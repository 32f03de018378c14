"""The bake job's story tool: an example film's own motion (simulation, IK,
footsteps) baked in the job's process, through the same gate and contract as
interpolation. Lives here because studio.examples sits above studio.jobs."""
from __future__ import annotations

import importlib
import sys

from studio.jobs.bake_entry import main
from studio.timeline.film import list_segments

from . import EXAMPLES


def story(project, scene, segments, actor, baked) -> None:
    """Run the example's author_motion for these segments; refuse a scene that is no example."""
    if scene.name not in EXAMPLES:
        raise ValueError(f"scene name {scene.name!r}: the story tool needs one of the examples "
                         f"{sorted(EXAMPLES)}; use the interpolate tool")
    module = importlib.import_module(EXAMPLES[scene.name][1])
    before = {r["segment"]: r["at"] for r in list_segments(project)}
    module.author_motion(project, segments=list(segments))
    after = {r["segment"]: r["at"] for r in list_segments(project)}
    for seg in segments:
        if seg in after and after[seg] != before.get(seg):
            baked(seg)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], story))
