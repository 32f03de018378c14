"""Repairs of baked motion proposed by the model, checked and verified like the offline ones.

For each failing run the model reads the evidence, the segment's tool and
parameters, the motion tools it may switch to, the film's pose at the worst
frame of the bodies involved (the trees of the bodies the evidence and the
segment's parameters name), their joints' limits and the notes a person left
on rejected proposals for the segment. The prompt is fitted to the server's
context: the segment's own tool's schema always, the other tools' names and
descriptions, and their schemas only as far as the room left allows (the
prompt says which it leaves out); a context too small for even that is
refused in one line before anything is sent. It replies with
one JSON object {summary, changes: [...]}, each change either
{kind: "insert_state", frame, roots: {body: [x,y,z,w,qx,qy,qz]}, joints: {name: value}}
(a key state; what it leaves out keeps the film's pose) or
{kind: "segment", tool, params}. A name that is not in the scene, a frame
outside the segment or parameters the tool's schema refuses is sent back
once with the field named; a change that verification refuses, likewise.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.author import segment_tool
from studio.timeline.motion import check_params
from studio.timeline.gate import parse_segment
from studio.timeline.motion import MotionError, motion_tools

from studio.agent.client import ModelClient
from studio.agent.context import text_tokens
from studio.agent.errors import AgentError
from studio.repair.film_failures import FailingRun
from studio.repair.motion_candidates import _ends, _shot, _state_id
from studio.repair.motion_repair import PREFIX, basis
from studio.repair.motion_trial import FilmTrial, RepairUnfit
from studio.agent.plan_shape import PlanInvalid
from studio.agent.planner import parse_json_reply
from studio.repair.proposals import Proposal, rejection_notes, save_proposal
from studio.agent.steps import record_step, usage_of

SYSTEM = """You repair the baked motion of a 4D animation between two approved key states.
Reply with ONE JSON object and nothing else:
{"summary": "what the repair does, in a line",
 "changes": [{"kind": "insert_state", "frame": int, "roots": {"body": [x, y, z, w, qx, qy, qz]}, "joints": {"joint": value}}
             or {"kind": "segment", "tool": "a motion tool", "params": {...}}]}
