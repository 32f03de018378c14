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
- Every request is bounded: `max_tokens` by the kind of call (probe, brief,
  plan, proposal, build; the endpoint profile's limits over the defaults),
  the per-chunk `timeout`, and an overall `deadline` for the whole reply.
- The server's context length is asked once (`context.py`: llama.cpp's
  /props, vLLM's max_model_len, Ollama's /api/show) or taken from the
  profile; a conversation that would not fit with its reply has its older
  turns summarised before it is sent, and the reply's bound is lowered to the
  room left, never past it.
- Every request, answered or not, is one entry of `attempts` (kind, tokens
  in and out, seconds, cost, what went wrong), which the agent's steps log;
  `on_progress` hears the tokens streamed so far and the time taken.

The API key is handed to the SDK only; every message this module raises has
the key, and its disguises, scrubbed out of it (`studio.store.secrets`).
"""
from __future__ import annotations

import email.utils
import json
import queue
import re
import threading
import time
from typing import Callable

import openai

from studio.store.endpoints import Endpoint, active_endpoint, remember_capabilities
from studio.store.secrets import scrub
from studio.store.errors import Refused
from studio.store.settings import load_settings

from studio.agent import text_tools
from studio.agent.context import Context, estimate_tokens, server_context
from studio.agent.errors import AgentError, ModelMissing
from studio.agent.stream import Assembly, Reply, ToolCall

__all__ = ["ModelClient", "Reply", "ToolCall"]

MAX_REPLY_CHARS = 200_000
MAX_CONTINUATIONS = 2
CONTINUE = ("Your reply was cut off by the length limit. Continue exactly where it stopped, "
            "without repeating anything and without any preamble.")
MIN_REPLY = 48          # fewer tokens than this left for a reply: the conversation does not fit
CONTEXT_MARGIN = 32     # tokens kept free beside the estimate (chat template, tool framing)
MAX_TOKENS_REFUSED = re.compile(r"max_completion_tokens", re.I)
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
                 on_status: Callable[[str], None] | None = None,
                 on_progress: Callable[[str, int, float, bool], None] | None = None, deadline: float | None = None):
        if not base_url:
            raise ModelMissing("no model is configured: set model_base_url in the settings file "
                               "or KEYPOSE_MODEL_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
        self.base_url, self.model, self.timeout = base_url, model, float(timeout)
        self.max_reply_chars, self.max_waits, self.max_wait = max_reply_chars, max(0, max_retries), max_wait
        self.endpoint = endpoint or Endpoint("", base_url, model, timeout=self.timeout)
        self.capabilities: dict = dict(self.endpoint.capabilities)
        self.remember, self.on_status, self.on_progress = remember, on_status, on_progress
        self.deadline = float(deadline if deadline is not None else self.endpoint.deadline)
        self.attempts: list[dict] = []          # every request: kind, tokens, seconds, cost, error
        self._context: Context | None = None
        self._limit_key = "max_tokens"          # max_completion_tokens where a server insists
        self._strict = True
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
        kw["remember"] = kw["remember"] and ep.named      # only a named profile, never an override
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
        if self.remember and self.endpoint.named:
            remember_capabilities(self.endpoint.name, new)

    # ---- the context -------------------------------------------------------
    def context(self) -> Context:
        """The server's context length (asked once; the profile's `context` wins), or unknown."""
        if self._context is None:
            if self.endpoint.context:
                self._context = Context(int(self.endpoint.context), "the endpoint profile's context")
            else:
                self._context = server_context(self.base_url, self.model, self._key)
        return self._context

    def prompt_budget(self, kind: str) -> int | None:
        """Tokens a prompt of this kind may take so that its reply still fits; None when unknown."""
        ctx = self.context().tokens
        if not ctx:
            return None
        return max(0, ctx - self.endpoint.reply_tokens(kind) - CONTEXT_MARGIN)

    def since(self, mark: int) -> list[dict]:
        """The attempts made after `len(self.attempts)` was `mark`."""
        return [dict(a) for a in self.attempts[mark:]]

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             on_text: Callable[[str], None] | None = None, schema: dict | None = None,
             schema_name: str = "reply", kind: str = "build", accept_cut: bool = False,
             strict: bool = True) -> Reply:
        """One reply to `messages`; with `schema`, structured output where the endpoint has it.
        `kind` bounds the reply (probe, brief, plan, proposal, build); with `accept_cut`, a reply
        cut off by that bound is returned as it is (finish_reason "length") instead of continued.
        `strict` false sends a schema with free objects, which strict structured output refuses."""
        self._strict = strict
        t0 = time.monotonic()
        waits, shrunk = 0, False
        conversation = list(messages)
        while True:
            as_text = bool(tools) and self.capabilities.get("tools") is False
            structured = schema is not None and self.capabilities.get("structured_output") is not False
            sent_tools = None if as_text else tools
            sent = text_tools.encode(conversation, tools) if as_text else conversation
            conversation, sent, limit, shrunk = self._fit(conversation, sent, sent_tools, tools, as_text, kind, shrunk)
            try:
                reply = self._ask(sent, sent_tools, as_text, schema if structured else None, schema_name,
                                  on_text, kind, limit, accept_cut, t0)
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
                if r.status in (400, 422) and self._limit_key == "max_tokens" and MAX_TOKENS_REFUSED.search(r.text):
                    self._limit_key = "max_completion_tokens"     # OpenAI's newer models
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

    def _fit(self, conversation, sent, sent_tools, tools, as_text, kind, shrunk):
        """The conversation as it fits the context with room for its reply, and that room:
        older turns summarised when needed; a refusal when even then there is no room."""
        want = self.endpoint.reply_tokens(kind)
        ctx = self.context().tokens
        if not ctx:
            return conversation, sent, want, shrunk
        need = estimate_tokens(sent, sent_tools)
        if need + want + CONTEXT_MARGIN > ctx and not shrunk:
            smaller = shrink(conversation)
            if smaller != conversation:
                conversation, shrunk = smaller, True
                sent = text_tools.encode(conversation, tools) if as_text else conversation
                need = estimate_tokens(sent, sent_tools)
                self._say(f"the conversation (~{need} tokens with older turns summarised) is fitted to "
                          f"{self.model}'s {ctx}-token context")
        room = ctx - need - CONTEXT_MARGIN
        if room < min(MIN_REPLY, want):
            raise AgentError(f"the prompt (~{need} tokens) leaves no room for a reply in the {ctx}-token "
                             f"context of {self.model} at {self.base_url} ({self.context().source}); "
                             f"give the server a larger context (llama.cpp -c, Ollama num_ctx, vLLM "
                             f"--max-model-len) or set the profile's context")
        return conversation, sent, min(want, room), shrunk

    def _ask(self, sent, tools, as_text, schema, schema_name, on_text, kind, limit, accept_cut, t0) -> Reply:
        """One reply, continued when the token limit cut it off; tools in text decoded."""
        self._replies += 1
        prefix = f"call_{self._replies}"
        reply = self._once(sent, tools, schema, schema_name, on_text, prefix, kind, limit, t0)
        for _ in range(MAX_CONTINUATIONS):
            if accept_cut or reply.finish_reason != "length" or reply.tool_calls:
                break
            self._say(f"the reply hit the {limit}-token limit of a {kind} reply; asking {self.model} to continue")
            more = self._once([*sent, {"role": "assistant", "content": reply.content},
                               {"role": "user", "content": CONTINUE}], None, schema, schema_name, on_text,
                              prefix, kind, limit, t0)
            content = reply.content + more.content
            if schema is not None and not _whole_json(content) and _whole_json(more.content):
                content = more.content      # a server held to the schema answers anew, whole
            reply = Reply(content, more.tool_calls, reply.tokens + more.tokens,
                          finish_reason=more.finish_reason, reasoning=reply.reasoning + more.reasoning,
                          prompt_tokens=reply.prompt_tokens + more.prompt_tokens,
                          completion_tokens=reply.completion_tokens + more.completion_tokens)
        if reply.finish_reason == "length" and not accept_cut:
            raise AgentError(f"the reply from {self.base_url} hit the {limit}-token limit of a {kind} reply and "
                             f"is incomplete" + (" (a tool call was cut off)" if reply.tool_calls else
                                                 f" after {MAX_CONTINUATIONS} continuations") +
                             f"; raise max_tokens.{kind} in the endpoint profile")
        if as_text:
            reply = text_tools.decode(reply, prefix, self._seen_ids)
        return reply

    def _once(self, messages, tools, schema, schema_name, on_text, prefix, kind, limit, t0) -> Reply:
        kw: dict = {"model": self.model, "messages": messages, "stream": True, self._limit_key: int(limit)}
        if self.endpoint.temperature is not None:
            kw["temperature"] = self.endpoint.temperature
        if self._usage_option:
            kw["stream_options"] = {"include_usage": True}
        if tools:
            kw["tools"] = tools
        if schema is not None:
            kw["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": schema_name, "schema": schema,
                                                     "strict": self._strict}}
        started = time.monotonic()
        attempt = {"kind": kind, "max_tokens": int(limit), "ok": False, "tokens_in": 0, "tokens_out": 0}
        self.attempts.append(attempt)
        parts = Assembly(self.max_reply_chars, self.base_url, on_text)
        try:
            reply = self._stream(kw, parts, kind, t0)
        except _Refusal as r:
            attempt["error"] = self.scrub(f"HTTP {r.status}: {r.text}")[:300]
            raise
        except BaseException as e:
            attempt["error"] = self.scrub(str(e) or type(e).__name__)[:300]
            attempt["tokens_out"] = parts.pieces
            attempt["tokens_in"] = estimate_tokens(messages, tools)
            raise
        finally:
            attempt["seconds"] = round(time.monotonic() - started, 3)
        reply = parts.reply(prefix, self._seen_ids)
        if parts.usage is None:   # no usage from this server: estimate, so the log is not silent
            prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
            completion = (len(reply.content) + sum(len(c.arguments) for c in reply.tool_calls)) // 4
            reply.prompt_tokens, reply.completion_tokens, reply.tokens = prompt, completion, prompt + completion
        cost = self.endpoint.cost(reply.prompt_tokens, reply.completion_tokens)
        attempt.update(ok=True, tokens_in=reply.prompt_tokens, tokens_out=reply.completion_tokens,
                       finish=reply.finish_reason, **({"cost": round(cost, 6)} if cost is not None else {}))
        return reply

    def _stream(self, kw: dict, parts: Assembly, kind: str, t0: float) -> None:
        """Send the request and read its stream into `parts`, within the per-chunk timeout and the
        overall deadline (counted from `t0`, the start of the reply). The transport runs on a
        thread of its own, so a server that keeps a stream open past the deadline cannot hold
        the studio: the reply ends there, and the request is closed."""
        end = t0 + self.deadline
        inbox: queue.Queue = queue.Queue()
        handle: dict = {}
        timeout = max(0.5, min(self.timeout, end - time.monotonic()))

        def pull() -> None:
            try:
                stream = self._sdk.chat.completions.create(**kw, timeout=timeout)
                handle["stream"] = stream
                for chunk in stream:
                    inbox.put(("chunk", chunk))
                    if handle.get("closed"):
                        break
                inbox.put(("end", None))
            except BaseException as e:   # handed over to the caller's thread, which decides
                inbox.put(("error", e))

        threading.Thread(target=pull, daemon=True, name="model-stream").start()
        last = 0.0
        try:
            while True:
                left = end - time.monotonic()
                try:
                    what, item = inbox.get(timeout=max(0.0, left))
                except queue.Empty:
                    raise AgentError(f"the reply from {self.base_url} did not finish within the "
                                     f"{self.deadline:g} s deadline ({parts.pieces} pieces streamed in "
                                     f"{time.monotonic() - t0:.0f} s); it was stopped — raise the endpoint "
                                     f"profile's deadline for a slow model") from None
                if what == "end":
                    break
                if what == "error":
                    self._transport_error(item, "stream" in handle, timeout)
                parts.add(item)
                now = time.monotonic()
                if self.on_progress and now - last >= 0.25:
                    last = now
                    self.on_progress(kind, parts.pieces, now - t0, False)
        finally:
            handle["closed"] = True
            stream = handle.get("stream")
            if stream is not None:
                try:
                    stream.close()
                except Exception:   # closing a stream another thread reads: best effort
                    pass
        if self.on_progress:
            self.on_progress(kind, parts.pieces, time.monotonic() - t0, True)
        if not parts.finish:
            raise AgentError(f"the reply from {self.base_url} was truncated: the stream ended "
                             f"before the model finished")

    def _transport_error(self, e: BaseException, streaming: bool, timeout: float) -> None:
        if isinstance(e, Refused):    # the studio's own refusal passes as it is
            raise e
        if isinstance(e, openai.APITimeoutError) and not streaming:
            raise AgentError(f"the model at {self.base_url} did not answer within {timeout:g} s") from None
        if isinstance(e, openai.APITimeoutError):
            raise AgentError(f"the reply from {self.base_url} was truncated: the model stopped "
                             f"sending for {timeout:g} s") from None
        if isinstance(e, openai.APIStatusError):
            raise _Refusal(e.status_code, _error_text(e), _retry_after(e.response.headers)) from None
        if isinstance(e, openai.APIConnectionError) and not streaming:
            raise AgentError(self.scrub(f"cannot reach the model at {self.base_url} ({e.__cause__ or e})")) from None
        raise AgentError(self.scrub(f"the reply from {self.base_url} was truncated: the stream broke "
                                    f"off ({e.__cause__ or e})")) from None

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


def _whole_json(text: str) -> bool:
    try:
        json.loads((text or "").strip())
    except json.JSONDecodeError:
        return False
    return True


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
