"""How much a server can read at once, asked where it can be, and how much a prompt takes.

The chat-completions API has no call for the context length, so each server
is asked in its own way, once per client:

- vLLM lists `max_model_len` for each model in `/v1/models`;
- llama.cpp's server tells `default_generation_settings.n_ctx` (its `-c`) in `/props`;
- Ollama's `/api/show` gives the model's `num_ctx` parameter when its Modelfile
  sets one; without it Ollama runs a model with its own default (4,096 tokens
  unless `OLLAMA_CONTEXT_LENGTH` says otherwise) and cuts a longer prompt
  silently, so that default is what the studio fits to.

A server that answers none of these (OpenAI, a proxy) leaves the context
unknown: prompts are then sent as they are, and a context-length error still
summarises older turns once. The profile's `context` wins over all of it.

Tokens are estimated, not counted: three characters a token (JSON, numbers
and names tokenise worse than prose), a few more for each message's framing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx

OLLAMA_DEFAULT = 4096
CHARS_PER_TOKEN = 3
PER_MESSAGE = 6


@dataclass
class Context:
    tokens: int | None
    source: str
    models: list[str] | None = None          # what /v1/models lists, when it answered
    models_error: str = ""
    notes: list[str] = field(default_factory=list)


def estimate_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    """About how many tokens the messages (and tool definitions, rendered into the prompt) take."""
    chars = 0
    for m in messages:
        chars += len(str(m.get("content") or ""))
        for c in m.get("tool_calls") or []:
            chars += len(json.dumps(c))
    if tools:
        chars += len(json.dumps(tools, separators=(",", ":")))
    return chars // CHARS_PER_TOKEN + PER_MESSAGE * len(messages)


def text_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


def _root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


def list_models(base_url: str, key: str = "", timeout: float = 5.0) -> tuple[list[dict] | None, str]:
    """The models `/v1/models` lists (raw entries), or None and why not."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        r = httpx.get(base_url.rstrip("/") + "/models", headers=headers, timeout=timeout)
    except httpx.TransportError as e:
        return None, f"unreachable ({type(e).__name__})"
    except httpx.HTTPError as e:
        return None, f"{type(e).__name__}"
    if r.status_code != 200:
        return None, f"HTTP {r.status_code}"
    try:
        data = r.json().get("data")
    except (ValueError, AttributeError):
        return None, "the reply is not the JSON of a model list"
    if not isinstance(data, list):
        return None, "the reply has no model list"
    return [m for m in data if isinstance(m, dict)], ""


def server_context(base_url: str, model: str, key: str = "", timeout: float = 5.0) -> Context:
    """The context length the server gives `model`, and where it was found."""
    entries, why = list_models(base_url, key, timeout)
    names = [str(m.get("id", "")) for m in entries] if entries is not None else None
    out = Context(None, "unknown: the server does not say (set the endpoint profile's context)",
                  names, why)
    if why.startswith("unreachable"):       # no server there to ask anything else
        return out
    if entries:
        mine = next((m for m in entries if m.get("id") == model), entries[0] if len(entries) == 1 else None)
        n = _positive((mine or {}).get("max_model_len"))
        if n:
            out.tokens, out.source = n, "the server's /v1/models (max_model_len)"
            return out
    root = _root(base_url)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        r = httpx.get(root + "/props", headers=headers, timeout=timeout)
        props = r.json() if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        props = None
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        n = _positive(settings.get("n_ctx") if isinstance(settings, dict) else None) or _positive(props.get("n_ctx"))
        if n:
            out.tokens, out.source = n, "llama.cpp's /props (n_ctx)"
            return out
    try:
        r = httpx.post(root + "/api/show", json={"model": model}, headers=headers, timeout=timeout)
        show = r.json() if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        show = None
    if isinstance(show, dict) and ("model_info" in show or "parameters" in show):
        n = _num_ctx(show.get("parameters"))
        trained = next((_positive(v) for k, v in (show.get("model_info") or {}).items()
                        if str(k).endswith(".context_length")), None)
        if n:
            out.tokens, out.source = n, "Ollama's /api/show (num_ctx)"
        else:
            out.tokens = min(OLLAMA_DEFAULT, trained or OLLAMA_DEFAULT)
            out.source = (f"Ollama's default context ({OLLAMA_DEFAULT} tokens: the model sets no num_ctx; "
                          f"OLLAMA_CONTEXT_LENGTH on the server may change it, the profile's context says so)")
    return out


def _num_ctx(parameters) -> int | None:
    if not isinstance(parameters, str):
        return None
    for line in parameters.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx":
            return _positive(parts[1])
    return None


def _positive(v) -> int | None:
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None
