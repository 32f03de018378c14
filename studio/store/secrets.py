"""One scrubber for every message and log: the model's key never shows.

A key can leak in disguise, so besides the key itself the scrubber removes
its simple transforms: reversed, hex (either case), and base64 (standard and
URL-safe, also when the key was encoded inside a longer text, at any of the
three byte alignments). Each form also matches when split across lines or
spaces. Keys shorter than MIN_KEY are not scrubbed: they would match ordinary
words.
"""
from __future__ import annotations

import base64
import functools
import os
import re

MIN_KEY = 8
MASK = "***"


def current_keys() -> list[str]:
    """Every key the studio could give a model now: the flat settings' and each endpoint profile's."""
    names = {"OPENAI_API_KEY"}
    keys = []
    try:
        from studio.store.settings import load_settings
        s = load_settings()
        names.add(s.get("api_key_env") or "OPENAI_API_KEY")
        names.update(p.get("api_key_env") or "OPENAI_API_KEY" for p in (s.get("endpoints") or {}).values()
                     if isinstance(p, dict))
        keys.append(s.get("api_key") or "")
    except (ValueError, OSError, AttributeError):   # a broken settings file still leaves the environment
        pass
    keys += [os.environ.get(n, "") for n in sorted(names)]
    return [k for k in dict.fromkeys(keys) if isinstance(k, str) and len(k) >= MIN_KEY]


def _base64_cores(raw: bytes) -> list[str]:
    """The parts of base64 text that any encoding of `raw` inside a longer text contains."""
    cores = []
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + raw + b"\0\0").decode()
        start = (shift * 4 + 2) // 3 + (1 if shift else 0)     # characters touched by the leading bytes
        end = ((shift + len(raw)) // 3) * 4                    # whole groups made of the key's bytes only
        core = text[start:end]
        if len(core) >= MIN_KEY:
            cores.append(core)
    return cores


@functools.lru_cache(maxsize=8)
def _pattern(key: str) -> re.Pattern | None:
    if len(key) < MIN_KEY:
        return None
    raw = key.encode()
    forms = {key, key[::-1], raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode().rstrip("=")}
    for text in (key, key[::-1]):
        for core in _base64_cores(text.encode()):
            forms.update({core, core.replace("+", "-").replace("/", "_")})
    spaced = [r"\s*".join(re.escape(c) for c in form) for form in sorted(forms, key=len, reverse=True)]
    return re.compile("|".join(spaced))


def scrub(text: str, key: str | None = None) -> str:
    """`text` with `key` (default: every current model key) and its disguises replaced by ***."""
    if not text:
        return text
    for k in (current_keys() if key is None else [key]):
        pattern = _pattern(k)
        if pattern is not None:
            text = pattern.sub(MASK, text)
    return text
