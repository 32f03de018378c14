"""What an endpoint can do, found by asking it small things and saying only what was seen.

The model name is looked up in the server's `/v1/models` (llama.cpp answers
whatever name is sent with its one model, so a wrong name would otherwise
pass); the context length is asked as the client asks it (`context.py`).
Then three probes, each bounded by the profile's `max_tokens.probe` and
accepted when that bound cuts them off: a streamed reply (streaming), a call
of one harmless tool (tool calling: the server may take the tools and the
model still answer in text, which is said as "accepted but not called"), and
a reply under a JSON schema (structured output). The client records what it
finds and, for a named endpoint profile (never the flat settings, never one
the environment overrides), remembers it there. Used by `studio agent check`
and the Settings dialog's "Test connection".
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
    words: dict = field(default_factory=dict)        # what each line says before its note
    seconds: float = 0.0
    model_listed: bool | None = None                 # None: the server lists no models
    context: int | None = None
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        def yes(key: str) -> str:
            v = self.capabilities.get(key)
            return self.words.get(key) or ("yes" if v else "no" if v is False else "unknown")
        return [f"  model: {self.words.get('model', 'unknown')} ({self.notes.get('model', '')})",
                f"  context: {self.words.get('context', 'unknown')} ({self.notes.get('context', '')})",
                f"  streaming: {yes('streaming')} ({self.notes.get('streaming', '')})",
                f"  tools: {yes('tools')} ({self.notes.get('tools', '')})",
                f"  structured output: {yes('structured_output')} ({self.notes.get('structured_output', '')})"]


def _model_line(out: EndpointFound, client: ModelClient) -> None:
    ctx = client.context()
    if ctx.models is None:
        out.words["model"], out.notes["model"] = "not checked", f"the server lists no models: {ctx.models_error}"
        return
    listed = ", ".join(ctx.models[:8]) + (" …" if len(ctx.models) > 8 else "") or "none"
    out.model_listed = client.model in ctx.models
    if out.model_listed:
        out.words["model"], out.notes["model"] = "listed", f"/v1/models lists {listed}"
    else:
        out.words["model"] = "NOT listed"
        out.notes["model"] = (f"{client.model!r} is not among the models the server lists ({listed}); "
                              f"a server with one model may answer any name with it")
        out.problems.append(f"the model name {client.model!r} is not one the server lists ({listed})")


def check_endpoint(client: ModelClient) -> EndpointFound:
    """Ask the endpoint the probes; AgentError when it cannot be reached or refuses."""
    t0 = time.monotonic()
    client.capabilities = {}          # found afresh: a check is asked for when something changed
    out = EndpointFound(client.base_url, client.model)
    _model_line(out, client)
    ctx = client.context()
    out.context = ctx.tokens
    out.words["context"] = f"{ctx.tokens} tokens" if ctx.tokens else "unknown"
    out.notes["context"] = ctx.source
    pieces: list[str] = []
    reply = client.chat([{"role": "user", "content": "Reply with the single word: ready"}], on_text=pieces.append,
                        kind="probe", accept_cut=True)
    cut = " (cut off at the probe's token limit)" if reply.finish_reason == "length" else ""
    out.notes["streaming"] = f"{len(pieces)} text chunk(s), {reply.completion_tokens} tokens, {reply.seconds:.2f} s{cut}"
    reply = client.chat([{"role": "system", "content": "Call the tool report_ready with ready=true."},
                         {"role": "user", "content": "Are the tools reaching you?"}], tools=[PROBE_TOOL],
                        kind="probe", accept_cut=True)
    names = [c.name for c in reply.tool_calls]
    said = " ".join(reply.content.split())[:60]
    if client.capabilities.get("tools") is False:
        out.words["tools"] = "no"
        out.notes["tools"] = ("the server refused tools; they go through the prompt as JSON in text"
                              + (", and the model used them" if "report_ready" in names else
                                 ", and the model did not call report_ready"))
    elif "report_ready" in names:
        out.words["tools"], out.notes["tools"] = "yes", "called report_ready"
    else:
        out.words["tools"] = "accepted but not called"
        out.notes["tools"] = (f"the server took the tools; the model answered in text: {said!r}" if said else
                              "the server took the tools; the model called none")
    reply = client.chat([{"role": "user", "content": 'Reply {"ready": true} as JSON.'}], schema=PROBE_SCHEMA,
                        schema_name="ready", kind="probe", accept_cut=True)
    out.notes["structured_output"] = ("response_format json_schema accepted"
                                      if client.capabilities.get("structured_output")
                                      else "response_format refused; plans are asked for in the prompt")
    out.capabilities = {k: client.capabilities.get(k) for k in ("streaming", "tools", "structured_output")}
    out.seconds = time.monotonic() - t0
    return out
