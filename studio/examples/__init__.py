"""Example films: each is a folder `resources/examples/<name>/` holding `calls.jsonl`,
the tool calls a person or the agent would make, replayed by studio.examples.pipeline
(`studio demo NAME`, `make examples`)."""
from __future__ import annotations

import os
from pathlib import Path


def examples_root() -> Path:
    """The folder of example calls files: KEYPOSE_EXAMPLES if set, else the one shipped beside the code."""
    if os.environ.get("KEYPOSE_EXAMPLES"):
        return Path(os.environ["KEYPOSE_EXAMPLES"])
    return Path(__file__).resolve().parents[2] / "resources" / "examples"


def example_names() -> list[str]:
    """Every example folder that holds a calls file, by name."""
    root = examples_root()
    return sorted(p.parent.name for p in root.glob("*/calls.jsonl")) if root.is_dir() else []


def calls_file(name: str) -> Path:
    return examples_root() / name / "calls.jsonl"
