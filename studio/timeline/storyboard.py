"""Storyboard states: full static poses of the scene at key frames, stored in
the project. A state's content hash binds its pose and its frame to the scene
design, the geometry and the cameras, so any change to those (moving the state
to another frame included) shows as a new hash."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from studio.scene.ir import Scene, canonical_hash
from studio.scene.meshes import geometry_hash, scene_design_id
from studio.scene.pose import Pose
from studio.scene.reading import read_memo
from studio.store.json_reading import JsonRefused, stored
from studio.store.names import check_id
from studio.store.project import Project, now


@dataclass
class State:
    id: str
    frame: int
    pose: Pose
    shot: str = ""
    description: str = ""
    still: str = ""                       # asset name of the latest still, if rendered
    visible: list[str] = field(default_factory=list)


def content_hash(scene: Scene, pose: Pose, frame: int) -> str:
    """hash(pose, frame, design_id, geometry hashes, cameras) per DESIGN.md."""
    return canonical_hash({"pose": pose.completed(scene).to_dict(), "frame": int(frame), **_scene_part(scene)})[:16]


def _scene_part(scene: Scene) -> dict:
    """The scene's share of every state's content hash (once per scene inside a read-only pass)."""
    memo = read_memo()
    key = ("content_scene", id(scene))
    if memo is not None and key in memo:
        return memo[key][1]
    part = {"design_id": scene_design_id(scene),
            "geometry": {b.name: geometry_hash(b.geometry) for b in scene.bodies},
            "cameras": [c.to_dict() for c in scene.cameras]}
    if memo is not None:
        memo[key] = (scene, part)
    return part


def list_states(project: Project) -> list[State]:
    rows = project.db.query("SELECT * FROM states ORDER BY frame, id")
    return [_from_row(r, project.path / 'studio.db') for r in rows]


def get_state(project: Project, state_id: str) -> State | None:
    rows = list(project.db.query("SELECT * FROM states WHERE id = ?", [state_id]))
    return _from_row(rows[0], project.path / 'studio.db') if rows else None


def put_state(project: Project, scene: Scene, state: State, actor: str = "person",
              action: str = "set state") -> None:
    # Through JSON and back, so the hash stored now equals the hash of the pose as it reads back
    # (a pose given with integer coordinates would otherwise hash differently once stored).
    check_id(state.id, "state.id")
    if state.shot:
        check_id(state.shot, f"state {state.id}.shot")
    where = f"state {state.id}.pose"
    pose = Pose.from_dict(json.loads(json.dumps(state.pose.completed(scene, where).to_dict())), scene, where)
    with project.transaction():
        project.db["states"].upsert({
            "id": state.id, "frame": int(state.frame), "shot": state.shot,
            "description": state.description, "pose": json.dumps(pose.to_dict(), sort_keys=True),
            "content_hash": content_hash(scene, pose, state.frame), "design_id": scene_design_id(scene),
            "visible": json.dumps(state.visible), "still": state.still, "updated": now()}, pk="id")
        project.audit(actor, action, f"state:{state.id}", {"frame": state.frame})


def delete_state(project: Project, state_id: str, actor: str = "person") -> None:
    with project.transaction():
        project.db.execute("DELETE FROM states WHERE id = ?", [state_id])
        project.audit(actor, "delete state", f"state:{state_id}", {})


def _from_row(r: dict, dbfile: str = "studio.db") -> State:
    pose = stored(r["pose"], dbfile, "states", r["id"], "pose", default={})
    if not isinstance(pose, dict):
        raise JsonRefused(f"{dbfile}: states row {r['id']!r}, field pose: expected a JSON object")
    return State(id=r["id"], frame=int(r["frame"]), pose=Pose.from_dict(pose),
                 shot=r["shot"] or "", description=r["description"] or "", still=r["still"] or "",
                 visible=stored(r["visible"], dbfile, "states", r["id"], "visible", default=[]))
