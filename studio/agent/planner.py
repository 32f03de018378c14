"""The planner: prompt → two fresh briefs → a plan that holds, or a clear refusal.

The plan is asked for with its JSON schema as structured output where the
endpoint has it, and in the prompt everywhere. The reply's JSON is found
wherever the model put it (`reply_json`), then checked as strictly as ever:
a reply with no JSON or a plan that does not hold is sent back with the
reason, at most `attempts` times in all; after that the run is refused and
no plan is stored. What the planner accepts is what `set_plan` accepts
(`plan_shape`), checked against the scene once it has bodies. A stored plan
is one agent step (tokens, cost, time, every model request and a
checkpoint); a run that fails is a step "plan (failed)" with the same record
and the reason, so the tokens it spent are in the log.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.store.project import Project
from studio.timeline.plan import save_plan

from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.agent.plan_shape import PlanInvalid, validate_plan
from studio.agent.reply_json import find_json
from studio.agent.reply_schemas import drop_nulls, plan_reply_schema
from studio.agent.rewriters import rewrite_motion, rewrite_scene
from studio.agent.steps import record_step, save_snapshot, usage_of

PLAN_SYSTEM = """You are the planner of a pose-to-pose 4D animation studio.
From the prompt and the two briefs, write the film's plan as ONE JSON object and
nothing else, with exactly these keys:
{"prompt": str, "scene_brief": str, "motion_brief": str,
 "shots": [{"id", "camera", "start", "end"}],
 "states": [{"id", "frame", "shot", "description", "objects": [object names]}],
 "objects": [{"name", "description"}],
 "events": [{"id", "kind": "contact|grasp|release|reach|enter_region|pass_through|order",
             "subjects": [names], "window": [first_frame, last_frame], "params": {}, "after": [event ids]}],
 "motion": [{"segment": "A..B", "tool", "params": {}, "notes"}]}
Ids use letters, digits, '_' and '-'. Frames are whole numbers; every state lies
inside its shot; a segment joins two planned states; its tool is one of the motion
tools listed below, its params what that tool needs. An event's subjects are plan
objects or, in a scene that exists, its bodies and named frames (a gripper, a
handle); an order event lists event ids."""


@dataclass
class PlanResult:
    plan: dict
    step: int
    tokens: int
    attempts: int


def parse_json_reply(text: str) -> object:
    """The JSON object in a reply, among prose or in a fence; PlanInvalid if there is none."""
    return find_json(text)


def scene_summary(scene: Scene) -> str:
    """What already exists, so the plan names real bodies, frames and cameras."""
    if not scene.bodies:
        return "The scene is empty; the plan's objects will be built."
    lines = ["Existing scene (use these names):",
             "bodies: " + ", ".join(f"{b.name}{f' ({b.group})' if b.group else ''}" for b in scene.bodies),
             "joints: " + ", ".join(f"{j.name} [{j.lower:.2f}, {j.upper:.2f}]" for j in scene.joints),
             "named frames: " + ", ".join(f.name for f in scene.frames),
             "cameras: " + ", ".join(c.name for c in scene.cameras)]
    return "\n".join(lines)


def motion_tool_lines() -> str:
    from studio.timeline.motion import motion_tools
    return "Motion tools: " + "; ".join(f"{n}: {t.description}" for n, t in motion_tools().items())


def make_plan(project: Project, client: ModelClient, prompt: str, attempts: int = 3) -> PlanResult:
    """Run the rewriters and the planner; store the plan as one agent step."""
    if not prompt.strip():
        raise AgentError("the prompt is empty; say what should happen in the film")
    t0 = time.monotonic()
    mark = len(client.attempts)
    before = save_snapshot(project)
    errors: list[str] = []
    try:
        return _plan(project, client, prompt, attempts, t0, mark, before, errors)
    except AgentError as e:
        tried = client.since(mark)
        usage = usage_of(tried)
        record_step(project, "plan (failed)", {"prompt": prompt, "failed": str(e), "refused": errors,
                                               "requests": tried, **usage},
                    usage["tokens_in"] + usage["tokens_out"], time.monotonic() - t0, before=before)
        raise


def _plan(project, client, prompt, attempts, t0, mark, before, errors) -> PlanResult:
    scene = load_scene(project)
    built = scene if scene.bodies else None
    scene_reply = rewrite_scene(client, prompt)
    motion_reply = rewrite_motion(client, prompt, scene_reply.content, project.fps, project.frame_start)
    tokens = scene_reply.tokens + motion_reply.tokens
    user = (f"Prompt: {prompt}\n\nScene brief:\n{scene_reply.content}\n\nMotion brief:\n{motion_reply.content}\n\n"
            f"{scene_summary(scene)}\nFrame rate {project.fps} fps; the film starts at frame {project.frame_start}.\n"
            f"{motion_tool_lines()}")
    messages = [{"role": "system", "content": PLAN_SYSTEM}, {"role": "user", "content": user}]
    schema = plan_reply_schema()
    for attempt in range(1, attempts + 1):
        reply = client.chat(messages, schema=schema, schema_name="plan", kind="plan", strict=False)
        tokens += reply.tokens
        try:
            plan = drop_nulls(parse_json_reply(reply.content))
            if isinstance(plan, dict):   # the briefs are ours; the model need not copy them exactly
                plan = {**plan, "prompt": prompt, "scene_brief": scene_reply.content,
                        "motion_brief": motion_reply.content}
            plan = validate_plan(plan, built)
        except PlanInvalid as e:
            errors.append(str(e))
            messages += [{"role": "assistant", "content": reply.content[:4000]},
                         {"role": "user", "content": f"That plan was refused: {e}. "
                                                     "Reply with the corrected plan as one JSON object only."}]
            continue
        save_plan(project, plan, built, actor="agent")
        tried = client.since(mark)
        step = record_step(project, "plan", {"prompt": prompt, "attempts": attempt, "refused": errors,
                                             "requests": tried, "states": [s["id"] for s in plan["states"]],
                                             **usage_of(tried)},
                           tokens, time.monotonic() - t0, before=before)
        return PlanResult(plan, step, tokens, attempt)
    raise AgentError(f"the planner's reply was refused {attempts} times; no plan was stored. "
                     f"Last reason: {errors[-1]}")
