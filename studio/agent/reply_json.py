"""Finding the JSON in a model's reply, wherever the model put it.

Chat models wrap what they were asked for: "Sure! Here is the plan:", a
```json fence, then "Let me know if you want changes." Reading is tolerant:
the whole reply if it is JSON, else each fenced block, else the first
balanced {...} that parses. Checking stays strict: what is found goes to the
same validators as before, and a reply with nothing to find is refused with
a message saying what the reply began with, so a retry can tell the model.
"""
from __future__ import annotations

import json
import re

from studio.agent.plan_shape import PlanInvalid

FENCE = re.compile(r"```[ \t]*(?:json|JSON|jsonc)?[ \t]*\r?\n?(.*?)```", re.S)
_decoder = json.JSONDecoder()


def find_json(text: str, want: type = dict) -> object:
    """The first JSON value of type `want` in `text`; PlanInvalid says why there is none."""
    body = (text or "").strip()
    if not body:
        raise PlanInvalid("the reply is empty; expected one JSON object")
    first_error = None
    try:
        value = json.loads(body)
        if isinstance(value, want):
            return value
    except json.JSONDecodeError as e:
        first_error = e
    for block in FENCE.findall(body):
        try:
            value = json.loads(block.strip())
        except json.JSONDecodeError as e:
            first_error = first_error or e
            continue
        if isinstance(value, want):
            return value
    opener = "{" if want is dict else "["
    at = body.find(opener)
    while at != -1:
        try:
            value, _end = _decoder.raw_decode(body, at)
        except json.JSONDecodeError as e:
            first_error = first_error or e
        else:
            if isinstance(value, want):
                return value
        at = body.find(opener, at + 1)
    kind = "object" if want is dict else "array"
    if first_error is None or "{" not in body:
        raise PlanInvalid(f"the reply is not valid JSON: there is no JSON {kind} in it "
                          f"(it began {_start(body)}); expected one JSON {kind}")
    e = first_error
    raise PlanInvalid(f"the reply is not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); "
                      f"expected one JSON {kind}")


def unwrap_arguments(raw: object) -> str:
    """Tool-call arguments as JSON text: a dict is dumped, a JSON string inside a string unwrapped."""
    if isinstance(raw, dict):
        return json.dumps(raw)
    text = "" if raw is None else str(raw)
    for _ in range(2):   # '"{\"a\": 1}"': some servers encode the arguments twice
        try:
            inner = json.loads(text)
        except json.JSONDecodeError:
            return text
        if not isinstance(inner, str):
            return text
        text = inner
    return text


def _start(body: str) -> str:
    head = " ".join(body.split())[:60]
    return repr(head + ("…" if len(body) > 60 else ""))
