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


@dataclass
class Endpoint:
    name: str
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    capabilities: dict = field(default_factory=dict)
    prices: dict = field(default_factory=dict)

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env or "OPENAI_API_KEY") or None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What the tokens cost at the profile's prices, or None when no prices are set."""
        p_in, p_out = self.prices.get("input_per_million"), self.prices.get("output_per_million")
        if p_in is None and p_out is None:
            return None
        return (prompt_tokens * float(p_in or 0) + completion_tokens * float(p_out or 0)) / 1e6

    def as_dict(self) -> dict:
        return {"base_url": self.base_url, "model": self.model, "api_key_env": self.api_key_env,
                "timeout": self.timeout, "capabilities": dict(self.capabilities), "prices": dict(self.prices)}


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
        match = find_profile(ep.base_url, ep.model, s)
        if match is not None:
            ep.capabilities, ep.prices = dict(match.capabilities), dict(match.prices)
        return ep
    for key, attr in (("model_base_url", "base_url"), ("model_name", "model")):   # the environment wins
        env = os.environ.get(f"KEYPOSE_{key.upper()}")
        if env is not None:
            setattr(named, attr, env)
    return named


def find_profile(base_url: str, model: str, settings: dict | None = None) -> Endpoint | None:
    for ep in profiles(settings).values():
        if ep.base_url.rstrip("/") == base_url.rstrip("/") and ep.model == model:
            return ep
    return None


def remember_capabilities(base_url: str, model: str, found: dict) -> str | None:
    """Write what was found into every profile of this base URL and model (a new one if none);
    returns the profile name, or None when the settings file cannot be read."""
    path = settings_path()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    eps = data.setdefault("endpoints", {})
    if not isinstance(eps, dict):
        return None
    names = [n for n, p in eps.items() if isinstance(p, dict) and str(p.get("base_url", "")).rstrip("/")
             == base_url.rstrip("/") and p.get("model") == model]
    if not names:
        name = "default" if "default" not in eps else f"{urlparse(base_url).netloc} {model}"
        eps[name] = {"base_url": base_url, "model": model, "capabilities": {}}
        names = [name]
    for n in names:
        caps = eps[n].setdefault("capabilities", {})
        caps.update({k: v for k, v in found.items() if k in CAPABILITIES})
    save_raw(data)
    return names[0]


def save_profile(ep: Endpoint, make_active: bool = False) -> None:
    path = settings_path()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: the settings file is not valid JSON ({e}); the endpoint was not saved") from None
    data.setdefault("endpoints", {})[ep.name] = ep.as_dict()
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
    return Endpoint(name, str(p.get("base_url", "")), str(p.get("model", "")),
                    str(p.get("api_key_env") or s.get("api_key_env") or "OPENAI_API_KEY"),
                    float(p.get("timeout", s.get("model_timeout", 120.0))),
                    {k: v for k, v in caps.items() if k in CAPABILITIES}, dict(prices))
