"""The model, reached through the OpenAI SDK at a configurable base_url.

Any OpenAI-compatible server works (OpenAI, Ollama, vLLM, llama.cpp server,
LM Studio), each with its own habits; this module meets them:

- Replies are streamed and assembled by `stream.Assembly` (tool calls in
  pieces, reasoning fields, chunks without choices); a reply past
  `max_reply_chars` is refused, a stream that stops before the model says it
  finished is reported as truncated, one cut off by the token limit is asked
  to continue where it stopped.
- Structured output (`response_format` with a JSON schema) is sent when the
  caller gives a schema and the endpoint takes it; tools are sent as tools or,
  for a model without tool calling, through `text_tools`. What the endpoint
  refused is found once per base URL and model and remembered in the settings.
- 429 and 503 are waited for (Retry-After, capped, counted down through
  `on_status`); a context-length error shrinks the conversation once.

The API key is handed to the SDK only; every message this module raises has
the key, and its disguises, scrubbed out of it (`studio.store.secrets`).
"""
from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Callable

import openai

from studio.store.endpoints import Endpoint, active_endpoint, remember_capabilities
from studio.store.secrets import scrub
from studio.store.errors import Refused
from studio.store.settings import load_settings

from studio.agent import text_tools
from studio.agent.errors import AgentError, ModelMissing
from studio.agent.stream import Assembly, Reply, ToolCall

__all__ = ["ModelClient", "Reply", "ToolCall"]

MAX_REPLY_CHARS = 200_000
MAX_CONTINUATIONS = 2
CONTINUE = ("Your reply was cut off by the length limit. Continue exactly where it stopped, "
            "without repeating anything and without any preamble.")
CONTEXT_ERROR = re.compile(r"context.length|maximum context|context window|exceeds the available context|"
                           r"too many tokens|prompt is too long|context size", re.I)
TOOLS_REFUSED = re.compile(r"(not|n't) support\w* tools?|tool.choice|--jinja|tools? (are|is) not (supported|enabled)|"
                           r"unsupported.{0,20}tool|tool.{0,20}unsupported", re.I)
FORMAT_REFUSED = re.compile(r"response_format|json_schema|structured|guided|grammar", re.I)


class _Refusal(Exception):
    """An HTTP error reply, kept whole so `chat` can decide what to do with it."""

    def __init__(self, status: int, text: str, retry_after: float | None):
        super().__init__(text)
        self.status, self.text, self.retry_after = status, text, retry_after


