"""Agent speed: what a tool call costs through the model protocol, and what a
verified offline repair costs.

1. Tool calls: N set_joint calls, one per model reply, through the real OpenAI
   SDK against the scripted loopback server, each run as a command and recorded
   as a step with its checkpoint; baseline, side by side: the same N edits as
   SetPose commands on a CommandStack (no model, no steps).
2. Offline repairs on the doorway film's broken state (panel in the wall,
   elbow past its limit): proposing both verified repairs; baseline: one
   verify_state of that state (a repair is worth this many checks).
3. Reading replies: finding the plan in a reply (reply_json.find_json) against
   the previous parser (whole reply or one whole-reply fence), on a reply both
   accept; and assembling a streamed reply (stream.Assembly: tool calls in
   pieces, reasoning, ids) against the previous collecting loop, on the same
   SDK chunk objects.
4. Per-call overhead: ModelClient.chat (assembly, capabilities, usage) against
   the bare SDK streaming the same scripted reply from the same server.
Run: .venv/bin/python bench/bench_agent.py [N]
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from agent_scenes import make_arm_project  # noqa: E402
from chat_server import ChatServer  # noqa: E402

from studio.agent.client import ModelClient  # noqa: E402
from studio.agent.loop import run_tools  # noqa: E402
from studio.scene.io import load_scene  # noqa: E402
from studio.scene.pose import Pose  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.commands import CommandStack, SetPose  # noqa: E402
from studio.timeline.storyboard import State, get_state, put_state  # noqa: E402


def arm_project(folder: Path) -> Project:
    p = Project.create(folder)
    scene = make_arm_project(p)
    put_state(p, scene, State("start", 1001, Pose.rest(scene)))
    return p


def bench_tool_calls(n: int, tmp: Path) -> tuple[float, float]:
    p = arm_project(tmp / "via-model")
    script = [{"tool_calls": [{"name": "set_joint", "arguments": {"state": "start", "joint": "elbow",
                                                                  "value": 0.01 * (i + 1)}}]} for i in range(n)]
    with ChatServer([*script, {"content": "done"}]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=10, max_retries=0)
        t0 = time.perf_counter()
        result = run_tools(p, client, "pose", max_turns=n + 1)
        via_model = (time.perf_counter() - t0) / n
    assert len(result.steps) == n and get_state(p, "start").pose.joints["elbow"] == 0.01 * n
    p.close()
    q = arm_project(tmp / "direct")
    stack = CommandStack()
    t0 = time.perf_counter()
    for i in range(n):
        pose = get_state(q, "start").pose
        pose.joints["elbow"] = 0.01 * (i + 1)
        stack.run(SetPose(q, "start", pose))
    direct = (time.perf_counter() - t0) / n
    q.close()
    return via_model, direct


def bench_offline_repair(tmp: Path) -> tuple[float, float, int]:
    from studio.repair.offline import propose_offline
    from studio.checks.run import verify_state
    from studio.examples.pipeline import replay_stages
    p = replay_stages("doorway", tmp / "doorway", ("scene",))
    scene = load_scene(p)
    pose = Pose.rest(scene)
    pose.roots["panel"] = [-0.25, 1.5, 1.0, 1.0, 0.0, 0.0, 0.0]
    pose.joints["elbow_l"] = 0.4
    put_state(p, scene, State("carry", 1001, pose))
    verify_state(p, "carry")                      # warm the shape caches for both figures
    t0 = time.perf_counter()
    verify_state(p, "carry")
    one_check = time.perf_counter() - t0
    t0 = time.perf_counter()
    proposals, _ = propose_offline(p, "carry")
    propose = time.perf_counter() - t0
    p.close()
    return propose, one_check, len(proposals)


def previous_parse(text: str) -> object:
    """The parser before reply_json: a fence only when it is the whole reply."""
    body = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.S)
    if fence:
        body = fence.group(1)
    return json.loads(body)


def previous_collect(stream) -> tuple[str, list]:
    """The collecting loop before stream.Assembly."""
    text, calls, finish = [], {}, ""
    for chunk in stream:
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is not None and delta.content:
                text.append(delta.content)
            for tc in (delta.tool_calls or []) if delta is not None else []:
                slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
            if choice.finish_reason:
                finish = choice.finish_reason
    return "".join(text), [calls[i] for i in sorted(calls)] if finish else []


def recorded_chunks():
    """A streamed plan (content in 32 pieces) then four tool calls in 6 pieces each, as SDK objects."""
    from openai.types.chat import ChatCompletionChunk
    sys.path.insert(0, str(ROOT / "tests"))
    from agent_scripts import good_plan
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    text = json.dumps(good_plan())
    step = len(text) // 32 + 1
    raw = [{"index": 0, "delta": {"content": text[i:i + step]}, "finish_reason": None}
           for i in range(0, len(text), step)]
    for k in range(4):
        args = json.dumps({"state": "start", "joint": "elbow", "value": 0.1 * k})
        n = len(args) // 6 + 1
        for j, i in enumerate(range(0, len(args), n)):
            tc = {"index": k, "function": {"arguments": args[i:i + n]}}
            if j == 0:
                tc.update(id=f"call_{k}", type="function")
                tc["function"]["name"] = "set_joint"
            raw.append({"index": 0, "delta": {"tool_calls": [tc]}, "finish_reason": None})
    raw.append({"index": 0, "delta": {}, "finish_reason": "tool_calls"})
    return [ChatCompletionChunk.model_validate({**base, "choices": [c]}) for c in raw], text


def bench_reading(n: int) -> dict:
    from studio.agent.reply_json import find_json
    from studio.agent.stream import Assembly
    chunks, plan_text = recorded_chunks()
    out = {}
    fenced = "```json\n" + plan_text + "\n```"
    chat_style = "Sure! Here is the plan for your film.\n\n" + fenced + "\n\nLet me know if you want changes."
    assert find_json(fenced) == previous_parse(fenced)
    for name, fn, text in (("new", find_json, fenced), ("old", previous_parse, fenced),
                           ("new_chat", find_json, chat_style)):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(text)
        out[name] = (time.perf_counter() - t0) / n
    new_reply = Assembly(10**9, "bench")
    for c in chunks:
        new_reply.add(c)
    assert [c.arguments for c in new_reply.reply("b", set()).tool_calls] == \
        [c["arguments"] for c in previous_collect(chunks)[1]]
    t0 = time.perf_counter()
    for _ in range(n):
        a = Assembly(10**9, "bench")
        for c in chunks:
            a.add(c)
        a.reply("b", set())
    out["assemble_new"] = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n):
        previous_collect(chunks)
    out["assemble_old"] = (time.perf_counter() - t0) / n
    out["chunks"] = len(chunks)
    return out


def bench_call_overhead(n: int) -> tuple[float, float]:
    import openai
    reply = {"content": "A brief of the scene in a few words. " * 20,
             "tool_calls": [{"name": "set_joint", "arguments": {"state": "s", "joint": "j", "value": 0.5}}] * 2}
    msgs = [{"role": "user", "content": "hello"}]
    with ChatServer([reply] * (2 * n + 4)) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=10, max_retries=0)
        sdk = openai.OpenAI(base_url=chat.base_url, api_key="no-key", max_retries=0)
        for _ in range(2):   # warm both connections
            client.chat(msgs)
            list(sdk.chat.completions.create(model="scripted", messages=msgs, stream=True))
        t0 = time.perf_counter()
        for _ in range(n):
            client.chat(msgs)
        ours = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        for _ in range(n):
            list(sdk.chat.completions.create(model="scripted", messages=msgs, stream=True,
                                             stream_options={"include_usage": True}))
        bare = (time.perf_counter() - t0) / n
    return ours, bare


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        via_model, direct = bench_tool_calls(n, tmp)
        print(f"tool call via the model protocol + step checkpoint: {via_model * 1000:7.1f} ms/call  ({n} calls)")
        print(f"baseline, the same edit as a direct command:        {direct * 1000:7.1f} ms/call")
        print(f"ratio (model round trip / direct):                  {via_model / direct:7.1f}x")
        propose, one_check, count = bench_offline_repair(tmp)
        print(f"offline repair, {count} verified proposals for the doorway state: {propose * 1000:7.1f} ms")
        print(f"baseline, one verify_state of that state:                 {one_check * 1000:7.1f} ms")
        print(f"ratio (proposals / one check):                            {propose / one_check:7.1f}x")
    r = bench_reading(2000)
    print(f"find the plan in a fenced reply (reply_json):         {r['new'] * 1e6:7.1f} us")
    print(f"baseline, the previous parser on the same reply:      {r['old'] * 1e6:7.1f} us")
    print(f"ratio (new / previous):                               {r['new'] / r['old']:7.2f}x")
    print(f"the chat-style reply (prose + fence + prose), new:    {r['new_chat'] * 1e6:7.1f} us  (previous: refused)")
    print(f"assemble a streamed reply, {r['chunks']} chunks (Assembly):   {r['assemble_new'] * 1e6:7.1f} us")
    print(f"baseline, the previous collecting loop:               {r['assemble_old'] * 1e6:7.1f} us")
    print(f"ratio (new / previous):                               {r['assemble_new'] / r['assemble_old']:7.2f}x")
    ours, bare = bench_call_overhead(max(20, n))
    print(f"one streamed reply through ModelClient.chat:          {ours * 1000:7.2f} ms")
    print(f"baseline, the bare SDK streaming the same reply:      {bare * 1000:7.2f} ms")
    print(f"ratio (ModelClient / bare SDK):                       {ours / bare:7.2f}x")


if __name__ == "__main__":
    main()
