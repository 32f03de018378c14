"""The model, reached through the OpenAI SDK at a configurable base_url.

Any OpenAI-compatible server works (OpenAI, Ollama, vLLM, llama.cpp server).
Replies are streamed, so a reply that grows past `max_reply_chars` is cut off
and refused instead of filling memory, and a stream that stops before the
model says it finished is reported as truncated. The API key is handed to the
SDK only; every message this module raises has the key scrubbed out of it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Callable

import openai

from studio.store.settings import api_key, load_settings

from .errors import AgentError, ModelMissing

MAX_REPLY_CHARS = 200_000


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str            # raw JSON text, validated by the tool layer


@dataclass
class Reply:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    finish_reason: str = ""

    def as_message(self) -> dict:
        """The assistant message to append to a conversation."""
        msg: dict = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in self.tool_calls]
        return msg


class ModelClient:
    """One configured model endpoint; `chat` sends one conversation and returns one reply."""

    def __init__(self, base_url: str, model: str, key: str | None, timeout: float = 120.0,
                 max_retries: int = 1, max_reply_chars: int = MAX_REPLY_CHARS):
        if not base_url:
            raise ModelMissing("no model is configured: set model_base_url in the settings file "
                               "or KEYPOSE_MODEL_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
        self.base_url, self.model, self.timeout = base_url, model, float(timeout)
        self.max_reply_chars = max_reply_chars
        self._key = key or ""
        # Local servers need no key, but the SDK insists on one; a placeholder reveals nothing.
        self._sdk = openai.OpenAI(base_url=base_url, api_key=key or "no-key", timeout=self.timeout,
                                  max_retries=max_retries)

    @classmethod
    def from_settings(cls, settings: dict | None = None, **kw) -> "ModelClient":
        s = settings if settings is not None else load_settings()
        return cls(s.get("model_base_url", ""), s.get("model_name", ""), api_key(s),
                   timeout=float(s.get("model_timeout", 120.0)), **kw)

    def scrub(self, text: str) -> str:
        """`text` with the API key replaced, for anything shown or stored."""
        return text.replace(self._key, "***") if len(self._key) >= 6 else text

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             on_text: Callable[[str], None] | None = None) -> Reply:
        t0 = time.monotonic()
        kw: dict = {"model": self.model, "messages": messages, "stream": True,
                    "stream_options": {"include_usage": True}}
        if tools:
            kw["tools"] = tools
        try:
            stream = self._sdk.chat.completions.create(**kw)
        except openai.APITimeoutError:
            raise AgentError(f"the model at {self.base_url} did not answer within {self.timeout:g} s") from None
        except openai.APIStatusError as e:
            raise AgentError(self.scrub(f"the model at {self.base_url} refused the request "
                                        f"(HTTP {e.status_code}): {_error_text(e)}")) from None
        except openai.APIConnectionError as e:
            raise AgentError(self.scrub(f"cannot reach the model at {self.base_url} ({e.__cause__ or e})")) from None
        try:
            reply = self._collect(stream, on_text)
        except AgentError:
            raise
        except openai.APITimeoutError:
            raise AgentError(f"the reply from {self.base_url} was truncated: the model stopped "
                             f"sending for {self.timeout:g} s") from None
        except Exception as e:   # a broken stream surfaces as the transport's own error
            raise AgentError(self.scrub(f"the reply from {self.base_url} was truncated: the stream broke "
                                        f"off ({e.__cause__ or e})")) from None
        reply.seconds = time.monotonic() - t0
        return reply

    def _collect(self, stream, on_text) -> Reply:
        text: list[str] = []
        size = 0
        calls: dict[int, dict] = {}
        finish, tokens = "", 0
        try:
            for chunk in stream:
                if getattr(chunk, "usage", None):
                    tokens = int(chunk.usage.total_tokens or 0)
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        size += len(delta.content)
                        if on_text:
                            on_text(delta.content)
                    for tc in (delta.tool_calls or []) if delta is not None else []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function is not None:
                            slot["name"] += tc.function.name or ""
                            slot["arguments"] += tc.function.arguments or ""
                            size += len(tc.function.arguments or "")
                    if choice.finish_reason:
                        finish = choice.finish_reason
                if size > self.max_reply_chars:
                    raise AgentError(f"the reply from {self.base_url} is longer than "
                                     f"{self.max_reply_chars} characters; it was cut off and ignored")
        finally:
            stream.close()
        if not finish:
            raise AgentError(f"the reply from {self.base_url} was truncated: the stream ended "
                             f"before the model finished")
        if finish == "length":
            raise AgentError(f"the reply from {self.base_url} hit the model's length limit and is incomplete")
        tool_calls = [ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"] or "{}")
                      for i, c in sorted(calls.items())]
        return Reply("".join(text), tool_calls, tokens, finish_reason=finish)


def _error_text(e: openai.APIStatusError) -> str:
    body = e.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and "message" in err:
            return str(err["message"])[:500]
        return json.dumps(body)[:500]
    return str(body or e.message)[:500]
