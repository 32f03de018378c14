"""Scripted model replies and DB comparisons shared by the agent tests."""
from __future__ import annotations

import json

SCENE_BRIEF = "A grey wall with a doorway 0.9 m wide; a wooden panel 1.2 m wide leans by the wall."
MOTION_BRIEF = "The robot walks to the panel, grasps it at both edges, tilts it and carries it through."


def good_plan(prompt: str = "carry the panel through the door") -> dict:
    return {
        "prompt": prompt, "scene_brief": SCENE_BRIEF, "motion_brief": MOTION_BRIEF,
        "shots": [{"id": "wide", "camera": "cam_wide", "start": 1001, "end": 1120}],
        "states": [{"id": "start", "frame": 1001, "shot": "wide", "description": "panel leans on the wall",
                    "objects": ["panel"]},
                   {"id": "lift", "frame": 1048, "shot": "wide", "description": "the panel is lifted",
                    "objects": ["panel"]}],
        "objects": [{"name": "panel", "description": "a wooden panel, 1.2 x 0.6 x 0.02 m"}],
        "events": [{"id": "grasp_panel", "kind": "grasp", "subjects": ["panel"], "window": [1020, 1040],
                    "params": {}, "after": []}],
        "motion": [{"segment": "start..lift", "tool": "interpolate", "notes": "slow lift"}],
    }


def plan_replies(plan: dict | str) -> list[dict]:
    """Scene brief, motion brief, then the planner's reply."""
    text = plan if isinstance(plan, str) else json.dumps(plan)
    return [{"content": SCENE_BRIEF}, {"content": MOTION_BRIEF}, {"content": text}]


# The agent's log: a run that fails is recorded there (its tokens, time and reason), and nowhere else.
LOG = ("agent_steps", "audit")


def db_dump(project, skip: tuple[str, ...] = ()) -> dict:
    """Every row of every table, to compare a project before and after."""
    tables = [r[0] for r in project.db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").fetchall()]
    return {t: project.db.execute(f"SELECT * FROM {t}").fetchall() for t in tables if t not in skip}
