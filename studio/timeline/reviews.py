"""Reviews: a person's approve or reject of a storyboard state.

A review is bound to what the person saw: the state's content hash, the scene
design_id and the bodies visible through the state's cameras at review time.
When any of those moves on, the review is stale (see `gate`). Every review is
a row in `reviews` and a line in the audit log, signed with the reviewer's own
key (`store.keys`) over all of that, the project's id and the audit row it
follows, so neither can be edited, copied or moved without the key. The
project keeps each reviewer's public key in `reviewers`, registered once
through the audit log.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.meshes import scene_design_id
from studio.store import audit as chain
from studio.store import keys
from studio.store.project import Project, now

from studio.timeline.plan import load_plan, shot_camera
from studio.timeline.storyboard import State, content_hash, get_state
from studio.timeline.visibility import visible_bodies

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
    signature: str = ""
    chain: str = ""

    @property
    def signed(self) -> bool:
        return bool(self.signature)


def canonical(fields: dict) -> bytes:
    """The exact bytes a signature covers."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def review_message(project_id: str, state_id: str, verdict: str, note: str, reviewer: str, at: str,
                   content_hash: str, design_id: str, visible: list[str], chain_at: str) -> bytes:
    return canonical({"signs": "review", "project": project_id, "state": state_id, "verdict": verdict,
                      "note": note, "reviewer": reviewer, "at": at, "content_hash": content_hash,
                      "design_id": design_id, "visible": list(visible), "chain": chain_at})


def withdraw_message(project_id: str, review_id: int, review_signature: str, actor: str, at: str,
                     chain_at: str) -> bytes:
    return canonical({"signs": "withdraw", "project": project_id, "review": int(review_id),
                      "review_signature": review_signature, "actor": actor, "at": at, "chain": chain_at})


def register_message(project_id: str, name: str, kind: str, public_key: str, chain_at: str) -> bytes:
    return canonical({"signs": "register", "project": project_id, "name": name, "kind": kind,
                      "public_key": public_key, "chain": chain_at})


def reviewer_kinds(project: Project) -> dict[str, str]:
    """name -> person | demo | replay | batch, for every registered reviewer."""
    return {r["name"]: r["kind"] for r in project.db.query("SELECT name, kind FROM reviewers")}


def by_whom(reviewer: str, kind: str | None = None) -> str:
    """How a reviewer is named to people: a person by name, a studio run by its kind, never as a person."""
    kind = kind or keys.reviewer_kind(reviewer)
    return reviewer if kind == "person" else f"a {kind} run (not a person)"


def _remember(project: Project) -> None:
    """After a signed row commits, note it in this user's config (see `keys.remember_signed_row`)."""
    if project.db.conn.in_transaction:  # an outer transaction may still roll it back: note it once committed
        project.after_commit(lambda: _remember(project))
        return
    row, h = chain.head(project.db.conn)
    at = project.db.execute("SELECT at FROM audit WHERE id = ?", [row]).fetchone()
    keys.remember_signed_row(project.project_id, project.path, row, h, at[0] if at else "")


def reviewer_key(project: Project, name: str):
    """This user's signing key for `name`, registered in the project on first use.

    Refuses a name the project already knows under another key: that is another
    reviewer's name, or a key that was replaced."""
    key = keys.signing_key(name)
    public = keys.public_hex(key)
    row = project.db.execute("SELECT public_key FROM reviewers WHERE name = ?", [name]).fetchone()
    if row is not None:
        if row[0] != public:
            raise ValueError(f"reviewer {name!r}: this project knows {name} by key {keys.fingerprint(row[0])}, "
                             f"but your key {keys.key_path(name)} is {keys.fingerprint(public)}; "
                             f"review under your own name (--reviewer)")
        return key
    kind = keys.reviewer_kind(name)
    with project.transaction():
        _, prev = chain.head(project.db.conn)
        sig = keys.sign(key, register_message(project.project_id, name, kind, public, prev))
        at = now()
        project.db["reviewers"].insert({"name": name, "kind": kind, "public_key": public, "added": at})
        project.audit(name, "register reviewer", f"reviewer:{name}",
                      {"name": name, "kind": kind, "public_key": public, "chain": prev, "signature": sig})
    _remember(project)
    return key


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
    """Store a review of the state as it is now, signed with the reviewer's key; returns it (with its row id)."""
    if verdict not in VERDICTS:
        raise ValueError(f"review verdict: expected one of {VERDICTS}, got {verdict!r}")
    state = get_state(project, state_id)
    if state is None:
        raise ValueError(f"state {state_id!r}: no such state in {project.path}")
    scene = scene or load_scene(project)
    visible = state_visible(project, scene, load_plan(project), state)
    keys.check_name(reviewer)
    row = {"state_id": state_id, "verdict": verdict, "note": note, "reviewer": reviewer,
           "content_hash": content_hash(scene, state.pose, state.frame), "design_id": scene_design_id(scene),
           "visible": json.dumps(visible)}
    with project.transaction():
        key = reviewer_key(project, reviewer)
        _, prev = chain.head(project.db.conn)
        row["at"], row["chain"] = now(), prev
        row["signature"] = keys.sign(key, review_message(
            project.project_id, state_id, verdict, note, reviewer, row["at"], row["content_hash"],
            row["design_id"], visible, prev))
        rid = project.db["reviews"].insert(row).last_pk
        project.audit(reviewer, verdict, f"state:{state_id}",
                      {"review": rid, "note": note, "content_hash": row["content_hash"], "visible": visible,
                       "design_id": row["design_id"], "at": row["at"], "chain": prev,
                       "signature": row["signature"]})
    _remember(project)
    return _review({**row, "id": rid})


def withdraw_review(project: Project, review_id: int, actor: str = "person") -> None:
    """Remove a review (undo), signed by whoever withdraws it; the audit log keeps both."""
    with project.transaction():
        key = reviewer_key(project, actor)
        found = project.db.execute("SELECT signature FROM reviews WHERE id = ?", [review_id]).fetchone()
        review_signature = (found[0] if found else "") or ""
        _, prev = chain.head(project.db.conn)
        at = now()
        sig = keys.sign(key, withdraw_message(project.project_id, review_id, review_signature, actor, at, prev))
        project.db.execute("DELETE FROM reviews WHERE id = ?", [review_id])
        project.audit(actor, "withdraw review", "", {"review": review_id, "review_signature": review_signature,
                                                      "at": at, "chain": prev, "signature": sig})
    _remember(project)


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
                  r["at"] or "", r["content_hash"] or "", r["design_id"] or "", json.loads(r["visible"] or "[]"),
                  r.get("signature") or "", r.get("chain") or "")
