"""Agent steps: what the agent did, its tokens and time, and a checkpoint.

A step's detail keeps the model requests that led to it (`attempts`: kind,
tokens in and out, seconds, cost and, for one that failed, why); a run that
failed is a step too (its action ends in "(failed)"), so tokens spent on a
refusal are in the log. Each step stores a snapshot of the project's content (scene rows, states,
documents such as the plan, baked-track rows) as a JSON asset, taken right
after the step. Reverting to step N writes those rows back verbatim, so the
design id, every state's content hash and every track hash are exactly what
they were. Step 0 is the project before the agent's first step. Reviews,
reports and the audit log are a person's record and are never rewritten.
"""
from __future__ import annotations

import json

from studio.store.project import Project, ProjectError, now

TABLES = {"scene_objects": "kind, name", "states": "id", "docs": "key", "tracks": "segment"}


def snapshot(project: Project) -> dict:
    """The rows that make up the scene and the timeline."""
    return {t: [dict(r) for r in project.db.query(f"SELECT * FROM {t} ORDER BY {order}")]
            for t, order in TABLES.items()}


def save_snapshot(project: Project) -> str:
    data = json.dumps(snapshot(project), sort_keys=True, separators=(",", ":")).encode()
    return project.put_asset(data, "json")


def usage_of(attempts: list[dict]) -> dict:
    """Tokens in and out (and cost, when priced) of a list of model requests."""
    out = {"tokens_in": sum(int(a.get("tokens_in", 0)) for a in attempts),
           "tokens_out": sum(int(a.get("tokens_out", 0)) for a in attempts)}
    costs = [a["cost"] for a in attempts if a.get("cost") is not None]
    if costs:
        out["cost"] = round(sum(costs), 6)
    return out


def record_step(project: Project, action: str, detail: dict, tokens: int = 0, seconds: float = 0.0,
                before: str | None = None) -> int:
    """Append a step with a snapshot of the project as it is now; returns the step number.
    `before` (a snapshot asset) is kept with the first step so that step 0 can be restored."""
    snap = save_snapshot(project)
    with project.transaction():
        if before and not list(project.db.query("SELECT 1 FROM agent_steps LIMIT 1")):
            detail = {**detail, "before": before}
        step = project.db["agent_steps"].insert({
            "at": now(), "action": action, "detail": json.dumps(detail, sort_keys=True),
            "tokens": int(tokens), "seconds": round(float(seconds), 3), "snapshot": snap}).last_pk
        project.audit("agent", action, f"step:{step}", {"tokens": int(tokens)})
    return int(step)


def list_steps(project: Project) -> list[dict]:
    rows = project.db.query("SELECT id, at, action, detail, tokens, seconds, snapshot FROM agent_steps ORDER BY id")
    return [{**dict(r), "detail": json.loads(r["detail"] or "{}")} for r in rows]


def _snapshot_of(project: Project, step: int) -> str:
    if step == 0:
        rows = list(project.db.query("SELECT detail FROM agent_steps ORDER BY id LIMIT 1"))
        before = json.loads(rows[0]["detail"]).get("before") if rows else None
        if not before:
            raise ProjectError(f"{project.path}: there is no step 0 to revert to (the agent has no steps)")
        return before
    rows = list(project.db.query("SELECT snapshot FROM agent_steps WHERE id = ?", [step]))
    if not rows:
        last = project.db.execute("SELECT max(id) FROM agent_steps").fetchone()[0] or 0
        raise ProjectError(f"{project.path}: no agent step {step} (steps are 0..{last})")
    return rows[0]["snapshot"]


def revert(project: Project, step: int) -> int:
    """Put the scene and timeline back as they were after `step`; returns the new step's number."""
    snap = json.loads(project.read_asset(_snapshot_of(project, step)))
    with project.transaction():
        for table in TABLES:
            project.db.execute(f"DELETE FROM {table}")
            if snap.get(table):
                project.db[table].insert_all(snap[table])
        project.audit("person", "revert agent", f"step:{step}", {})
        return record_step(project, f"revert to step {step}", {"reverted_to": step})