class ModelClient:
    """One configured model endpoint; `chat` sends one conversation and returns one reply."""

    def __init__(self, base_url: str, model: str, key: str | None, timeout: float = 120.0,
                 max_retries: int = 3, max_reply_chars: int = MAX_REPLY_CHARS,
                 endpoint: Endpoint | None = None, remember: bool = False, max_wait: float = 60.0,
                 on_status: Callable[[str], None] | None = None):
        if not base_url:
            raise ModelMissing("no model is configured: set model_base_url in the settings file "
                               "or KEYPOSE_MODEL_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
        self.base_url, self.model, self.timeout = base_url, model, float(timeout)
        self.max_reply_chars, self.max_waits, self.max_wait = max_reply_chars, max(0, max_retries), max_wait
        self.endpoint = endpoint or Endpoint("", base_url, model, timeout=self.timeout)
        self.capabilities: dict = dict(self.endpoint.capabilities)
        self.remember, self.on_status = remember, on_status
        self._key = key or ""
        self._seen_ids: set[str] = set()
        self._usage_option = True      # stream_options.include_usage, until a server refuses it
        self._replies = 0
        # Local servers need no key, but the SDK insists on one; a placeholder reveals nothing.
        # Retries are ours (shown, capped), so the SDK's own are off.
        self._sdk = openai.OpenAI(base_url=base_url, api_key=key or "no-key", timeout=self.timeout,
                                  max_retries=0)

    @classmethod
    def from_settings(cls, settings: dict | None = None, **kw) -> "ModelClient":
        s = settings if settings is not None else load_settings()
        ep = active_endpoint(s)
        key = ep.api_key() or (s.get("api_key") if ep.name == "default" else None)
        kw.setdefault("remember", True)
        kw.setdefault("max_wait", float(s.get("model_max_wait", 60.0)))
        return cls(ep.base_url, ep.model, key, timeout=ep.timeout, endpoint=ep, **kw)

    def scrub(self, text: str) -> str:
        """`text` with the API key and its disguises replaced, for anything shown, sent or stored."""
        return scrub(scrub(text, self._key))

    def found(self, **caps) -> None:
        """Record what the endpoint supports, and remember it in the settings when asked to."""
        new = {k: v for k, v in caps.items() if self.capabilities.get(k) is None}
        if not new:
            return
        self.capabilities.update(new)
        if self.remember:
            remember_capabilities(self.base_url, self.model, new)

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             on_text: Callable[[str], None] | None = None, schema: dict | None = None,
             schema_name: str = "reply") -> Reply:
        """One reply to `messages`; with `schema`, structured output where the endpoint has it."""
        t0 = time.monotonic()
        waits, shrunk = 0, False
        conversation = list(messages)
        while True:
            as_text = bool(tools) and self.capabilities.get("tools") is False
            structured = schema is not None and self.capabilities.get("structured_output") is not False
            try:
                reply = self._ask(conversation, tools, as_text, schema if structured else None, schema_name, on_text)
            except _Refusal as r:
                if r.status in (429, 503) and waits < self.max_waits:
                    waits += 1
                    self._wait(r, waits)
                    continue
                if r.status in (400, 413, 422, 500) and CONTEXT_ERROR.search(r.text) and not shrunk:
                    smaller = shrink(conversation)
                    if smaller != conversation:
                        shrunk, conversation = True, smaller
                        self._say(f"the conversation is longer than {self.model}'s context; "
                                  f"older tool results summarised, asking once more")
                        continue
                if r.status in (400, 422) and "stream_options" in r.text and self._usage_option:
                    self._usage_option = False          # usage is then estimated
                    continue
                if r.status in (400, 422, 500, 501) and structured and FORMAT_REFUSED.search(r.text) \
                        and self.capabilities.get("structured_output") is None:
                    self.found(structured_output=False)
                    continue
                if r.status in (400, 422, 500, 501) and tools and not as_text and TOOLS_REFUSED.search(r.text) \
                        and self.capabilities.get("tools") is None:
                    self.found(tools=False)
                    self._say(f"{self.model} at {self.base_url} has no tool calling; tools go through the prompt")
                    continue
                raise AgentError(self._refusal_text(r, shrunk)) from None
            break
        found = {"streaming": True}
        if structured:
            found["structured_output"] = True
        if tools and not as_text:
            found["tools"] = True
        self.found(**found)
        reply.seconds = time.monotonic() - t0
        reply.cost = self.endpoint.cost(reply.prompt_tokens, reply.completion_tokens)
        return reply

    def _ask(self, messages, tools, as_text, schema, schema_name, on_text) -> Reply:
        """One reply, continued when the token limit cut it off; tools in text decoded."""
        self._replies += 1
        prefix = f"call_{self._replies}"
        sent = text_tools.encode(messages, tools) if as_text else messages
        reply = self._once(sent, None if as_text else tools, schema, schema_name, on_text, prefix)
        for _ in range(MAX_CONTINUATIONS):
            if reply.finish_reason != "length" or reply.tool_calls:
                break
            self._say(f"the reply hit {self.model}'s length limit; asking it to continue")
            more = self._once([*sent, {"role": "assistant", "content": reply.content},
                               {"role": "user", "content": CONTINUE}], None, None, schema_name, on_text, prefix)
            reply = Reply(reply.content + more.content, more.tool_calls, reply.tokens + more.tokens,
                          finish_reason=more.finish_reason, reasoning=reply.reasoning + more.reasoning,
                          prompt_tokens=reply.prompt_tokens + more.prompt_tokens,
                          completion_tokens=reply.completion_tokens + more.completion_tokens)
        if reply.finish_reason == "length":
            raise AgentError(f"the reply from {self.base_url} hit the model's length limit and is incomplete"
                             + (" (a tool call was cut off)" if reply.tool_calls else
                                f" after {MAX_CONTINUATIONS} continuations"))
        if as_text:
            reply = text_tools.decode(reply, prefix, self._seen_ids)
        return reply

    def _once(self, messages, tools, schema, schema_name, on_text, prefix) -> Reply:
        kw: dict = {"model": self.model, "messages": messages, "stream": True}
        if self._usage_option:
            kw["stream_options"] = {"include_usage": True}
        if tools:
            kw["tools"] = tools
        if schema is not None:
            kw["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
        try:
            stream = self._sdk.chat.completions.create(**kw)
        except openai.APITimeoutError:
            raise AgentError(f"the model at {self.base_url} did not answer within {self.timeout:g} s") from None
        except openai.APIStatusError as e:
            raise _Refusal(e.status_code, _error_text(e), _retry_after(e.response.headers)) from None
        except openai.APIConnectionError as e:
            raise AgentError(self.scrub(f"cannot reach the model at {self.base_url} ({e.__cause__ or e})")) from None
        parts = Assembly(self.max_reply_chars, self.base_url, on_text)
        try:
            for chunk in stream:
                parts.add(chunk)
        except Refused:               # the studio's own: a reply refused, or the caller cancelling it
            raise
        except openai.APITimeoutError:
            raise AgentError(f"the reply from {self.base_url} was truncated: the model stopped "
                             f"sending for {self.timeout:g} s") from None
        except Exception as e:   # a broken stream surfaces as the transport's own error
            raise AgentError(self.scrub(f"the reply from {self.base_url} was truncated: the stream broke "
                                        f"off ({e.__cause__ or e})")) from None
        finally:
            stream.close()
        if not parts.finish:
            raise AgentError(f"the reply from {self.base_url} was truncated: the stream ended "
                             f"before the model finished")
        reply = parts.reply(prefix, self._seen_ids)
        if parts.usage is None:   # no usage from this server: estimate, so the log is not silent
            prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
            completion = (len(reply.content) + sum(len(c.arguments) for c in reply.tool_calls)) // 4
            reply.prompt_tokens, reply.completion_tokens, reply.tokens = prompt, completion, prompt + completion
        return reply

    def _wait(self, r: _Refusal, attempt: int) -> None:
        why = "rate limited" if r.status == 429 else "busy"
        delay = r.retry_after if r.retry_after is not None else min(2.0 ** attempt, self.max_wait)
        if delay > self.max_wait:
            raise AgentError(f"the model at {self.base_url} is {why} (HTTP {r.status}) and asks to wait "
                             f"{delay:g} s, more than the {self.max_wait:g} s the studio waits; try again later")
        left = delay
        while left > 0:
            self._say(f"the model at {self.base_url} is {why} (HTTP {r.status}); retrying in {left:.0f} s "
                      f"(attempt {attempt + 1} of {self.max_waits + 1})")
            step = min(1.0, left)
            time.sleep(step)
            left -= step

    def _say(self, text: str) -> None:
        if self.on_status:
            self.on_status(self.scrub(text))

    def _refusal_text(self, r: _Refusal, shrunk: bool) -> str:
        if r.status in (429, 503):
            return self.scrub(f"the model at {self.base_url} is still {'rate limited' if r.status == 429 else 'busy'} "
                              f"(HTTP {r.status}) after {self.max_waits} wait(s): {r.text}")
        if CONTEXT_ERROR.search(r.text):
            how = "even with older tool results summarised" if shrunk else "and has nothing older to summarise"
            return self.scrub(f"the conversation is longer than the context of {self.model} at {self.base_url}, "
                              f"{how} (HTTP {r.status}): {r.text}")
        return self.scrub(f"the model at {self.base_url} refused the request (HTTP {r.status}): {r.text}")


def shrink(messages: list[dict], keep_last: int = 2, limit: int = 300) -> list[dict]:
    """The conversation with older tool results and turns summarised; the system message, the
    first request and the last `keep_last` messages stay whole, and every tool call keeps its answer."""
    out = []
    last = len(messages) - keep_last
    for i, m in enumerate(messages):
        content = m.get("content")
        if i == 0 or (i == 1 and m.get("role") == "user") or i >= last or not isinstance(content, str):
            out.append(m)
        elif m.get("role") == "tool":
            out.append({**m, "content": _summary(content, limit)})
        elif len(content) > limit:
            out.append({**m, "content": content[:limit] + " … (shortened)"})
        else:
            out.append(m)
    return out


def _summary(content: str, limit: int) -> str:
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        kept = {k: data[k] for k in ("ok", "error", "done") if k in data}
        text = json.dumps({**kept, "summarised": True})
        return text if len(text) < len(content) else content
    return content if len(content) <= limit else content[:limit] + " … (summarised)"


def _retry_after(headers) -> float | None:
    value = (headers or {}).get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:   # an HTTP date
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error_text(e: openai.APIStatusError) -> str:
    body = e.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and "message" in err:
            return str(err["message"])[:500]
        if isinstance(err, str):   # llama.cpp and some proxies: {"error": "text"}
            return err[:500]
        return json.dumps(body)[:500]
    return str(body or e.message)[:500]