An inserted key state keeps the film's pose for whatever it does not name. Change as little as
possible: remove the failure named, and break nothing else."""


@dataclass
class ModelFilmProposals:
    proposals: list[Proposal] = field(default_factory=list)
    unsolved: list[str] = field(default_factory=list)


def read_film_changes(trial: FilmTrial, run: FailingRun, data: object) -> tuple[str, list[dict]]:
    """The reply as plan changes; PlanInvalid names the field that is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("changes"), list) or not data["changes"]:
        raise PlanInvalid("expected {\"summary\": str, \"changes\": [at least one change]}")
    scene = trial.scene
    row = next(s for s in trial.segments if s["segment"] == run.segment)
    out = list(_ends(trial, run.segment))
    for i, c in enumerate(data["changes"]):
        at = f"changes[{i}]"
        if not isinstance(c, dict) or c.get("kind") not in ("insert_state", "segment"):
            raise PlanInvalid(f"{at}.kind: expected 'insert_state' or 'segment'")
        if c["kind"] == "segment":
            tool = c.get("tool")
            if tool not in motion_tools():
                raise PlanInvalid(f"{at}.tool: {tool!r} is not a motion tool (tools: {', '.join(motion_tools())})")
            try:
                params = check_params(tool, c.get("params", {}), f"{at}.params")
            except MotionError as e:
                raise PlanInvalid(str(e)) from None
            was_tool, was_params = segment_tool(trial.plan, run.segment)
            out.append({"kind": "segment", "segment": run.segment, "tool": tool, "params": params,
                        "from": {"tool": was_tool, "params": was_params}})
            continue
        frame = c.get("frame")
        if isinstance(frame, bool) or not isinstance(frame, int) or not row["start"] < frame < row["end"]:
            raise PlanInvalid(f"{at}.frame: expected a frame strictly inside {run.segment} "
                              f"({row['start'] + 1}..{row['end'] - 1}), got {frame!r}")
        pose = trial.pose_at(frame).completed(scene)
        roots, joints = c.get("roots", {}) or {}, c.get("joints", {}) or {}
        if not isinstance(roots, dict) or not isinstance(joints, dict):
            raise PlanInvalid(f"{at}: roots and joints are objects keyed by name")
        for name, to in roots.items():
            if name not in pose.roots:
                raise PlanInvalid(f"{at}.roots.{name}: no root body {name!r} in the scene "
                                  f"(roots: {', '.join(pose.roots)})")
            if (not isinstance(to, list) or len(to) != 7 or
                    not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                            and abs(v) <= 1000 for v in to)
                    or abs(math.sqrt(sum(v * v for v in to[3:])) - 1) > 1e-3):
                raise PlanInvalid(f"{at}.roots.{name}: expected [x, y, z, w, qx, qy, qz] with a unit quaternion")
            pose.roots[name] = [float(v) for v in to]
        for name, v in joints.items():
            if name not in pose.joints:
                raise PlanInvalid(f"{at}.joints.{name}: no movable joint {name!r} in the scene")
            j = scene.joint(name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not j.lower <= v <= j.upper:
                raise PlanInvalid(f"{at}.joints.{name}: {v!r} is outside its limits [{j.lower:.4f}, {j.upper:.4f}]")
            pose.joints[name] = float(v)
        a, _ = parse_segment(run.segment)
        out.append({"kind": "insert_state", "state": _state_id(trial, frame), "frame": frame,
                    "split": run.segment, "pose": pose.to_dict(), "shot": _shot(trial, a, frame),
                    "description": f"repair key: {str(data.get('summary', ''))[:200]}"})
    return str(data.get("summary", "model repair"))[:300], out


def involved(trial: FilmTrial, run: FailingRun, params: dict) -> tuple[list[str], list[str]]:
    """The root bodies and movable joints of the trees the run's evidence and the segment's
    parameters name (a body, a joint's child, a named frame's body, a plan event's subjects)."""
    scene = trial.scene
    bodies, frames, joints = set(scene.body_names), {f.name: f.body for f in scene.frames}, \
        {j.name: j.child for j in scene.joints}
    groups: dict[str, list[str]] = {}
    for b in scene.bodies:
        if b.group:
            groups.setdefault(b.group, []).append(b.name)
    events = {e.get("id"): e for e in trial.plan.get("events", []) if isinstance(e, dict)}
    named: set[str] = set()

    def take(v) -> None:
        if isinstance(v, str):
            if v in bodies:
                named.add(v)
            elif v in frames:
                named.add(frames[v])
            elif v in joints:
                named.add(joints[v])
            elif v in groups:
                named.update(groups[v])
            elif v in events:
                take(events[v].get("subjects", []))
        elif isinstance(v, dict):
            for x in v.values():
                take(x)
        elif isinstance(v, list):
            for x in v:
                take(x)
    take({k: v for k, v in run.evidence.items() if k in ("a", "b", "body", "joint", "event", "subjects")})
    take(params)
    roots = sorted({scene.group_root(b) for b in named})
    movable = [j.name for j in scene.joints if j.type != "fixed" and scene.group_root(j.child) in roots]
    return roots, movable


def _context(trial: FilmTrial, run: FailingRun, notes: list[str], budget: int | None = None) -> str:
    """The prompt for one run, within `budget` tokens (None: everything)."""
    tool, params = segment_tool(trial.plan, run.segment)
    pose: Pose = trial.pose_at(run.worst).completed(trial.scene)
    roots, movable = involved(trial, run, params)
    row = next(s for s in trial.segments if s["segment"] == run.segment)
    limits = {j: [trial.scene.joint(j).lower, trial.scene.joint(j).upper] for j in movable}
    tools = motion_tools()
    lines = [f"Failing: {run.label}", f"Worst frame: {run.worst}", f"Evidence: {json.dumps(run.evidence)}",
             f"Segment {run.segment} (frames {row['start']}..{row['end']}; an inserted key state lies strictly "
             f"inside): tool {tool}, params {json.dumps(params)}",
             f"Film pose at frame {run.worst} of the bodies involved: roots "
             f"{json.dumps({r: pose.roots[r] for r in roots if r in pose.roots})}, joints "
             f"{json.dumps({j: pose.joints[j] for j in movable if j in pose.joints})}",
             f"Joint limits: {json.dumps(limits)}"]
    if notes:
        lines.append("A person rejected these earlier proposals for this segment:\n- " + "\n- ".join(n[:300] for n in notes))
    if tool in tools:
        lines.append(f"Schema of {tool}'s params: {json.dumps(tools[tool].schema, separators=(',', ':'))}")
    lines.append("Motion tools: " + "; ".join(f"{n}: {t.description}" for n, t in tools.items()))
    need = sum(text_tokens(x) for x in lines) + text_tokens(SYSTEM)
    if budget is not None and need > budget:
        raise AgentError(f"the repair prompt for {run.label} needs about {need} tokens (the pose of "
                         f"{len(roots)} root(s) and {len(movable)} joint(s), the tool {tool}'s schema), more than "
                         f"the {budget} the model's context leaves beside its reply; give the server a larger "
                         f"context (llama.cpp -c, Ollama num_ctx) or set the profile's context")
    left_out = []
    for name, t in tools.items():
        if name == tool:
            continue
        line = f"Schema of {name}'s params: {json.dumps(t.schema, separators=(',', ':'))}"
        if budget is None or need + text_tokens(line) + 40 <= budget:
            lines.append(line)
            need += text_tokens(line)
        else:
            left_out.append(name)
    if left_out:
        lines.append(f"(Not listed, to fit the context: the parameter schemas of {', '.join(left_out)}; "
                     f"a segment change to one of them must name its parameters as its schema asks.)")
    return "\n".join(lines)


def propose_film_with_model(project: Project, client: ModelClient, trial: FilmTrial,
                            runs: list[FailingRun]) -> ModelFilmProposals:
    """Verified model proposals for the runs, and what was left unsolved."""
    t0 = time.monotonic()
    out, tokens, mark = ModelFilmProposals(), 0, len(client.attempts)
    try:
        for run in runs:
            tokens += _propose_run(project, client, trial, run, out)
    except AgentError as e:
        _record(project, client, mark, runs, out, tokens, time.monotonic() - t0, failed=str(e))
        raise
    _record(project, client, mark, runs, out, tokens, time.monotonic() - t0)
    return out


def _record(project, client, mark, runs, out, tokens, seconds, failed: str = "") -> None:
    attempts = client.since(mark)
    detail = {"runs": len(runs), "proposals": [p.id for p in out.proposals], "unsolved": out.unsolved,
              "requests": attempts, **usage_of(attempts)}
    if failed:
        detail["failed"] = failed
    record_step(project, "propose motion repairs" + (" (failed)" if failed else ""), detail,
                tokens or detail["tokens_in"] + detail["tokens_out"], seconds)


def _propose_run(project: Project, client: ModelClient, trial: FilmTrial, run: FailingRun,
                 out: ModelFilmProposals) -> int:
    tokens = 0
    notes = rejection_notes(project, f"{PREFIX}{run.segment}")
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": _context(trial, run, notes, client.prompt_budget("proposal"))}]
    why = ""
    for _attempt in range(2):
        reply = client.chat(messages, kind="proposal")
        tokens += reply.tokens
        try:
            summary, changes = read_film_changes(trial, run, parse_json_reply(reply.content))
            result = trial.judge(run, changes)
        except (PlanInvalid, RepairUnfit) as e:
            why = str(e)
        else:
            if result.ok:
                out.proposals.append(save_proposal(project, Proposal(
                    f"{PREFIX}{run.segment}", run.check, list(run.key), f"{summary} — {result.effect}", changes,
                    "model", {**result.verified(), "run": [run.start, run.end],
                              "basis": basis(project, changes)})))
                break
            why = f"verification refused it: {result.effect}"
        messages += [{"role": "assistant", "content": reply.content[:4000]},
                     {"role": "user", "content": f"That repair was refused: {why}. Reply with a corrected one."}]
    else:
        out.unsolved.append(f"{run.label}: the model's repair was refused ({why})")
    return tokens
