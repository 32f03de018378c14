"""The tool loop: the model asks for tools, the studio runs them and answers.

Every tool result goes back to the model as a `tool` message: the outcome of
a call that changed something, or the refusal (bad arguments, an unknown tool,
the gate) of one that changed nothing. Every call that changed the project is
one agent step with a checkpoint. The loop ends when the model replies
without tool calls, or after `max_turns` replies. A step may offer only the
tools it needs (`BUILD_TOOLS` for a build: not a person's reviews, renders or
bakes), which keeps the prompt within a small model's context; a call of a
tool not offered is refused back like any other. A loop that fails is a step
"build (failed)" with its model requests and the reason.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Callable

from studio.scene.io import load_scene
from studio.store.project import Project
from studio.timeline.commands import CommandStack

from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.tools.errors import ToolRefused
from studio.agent.planner import scene_summary
from studio.agent.steps import record_step, save_snapshot, usage_of
from studio.agent.stream import Usage
from studio.tools.schemas import openai_tools
from studio.tools.box import ToolBox

SYSTEM = """You are the agent of a pose-to-pose 4D animation studio. You act only through
the tools. Build the scene the plan needs, then author each planned key state as a
static pose (set_state, set_joint, place_relative, solve_ik) and run the verifiers on
it. A person approves states; motion (author_segment) is refused until both states of
a segment are approved and passing. Name each segment's motion tool and its parameters
with set_segment_tool. When a tool refuses, read why and correct the call.
When the states are ready for review, stop calling tools and say so briefly."""

MAX_CALLS_PER_REPLY = 16
# What building the scene and authoring key states calls for; a person reviews, renders and bakes.
BUILD_TOOLS = ("create_body", "build_part_code", "name_scene", "add_material", "add_frame", "add_camera",
               "allow_overlap", "set_segment_tool", "set_state", "set_joint", "place_relative", "solve_ik",
               "run_verifiers", "delete_state")


@dataclass
class LoopResult:
    final_text: str
    steps: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    tokens: int = 0
    turns: int = 0


def _usage(reply, first: bool) -> dict:
    """The reply's tokens in and out (and cost) for the first step it led to; later steps cost nothing."""
    return Usage().add(reply).detail() if first else {}


def run_tools(project: Project, client: ModelClient, task: str, stack: CommandStack | None = None,
              max_turns: int = 12, on_event: Callable[[str], None] | None = None,
              tools: tuple[str, ...] | None = None) -> LoopResult:
    """Let the model work on `task` through the tools until it stops."""
    box = ToolBox(project, stack)
    shown = on_event or (lambda _msg: None)

    def say(msg: str) -> None:
        shown(client.scrub(msg))
    plan = project.get_doc("plan")
    context = f"{scene_summary(load_scene(project))}\n\nPlan:\n{json.dumps(plan) if plan else '(no plan yet)'}"
    messages: list[dict] = [{"role": "system", "content": SYSTEM},
                            {"role": "user", "content": f"{task}\n\n{context}"}]
    out = LoopResult("")
    before = save_snapshot(project)
    mark, t_start = len(client.attempts), time.monotonic()
    try:
        return _turns(box, client, messages, out, before, max_turns, say, tools)
    except AgentError as e:
        tried = client.since(mark)
        usage = usage_of(tried)
        record_step(project, "build (failed)", {"failed": str(e), "steps": out.steps, "requests": tried, **usage},
                    usage["tokens_in"] + usage["tokens_out"], time.monotonic() - t_start, before=before)
        raise


def _turns(box, client, messages, out, before, max_turns, say, names) -> LoopResult:
    project = box.project
    tools = [t for t in openai_tools() if names is None or t["function"]["name"] in names]
    for turn in range(1, max_turns + 1):
        mark = len(client.attempts)
        reply = client.chat(messages, tools=tools, kind="build")
        out.tokens += reply.tokens
        out.turns = turn
        if not reply.tool_calls:
            out.final_text = client.scrub(reply.content)
            return out
        if len(reply.tool_calls) > MAX_CALLS_PER_REPLY:
            raise AgentError(f"the model asked for {len(reply.tool_calls)} tool calls in one reply "
                             f"(at most {MAX_CALLS_PER_REPLY}); none was run")
        messages.append(reply.as_message())
        tokens_left = reply.tokens
        for call in reply.tool_calls:
            t0 = time.monotonic()
            try:
                if names is not None and call.name not in names:
                    raise ToolRefused(f"{call.name} is not one of this step's tools ({', '.join(names)})")
                outcome = box.call(call.name, call.arguments)
            except ToolRefused as e:
                text = client.scrub(str(e))
                out.refused.append(text)
                say(f"refused {call.name}: {text}")
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps({"ok": False, "error": text})})
                continue
            messages.append({"role": "tool", "tool_call_id": call.id, "content": client.scrub(outcome.as_text())})
            say(f"{call.name}: {outcome.result.get('done', 'ok')}")
            if outcome.command is not None or call.name == "run_verifiers":
                first = tokens_left > 0
                step = record_step(project, f"tool {call.name}",
                                   {"arguments": outcome.arguments, "result": outcome.result,
                                    **_usage(reply, first=first),
                                    **({"requests": client.since(mark)} if first else {})},
                                   tokens_left, time.monotonic() - t0 + reply.seconds, before=before)
                tokens_left = 0
                out.steps.append(step)
    raise AgentError(f"the agent did not finish within {max_turns} replies; its {len(out.steps)} "
                     f"completed steps are kept and can be reverted (studio agent log)")
