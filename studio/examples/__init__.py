"""Example films: each is a scene module and a story module, built from code.

The story module gives author_plan, author_states and author_motion; the scene
module gives build_scene and create(path). `studio demo` and
`scripts/make_examples.sh` run them through studio.examples.pipeline.
"""
EXAMPLES = {
    "doorway": ("studio.examples.doorway", "studio.examples.doorway_story"),
    "marble_run": ("studio.examples.marble_run", "studio.examples.marble_run_story"),
    "dog_paper": ("studio.examples.dog_paper", "studio.examples.dog_paper_story"),
    "crates": ("studio.examples.crates", "studio.examples.crates_story"),
}
