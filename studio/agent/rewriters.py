"""Fresh-context rewriters: the sparse prompt expanded twice, separately.

The scene rewriter and the motion rewriter each get a new conversation (a
system message and one user message, no history), so neither inherits the
other's framing; the motion rewriter reads the scene brief only as text.
"""
from __future__ import annotations

from studio.agent.client import ModelClient, Reply
from studio.agent.errors import AgentError

SCENE_SYSTEM = """You are the scene rewriter of a pose-to-pose 4D animation studio.
Expand the user's prompt into a production brief of the static scene: choose one
organising principle, then list every object with its materials, its geometry
(parts, dimensions in metres, joints and their limits) and the spatial relations
between objects (what rests on what, distances, clearances). Units are metres,
+Z is up. Reply in plain prose, at most 400 words."""

MOTION_SYSTEM = """You are the motion rewriter of a pose-to-pose 4D animation studio.
Expand the user's prompt into a motion brief: the believable transitions from one
key pose to the next, every contact (grasp, release, support), who carries what,
and the timing in frames at the given frame rate. Reply in plain prose, at most
400 words."""


def _brief(client: ModelClient, system: str, user: str, what: str) -> Reply:
    reply = client.chat([{"role": "system", "content": system}, {"role": "user", "content": user}], kind="brief")
    if reply.tool_calls:
        raise AgentError(f"the {what} rewriter called a tool; it should only write a brief")
    if not reply.content.strip():
        raise AgentError(f"the {what} rewriter returned an empty brief")
    return reply


def rewrite_scene(client: ModelClient, prompt: str) -> Reply:
    return _brief(client, SCENE_SYSTEM, f"Prompt: {prompt}", "scene")


def rewrite_motion(client: ModelClient, prompt: str, scene_brief: str, fps: int, frame_start: int) -> Reply:
    user = (f"Prompt: {prompt}\n\nFrame rate {fps} fps; the film starts at frame {frame_start}.\n\n"
            f"The scene, as already briefed:\n{scene_brief}")
    return _brief(client, MOTION_SYSTEM, user, "motion")
