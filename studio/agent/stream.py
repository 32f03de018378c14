"""One reply put together from stream chunks, as servers really send them.

OpenAI, Ollama, vLLM and llama.cpp's server agree on the chunk format only
roughly: tool calls arrive in pieces across chunks or whole in one, with or
without an `index`, ids missing or repeated, a name sent once or with every
piece, arguments as text, as an object, or as a JSON string inside a string;
a reasoning field (`reasoning_content`, `reasoning`) beside the content, or
a leading <think>…</think> inside it; a
chunk with no choices (usage, keep-alive); usage in the last chunk or not at
all. `Assembly` accepts all of them and yields the same `Reply`; whether the
reply is finished (a finish reason) is the client's to judge.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable

from studio.agent.errors import AgentError
from studio.agent.reply_json import unwrap_arguments

REASONING_FIELDS = ("reasoning_content", "reasoning")
THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.S)   # a reasoning model served without a reasoning parser


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
    reasoning: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def as_message(self) -> dict:
        """The assistant message to append to a conversation."""
        msg: dict = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in self.tool_calls]
        return msg


class Usage:
    """Tokens in and out, and their cost when the endpoint's prices are set, over several replies."""

    def __init__(self):
        self.prompt = self.completion = 0
        self.cost: float | None = None

    def add(self, reply: Reply) -> "Usage":
        self.prompt += reply.prompt_tokens
        self.completion += reply.completion_tokens
        if reply.cost is not None:
            self.cost = (self.cost or 0.0) + reply.cost
        return self

    def detail(self) -> dict:
        out = {"tokens_in": self.prompt, "tokens_out": self.completion}
        if self.cost is not None:
            out["cost"] = round(self.cost, 6)
        return out


class Assembly:
    """Chunks in, one `Reply` out; refuses a reply longer than `max_chars`."""

    def __init__(self, max_chars: int, where: str, on_text: Callable[[str], None] | None = None):
        self.max_chars, self.where, self.on_text = max_chars, where, on_text
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[dict] = []
        self._by_index: dict[int, dict] = {}
        self.size = 0
        self.pieces = 0           # pieces of text, reasoning and tool arguments: about one token each
        self.finish = ""
        self.usage: tuple[int, int] | None = None

    def add(self, chunk) -> None:
        usage = getattr(chunk, "usage", None)
        if usage:
            self.usage = (int(getattr(usage, "prompt_tokens", 0) or 0),
                          int(getattr(usage, "completion_tokens", 0) or 0))
        for choice in getattr(chunk, "choices", None) or []:
            delta = getattr(choice, "delta", None)
            if delta is not None:
                self._delta(delta)
            if getattr(choice, "finish_reason", None):
                self.finish = choice.finish_reason
        if self.size > self.max_chars:
            raise AgentError(f"the reply from {self.where} is longer than {self.max_chars} characters; "
                             f"it was cut off and ignored")

    def _delta(self, delta) -> None:
        if delta.content:
            self.text.append(delta.content)
            self.size += len(delta.content)
            self.pieces += 1
            if self.on_text:
                self.on_text(delta.content)
        extra = delta.model_extra if hasattr(delta, "model_extra") else vars(delta)   # undeclared fields
        if extra:
            for name in REASONING_FIELDS:
                piece = extra.get(name)
                if isinstance(piece, str) and piece:
                    self.reasoning.append(piece)
                    self.size += len(piece)
                    self.pieces += 1
                    break
        for tc in delta.tool_calls or []:
            self._tool_piece(tc)

    def _tool_piece(self, tc) -> None:
        fn = getattr(tc, "function", None)
        name = getattr(fn, "name", None) or "" if fn is not None else ""
        args = getattr(fn, "arguments", None) if fn is not None else None
        call_id = getattr(tc, "id", None) or ""
        index = getattr(tc, "index", None)
        slot = self._by_index.get(index) if index is not None else (self.calls[-1] if self.calls else None)
        starts_anew = slot is None or (call_id and slot["id"] and call_id != slot["id"] and slot["name"]) \
            or (index is None and name and slot["name"] and _complete(slot["arguments"]))
        if starts_anew:
            slot = {"id": "", "name": "", "arguments": ""}
            self.calls.append(slot)
            if index is not None:
                self._by_index[index] = slot
        if call_id and not slot["id"]:
            slot["id"] = call_id
        if name and name != slot["name"]:
            slot["name"] += name
        if isinstance(args, dict):
            slot["arguments"] = json.dumps(args)
        elif args:
            slot["arguments"] += str(args)
            self.size += len(str(args))
            self.pieces += 1

    def reply(self, id_prefix: str, seen_ids: set[str]) -> Reply:
        """The reply; every tool call gets an id that is unique in the conversation."""
        calls = []
        for i, c in enumerate(self.calls):
            call_id = c["id"] or f"{id_prefix}_{i + 1}"
            if call_id in seen_ids:
                n = 2
                while f"{call_id}_{n}" in seen_ids:
                    n += 1
                call_id = f"{call_id}_{n}"
            seen_ids.add(call_id)
            calls.append(ToolCall(call_id, c["name"], unwrap_arguments(c["arguments"]) or "{}"))
        prompt, completion = self.usage or (0, 0)
        text, reasoning = "".join(self.text), "".join(self.reasoning)
        think = THINK.match(text)
        if think:
            text, reasoning = text[think.end():], reasoning + think.group(1)
        return Reply(text, calls, prompt + completion, finish_reason=self.finish,
                     reasoning=reasoning, prompt_tokens=prompt, completion_tokens=completion)


def _complete(arguments: str) -> bool:
    """Whether a call's arguments so far are whole JSON (so a new name starts the next call)."""
    try:
        json.loads(arguments)
    except json.JSONDecodeError:
        return False
    return True
