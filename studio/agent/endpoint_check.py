"""What an endpoint can do, found by asking it three small things.

A streamed reply (streaming), a call of one harmless tool (tool calling, or
the JSON-in-text protocol when the server refuses tools) and a reply under a
JSON schema (structured output). The client records what it finds and, for an
endpoint from the settings, remembers it there, so the planner and the tool
loop pick the right protocol from the first request on. Used by
`studio agent check` and the Settings dialog's "Test connection".
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from studio.agent.client import ModelClient

PROBE_TOOL = {"type": "function", "function": {
    "name": "report_ready", "description": "Say that the studio's tools reach you.",
    "parameters": {"type": "object", "properties": {"ready": {"type": "boolean"}}, "required": ["ready"],
                   "additionalProperties": False}}}
PROBE_SCHEMA = {"type": "object", "properties": {"ready": {"type": "boolean"}}, "required": ["ready"],
                "additionalProperties": False}


@dataclass
class EndpointFound:
    base_url: str
    model: str
    capabilities: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        def yes(key: str) -> str:
            v = self.capabilities.get(key)
            return "yes" if v else "no" if v is False else "unknown"
        return [f"  streaming:          {yes('streaming')} ({self.notes.get('streaming', '')})",
                f"  tools:              {yes('tools')} ({self.notes.get('tools', '')})",
                f"  structured output:  {yes('structured_output')} ({self.notes.get('structured_output', '')})"]


def check_endpoint(client: ModelClient) -> EndpointFound:
    """Ask the endpoint the three probes; AgentError when it cannot be reached or refuses."""
    t0 = time.monotonic()
    client.capabilities = {}          # found afresh: a check is asked for when something changed
    out = EndpointFound(client.base_url, client.model)
    pieces: list[str] = []
    reply = client.chat([{"role": "user", "content": "Reply with the single word: ready"}], on_text=pieces.append)
    out.notes["streaming"] = f"{len(pieces)} text chunk(s), {reply.tokens} tokens, {reply.seconds:.2f} s"
    reply = client.chat([{"role": "system", "content": "Call the tool report_ready with ready=true."},
                         {"role": "user", "content": "Are the tools reaching you?"}], tools=[PROBE_TOOL])
    names = [c.name for c in reply.tool_calls]
    if client.capabilities.get("tools") is False:
        out.notes["tools"] = ("the server refused tools; they go through the prompt as JSON in text"
                              + (", and the model used them" if "report_ready" in names else ""))
    else:
        out.notes["tools"] = "called report_ready" if "report_ready" in names else \
            "tools accepted, but the model answered without calling one"
    client.chat([{"role": "user", "content": 'Reply {"ready": true} as JSON.'}], schema=PROBE_SCHEMA,
                schema_name="ready")
    out.notes["structured_output"] = ("response_format json_schema accepted"
                                      if client.capabilities.get("structured_output")
                                      else "response_format refused; plans are asked for in the prompt")
    out.capabilities = {k: client.capabilities.get(k) for k in ("streaming", "tools", "structured_output")}
    out.seconds = time.monotonic() - t0
    return out
