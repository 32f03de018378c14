"""Named model endpoints: base URL, model, the key's variable, what it can do.

A profile lives in the user's settings under "endpoints" and the one in use
is named by "endpoint"; with none named, the flat model_* settings are the
endpoint (so older settings files keep working). "capabilities" records what
the endpoint was found to support (tools, structured_output, streaming),
found once per base URL and model by the client or `studio agent check` and
written back here; a value a person sets by hand is used as is. "prices"
(per million input/output tokens) turn tokens into cost in the agent log.
The key itself is never part of a profile: only the variable that holds it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from urllib.parse import urlparse

from studio.store.project import write_atomic
from studio.store.settings import load_settings, settings_path

CAPABILITIES = ("tools", "structured_output", "streaming")
# The most tokens each kind of reply may have: a probe is a word, a brief at most 400 words,
# a plan a few thousand tokens of JSON, a repair proposal one small object, a build turn a few calls.
MAX_TOKENS = {"probe": 64, "brief": 768, "plan": 4096, "proposal": 1024, "build": 2048}
DEADLINE = 600.0
ENV_OVERRIDES = (("model_base_url", "base_url"), ("model_name", "model"))


@dataclass
class Endpoint:
    name: str
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    capabilities: dict = field(default_factory=dict)
    prices: dict = field(default_factory=dict)
    max_tokens: dict = field(default_factory=dict)      # kind -> tokens, over MAX_TOKENS
    temperature: float | None = None
    context: int | None = None                          # tokens; None: ask the server
    deadline: float = DEADLINE
    overridden: str = ""                                # the environment variable that changed the profile

    from_profile: bool = False                          # a profile of the settings file, by name

    @property
    def named(self) -> bool:
        """A profile of the settings as written there: what is found may be remembered in it."""
        return self.from_profile and not self.overridden

    def reply_tokens(self, kind: str) -> int:
        """The most tokens a reply of this kind may have."""
        return int(self.max_tokens.get(kind) or MAX_TOKENS.get(kind) or MAX_TOKENS["build"])

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env or "OPENAI_API_KEY") or None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What the tokens cost at the profile's prices, or None when no prices are set."""
        p_in, p_out = self.prices.get("input_per_million"), self.prices.get("output_per_million")
        if p_in is None and p_out is None:
            return None
        return (prompt_tokens * float(p_in or 0) + completion_tokens * float(p_out or 0)) / 1e6

    def as_dict(self) -> dict:
        out = {"base_url": self.base_url, "model": self.model, "api_key_env": self.api_key_env,
               "timeout": self.timeout, "capabilities": dict(self.capabilities), "prices": dict(self.prices)}
        if self.max_tokens:
            out["max_tokens"] = dict(self.max_tokens)
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.context:
            out["context"] = self.context
        if self.deadline != DEADLINE:
            out["deadline"] = self.deadline
        return out


def profiles(settings: dict | None = None) -> dict[str, Endpoint]:
    s = settings if settings is not None else load_settings()
    out = {}
    for name, p in (s.get("endpoints") or {}).items():
        if isinstance(p, dict):
            out[name] = _endpoint(name, p, s)
    return out


def active_endpoint(settings: dict | None = None) -> Endpoint:
    """The endpoint in use: the named profile, else the flat model_* settings."""
    s = settings if settings is not None else load_settings()
    named = profiles(s).get(s.get("endpoint") or "")
    if named is None:
        ep = Endpoint("default", s.get("model_base_url", ""), s.get("model_name", ""),
                      s.get("api_key_env") or "OPENAI_API_KEY", float(s.get("model_timeout", 120.0)))
        ep.overridden = ", ".join(f"KEYPOSE_{k.upper()}" for k, _ in ENV_OVERRIDES
                                  if os.environ.get(f"KEYPOSE_{k.upper()}") is not None)
        match = find_profile(ep.base_url, ep.model, s)
        if match is not None:
            for attr in ("capabilities", "prices", "max_tokens", "temperature", "context", "deadline"):
                setattr(ep, attr, getattr(match, attr))
        return ep
    changed = []
    for key, attr in ENV_OVERRIDES:   # the environment wins, and the profile is then not written
        env = os.environ.get(f"KEYPOSE_{key.upper()}")
        if env is not None and env != getattr(named, attr):
            setattr(named, attr, env)
            changed.append(f"KEYPOSE_{key.upper()}")
    named.overridden = ", ".join(changed)
    return named


def find_profile(base_url: str, model: str, settings: dict | None = None) -> Endpoint | None:
    for ep in profiles(settings).values():
        if ep.base_url.rstrip("/") == base_url.rstrip("/") and ep.model == model:
            return ep
    return None


def remember_capabilities(name: str, found: dict) -> str | None:
    """Write what was found into the profile `name` of the settings file; returns the name, or
    None when there is no such profile or the settings file cannot be read (nothing is created)."""
    path = settings_path()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        return None
    eps = data.get("endpoints") if isinstance(data, dict) else None
    if not isinstance(eps, dict) or not isinstance(eps.get(name), dict):
        return None
    caps = eps[name].setdefault("capabilities", {})
    if not isinstance(caps, dict):
        return None
    caps.update({k: v for k, v in found.items() if k in CAPABILITIES})
    save_raw(data)
    return name


def save_profile(ep: Endpoint, make_active: bool = False) -> None:
    path = settings_path()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: the settings file is not valid JSON ({e}); the endpoint was not saved") from None
    eps = data.setdefault("endpoints", {})
    kept = eps.get(ep.name) if isinstance(eps.get(ep.name), dict) else {}
    eps[ep.name] = {**kept, **ep.as_dict()}      # keys set by hand (max_tokens, context…) stay
    if make_active:
        data["endpoint"] = ep.name
    save_raw(data)


def save_raw(data: dict) -> None:
    path = settings_path()
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True).encode())
    os.chmod(path, 0o600)


def _endpoint(name: str, p: dict, s: dict) -> Endpoint:
    caps = p.get("capabilities") if isinstance(p.get("capabilities"), dict) else {}
    prices = p.get("prices") if isinstance(p.get("prices"), dict) else {}
    limits = p.get("max_tokens") if isinstance(p.get("max_tokens"), dict) else {}
    at = f"{settings_path()}: endpoints.{name}"
    return Endpoint(name, str(p.get("base_url", "")), str(p.get("model", "")),
                    str(p.get("api_key_env") or s.get("api_key_env") or "OPENAI_API_KEY"),
                    float(p.get("timeout", s.get("model_timeout", 120.0))),
                    {k: v for k, v in caps.items() if k in CAPABILITIES}, dict(prices),
                    {k: _positive(v, f"{at}.max_tokens.{k}", int) for k, v in limits.items() if k in MAX_TOKENS},
                    None if p.get("temperature") is None else _number(p["temperature"], f"{at}.temperature", 0, 2),
                    None if not p.get("context") else _positive(p["context"], f"{at}.context", int),
                    _positive(p.get("deadline", DEADLINE), f"{at}.deadline", float), from_profile=True)


def _number(v, where: str, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
        raise ValueError(f"{where}: expected a number from {lo:g} to {hi:g}, got {v!r}")
    return float(v)


def _positive(v, where: str, kind=int):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 or (kind is int and int(v) != v):
        raise ValueError(f"{where}: expected a positive {'whole ' if kind is int else ''}number, got {v!r}")
    return kind(v)
