"""Repairs proposed by the model from verifier evidence, verified like any other.

For each failure the model gets the evidence, the values it may change (root
transforms, joint values and their limits) and the notes of rejected
proposals for that state, and replies with one JSON object {summary,
changes: [{kind: root|joint, name, to}]}. The studio fills in each change's
`from`, checks names and ranges, and verifies; a proposal that does not hold
is sent back once with the reason, then left unsolved. Nothing reaches the
state until a person approves.
"""
from __future__ import annotations

import json
import math
import time

from studio.checks.report import Report
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.storyboard import get_state

from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.repair.errors import Cancelled
from studio.repair.offline import RULES
from studio.agent.planner import parse_json_reply
from studio.agent.plan_shape import PlanInvalid
from studio.agent.reply_schemas import REPAIR_SCHEMA
from studio.repair.proposals import (Proposal, distinct_failures, rejection_notes, report_progress, save_proposal, stop_requested,
                      verify_changes)
from studio.agent.steps import record_step, usage_of
from studio.agent.stream import Usage
from studio.tools.verify import check_pose

SYSTEM = """You repair one failing storyboard state of a 4D animation studio. You may change
root body transforms ([x, y, z, w, qx, qy, qz], metres) and joint values (radians or
metres, inside their limits). Reply with ONE JSON object and nothing else:
{"summary": "what the repair does, in a line", "changes": [{"kind": "root"|"joint", "name": str, "to": value}]}
Change as little as possible: fix the failure named, and break nothing else."""


def read_changes(scene: Scene, pose: Pose, data: object) -> tuple[str, list[dict]]:
    """The reply's summary and changes with `from` filled in; PlanInvalid names what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("changes"), list) or not data["changes"]:
        raise PlanInvalid("expected {\"summary\": str, \"changes\": [at least one change]}")
    out = []
    for i, c in enumerate(data["changes"]):
        at = f"changes[{i}]"
        if not isinstance(c, dict) or c.get("kind") not in ("root", "joint"):
            raise PlanInvalid(f"{at}.kind: expected 'root' or 'joint'")
        name, to = c.get("name"), c.get("to")
        if c["kind"] == "root":
            if name not in pose.roots:
                raise PlanInvalid(f"{at}.name: {name!r} is not a root body (roots: {', '.join(pose.roots)})")
            if (not isinstance(to, list) or len(to) != 7 or not all(isinstance(v, (int, float)) and math.isfinite(v)
                                                                    and abs(v) <= 1000 for v in to)
                    or abs(math.sqrt(sum(v * v for v in to[3:])) - 1) > 1e-3):
                raise PlanInvalid(f"{at}.to: expected [x, y, z, w, qx, qy, qz] with a unit quaternion")
            out.append({"kind": "root", "name": name, "from": pose.roots[name], "to": [float(v) for v in to]})
        else:
            if name not in pose.joints:
                raise PlanInvalid(f"{at}.name: no movable joint {name!r}")
            j = scene.joint(name)
            if isinstance(to, bool) or not isinstance(to, (int, float)) or not j.lower <= to <= j.upper:
                raise PlanInvalid(f"{at}.to: {to!r} is outside the limits of {name} [{j.lower:.4f}, {j.upper:.4f}]")
            out.append({"kind": "joint", "name": name, "from": pose.joints[name], "to": float(to)})
    return str(data.get("summary", "model repair"))[:300], out


def _context(scene: Scene, pose: Pose, check: str, ev: dict, notes: list[str]) -> str:
    limits = {j.name: [j.lower, j.upper] for j in scene.joints if j.type != "fixed"}
    lines = [f"Failing check: {check}", f"Evidence: {json.dumps(ev)}",
             f"Root transforms: {json.dumps(pose.roots)}", f"Joint values: {json.dumps(pose.joints)}",
             f"Joint limits: {json.dumps(limits)}"]
    if notes:
        lines.append("A person rejected these earlier proposals for this state:\n- " + "\n- ".join(notes))
    return "\n".join(lines)


def propose_with_model(project: Project, client: ModelClient, state_id: str,
                       reports: list[Report] | None = None, state=None) -> tuple[list[Proposal], list[str]]:
    """Verified model proposals for the state's failures, and what was left unsolved.

    `state` (optional, a worker's) gets progress per failure; a cancel stops the reply being
    streamed at its next piece, and proposals saved before then stay."""
    t0 = time.monotonic()
    scene = load_scene(project)
    held = get_state(project, state_id)
    if held is None:
        raise AgentError(f"{project.path}: no state {state_id!r}")
    pose = held.pose.completed(scene)
    report_progress(state, 0.0, f"checking {state_id}")
    reports = reports if reports is not None else check_pose(project, scene, pose, held.frame, state_id)
    notes = rejection_notes(project, f"state:{state_id}")
    proposals, unsolved, tokens, usage = [], [], 0, Usage()

    def heard(_piece: str) -> None:
        if stop_requested(state):
            raise Cancelled(f"cancelled while {client.model or client.base_url} was replying")

    failing = list(distinct_failures(reports, RULES))
    mark = len(client.attempts)
    try:
        for i, (r, ev, key) in enumerate(failing):
            heard("")
            report_progress(state, (i + 1) / (len(failing) + 1), f"asking about {r.name} {' '.join(map(str, key[1:]))}")
            messages = [{"role": "system", "content": SYSTEM},
                        {"role": "user", "content": _context(scene, pose, r.name, ev, notes)}]
            why = ""
            for _attempt in range(2):
                reply = client.chat(messages, schema=REPAIR_SCHEMA, schema_name="repair", on_text=heard, kind="proposal")
                tokens += reply.tokens
                usage.add(reply)
                try:
                    summary, changes = read_changes(scene, pose, parse_json_reply(reply.content))
                except PlanInvalid as e:
                    why = str(e)
                else:
                    check = verify_changes(project, scene, held, key, changes, reports)
                    if check["ok"]:
                        proposals.append(save_proposal(project, Proposal(
                            f"state:{state_id}", r.name, list(key), summary, changes, "model", check)))
                        break
                    why = (f"verification refused it: fixes the failure {check['fixes_target']}, "
                           f"new required failures {check['new_required_failures']}")
                messages += [{"role": "assistant", "content": reply.content[:4000]},
                             {"role": "user", "content": f"That repair was refused: {why}. Reply with a corrected one."}]
            else:
                unsolved.append(f"{' '.join(map(str, key))}: the model's repair was refused ({why})")
    except Cancelled:
        pass                  # what was verified and saved before the cancel stays
    except AgentError as e:   # the model failed: what was verified and saved stays, and is said
        tried = client.since(mark)
        kept = ", ".join(f"#{p.id}" for p in proposals) or "none"
        record_step(project, "propose repairs (failed)", {"state": state_id, "proposals": [p.id for p in proposals],
                                                          "failed": str(e), "requests": tried, **usage_of(tried)},
                    tokens, time.monotonic() - t0)
        raise AgentError(f"{e}; the proposals for {state_id} verified before that are kept: {kept}") from None
    cancelled = {"cancelled": True} if stop_requested(state) else {}
    record_step(project, "propose repairs", {"state": state_id, "proposals": [p.id for p in proposals],
                                         "unsolved": unsolved, "requests": client.since(mark), **cancelled,
                                         **usage.detail()},
                tokens, time.monotonic() - t0)
    return proposals, unsolved
