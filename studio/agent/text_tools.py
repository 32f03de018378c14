"""Tools for a model without tool calling: the same tools, asked for in JSON text.

Some servers refuse `tools` for a model that was not trained for them
(Ollama: "does not support tools"; vLLM without a tool parser; llama.cpp
without its chat template). The client then sends the same conversation
with the tools described in the system message, past tool calls written as
JSON and tool results as user messages, and reads a reply's
{"tool_calls": [{"name", "arguments"}]} back into ordinary tool calls. The
tool layer cannot tell the difference.
"""
from __future__ import annotations

import json

from studio.agent.plan_shape import PlanInvalid
from studio.agent.reply_json import find_json, unwrap_arguments
from studio.agent.stream import Reply, ToolCall

PROTOCOL = """
You have tools. To call tools, reply with ONE JSON object and nothing else:
{"tool_calls": [{"name": "<tool name>", "arguments": {<arguments as the tool's schema says>}}]}
Several calls in the list run in order. Each result comes back in a message
starting "Tool result". When you are done, reply in plain text without JSON.
The tools (name: description; JSON schema of the arguments):
"""


def encode(messages: list[dict], tools: list[dict]) -> list[dict]:
    """`messages` rewritten for a model that reads tools from the prompt."""
    listing = "\n".join(f"- {t['function']['name']}: {t['function'].get('description', '')}\n  "
                        f"{json.dumps(t['function'].get('parameters', {}), separators=(',', ':'))}"
                        for t in tools)
    out: list[dict] = []
    names: dict[str, str] = {}
    for m in messages:
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                names[c["id"]] = c["function"]["name"]
                try:
                    args = json.loads(c["function"]["arguments"] or "{}")
                except json.JSONDecodeError:
                    args = c["function"]["arguments"]
                calls.append({"name": c["function"]["name"], "arguments": args})
            text = json.dumps({"tool_calls": calls})
            out.append({"role": "assistant", "content": f"{m['content']}\n{text}" if m.get("content") else text})
        elif role == "tool":
            name = names.get(m.get("tool_call_id", ""), "the tool")
            out.append({"role": "user", "content": f"Tool result of {name}: {m.get('content', '')}"})
        else:
            out.append(dict(m))
    if out and out[0].get("role") == "system":
        out[0] = {**out[0], "content": f"{out[0]['content']}\n{PROTOCOL}{listing}"}
    else:
        out.insert(0, {"role": "system", "content": PROTOCOL + listing})
    return out


def decode(reply: Reply, id_prefix: str, seen_ids: set[str]) -> Reply:
    """`reply` with the tool calls written in its text turned into tool calls."""
    if "tool_calls" not in reply.content and '"name"' not in reply.content:
        return reply
    try:
        data = find_json(reply.content)
    except PlanInvalid:
        return reply
    calls = data.get("tool_calls")
    if calls is None and isinstance(data.get("name"), str) and "arguments" in data:
        calls = [data]
    if not isinstance(calls, list):
        return reply
    out = []
    for i, c in enumerate(calls):
        if not isinstance(c, dict):
            continue
        fn = c.get("function") if isinstance(c.get("function"), dict) else c
        call_id = f"{id_prefix}_{i + 1}"
        while call_id in seen_ids:
            call_id += "_"
        seen_ids.add(call_id)
        out.append(ToolCall(call_id, str(fn.get("name", "")), unwrap_arguments(fn.get("arguments", {})) or "{}"))
    if not out:
        return reply
    # the JSON is the calls themselves; keeping it as text too would send it twice
    return Reply("", out, reply.tokens, reply.seconds, "tool_calls", reply.reasoning,
                 reply.prompt_tokens, reply.completion_tokens, reply.cost)
