"""Reviews: a person's approve or reject of a storyboard state.

A review is bound to what the person saw: the state's content hash, the scene
design_id and the bodies visible through the state's cameras at review time.
When any of those moves on, the review is stale (see `gate`). Every review is
a row in `reviews` and a line in the audit log.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.meshes import scene_design_id
from studio.store.project import Project, now

from .plan import load_plan, shot_camera
from .storyboard import State, content_hash, get_state
from .visibility import visible_bodies

VERDICTS = ("approve", "reject")


@dataclass
class Review:
    id: int
    state_id: str
    verdict: str
    note: str
    reviewer: str
    at: str
    content_hash: str
    design_id: str
    visible: list[str]


def state_cameras(scene: Scene, plan: dict | None, state: State) -> list[str]:
    """The cameras a state is seen through: its shot's camera, a camera named
    like the shot, or every camera of the scene."""
    names = {c.name for c in scene.cameras}
    cam = shot_camera(plan, state.shot)
    if cam in names:
        return [cam]
    if state.shot in names:
        return [state.shot]
    return sorted(names)


def state_visible(project: Project, scene: Scene, plan: dict | None, state: State) -> list[str]:
    return visible_bodies(scene, state.pose, state_cameras(scene, plan, state), project.path)


def record_review(project: Project, state_id: str, verdict: str, note: str = "",
                  reviewer: str = "person", scene: Scene | None = None) -> Review:
    """Store a review of the state as it is now; returns it (with its row id)."""
    if verdict not in VERDICTS:
        raise ValueError(f"review verdict: expected one of {VERDICTS}, got {verdict!r}")
    state = get_state(project, state_id)
    if state is None:
        raise ValueError(f"state {state_id!r}: no such state in {project.path}")
    scene = scene or load_scene(project)
    visible = state_visible(project, scene, load_plan(project), state)
    row = {"state_id": state_id, "verdict": verdict, "note": note, "reviewer": reviewer, "at": now(),
           "content_hash": content_hash(scene, state.pose), "design_id": scene_design_id(scene),
           "visible": json.dumps(visible)}
    with project.transaction():
        rid = project.db["reviews"].insert(row).last_pk
        project.audit(reviewer, verdict, f"state:{state_id}",
                      {"review": rid, "note": note, "content_hash": row["content_hash"], "visible": visible})
    return _review({**row, "id": rid})


def withdraw_review(project: Project, review_id: int, actor: str = "person") -> None:
    """Remove a review (undo); the audit log keeps both the review and its withdrawal."""
    with project.transaction():
        project.db.execute("DELETE FROM reviews WHERE id = ?", [review_id])
        project.audit(actor, "withdraw review", "", {"review": review_id})


def latest_review(project: Project, state_id: str) -> Review | None:
    rows = list(project.db.query("SELECT * FROM reviews WHERE state_id = ? ORDER BY id DESC LIMIT 1",
                                 [state_id]))
    return _review(rows[0]) if rows else None


def list_reviews(project: Project, state_id: str | None = None) -> list[Review]:
    if state_id is None:
        rows = project.db.query("SELECT * FROM reviews ORDER BY id")
    else:
        rows = project.db.query("SELECT * FROM reviews WHERE state_id = ? ORDER BY id", [state_id])
    return [_review(r) for r in rows]


def _review(r: dict) -> Review:
    return Review(int(r["id"]), r["state_id"], r["verdict"], r["note"] or "", r["reviewer"] or "",
                  r["at"] or "", r["content_hash"] or "", r["design_id"] or "", json.loads(r["visible"] or "[]"))
