"""Reading and writing the Scene IR in a project's `scene_objects` table.

One row per body, joint, named frame, camera, material, allowed overlap and
rest transform, so a change to one object is one row and shows in the audit.
"""
from __future__ import annotations

import json

from studio.store.json_reading import stored
from studio.store.project import Project

from studio.scene.ir import Scene
from studio.scene.reading import read_memo

KINDS = {"materials": "material", "bodies": "body", "joints": "joint", "frames": "frame",
         "cameras": "camera", "allowed_overlaps": "overlap"}


def save_scene(project: Project, scene: Scene, actor: str = "person", action: str = "edit scene") -> None:
    d = scene.to_dict()
    rows = [{"kind": "scene", "name": "scene", "position": 0, "body": json.dumps({"name": scene.name})}]
    for key, kind in KINDS.items():
        for i, obj in enumerate(d[key]):
            name = obj.get("name") or f"{obj.get('a')}|{obj.get('b')}"
            rows.append({"kind": kind, "name": name, "position": i, "body": json.dumps(obj, sort_keys=True)})
    for name, t in d["rest"].items():
        rows.append({"kind": "rest", "name": name, "position": 0, "body": json.dumps(t)})
    with project.transaction():
        project.db.execute("DELETE FROM scene_objects")
        project.db["scene_objects"].insert_all(rows)
        project.audit(actor, action, "scene", {"bodies": len(d["bodies"]), "joints": len(d["joints"])})


def load_scene(project: Project) -> Scene:
    """The project's scene (one shared object per project inside a read-only pass)."""
    memo = read_memo()
    if memo is None:
        return _load_scene(project)
    key = ("scene", id(project))
    if key not in memo:
        memo[key] = (project, _load_scene(project))
    return memo[key][1]


def _load_scene(project: Project) -> Scene:
    rows = list(project.db.query("SELECT kind, name, body FROM scene_objects ORDER BY kind, position"))
    d: dict = {key: [] for key in KINDS}
    d["rest"] = {}
    by_kind = {v: k for k, v in KINDS.items()}
    for r in rows:
        body = stored(r["body"], project.path / "studio.db", "scene_objects", f"{r['kind']} {r['name']}", "body")
        if r["kind"] == "scene":
            d["name"] = body.get("name", project.name)
        elif r["kind"] == "rest":
            d["rest"][r["name"]] = body
        else:
            d[by_kind[r["kind"]]].append(body)
    return Scene.from_dict(d, where=f"{project.path}/studio.db:scene_objects")
