"""The user's settings: model endpoint, Blender, render engine, farm.

They live in the user's config folder (or the file named by KEYPOSE_SETTINGS),
never in a project. The API key is read from the environment variable named by
`api_key_env` (OPENAI_API_KEY by default) or from the settings file, and is
never written anywhere else.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

DEFAULTS = {
    "model_base_url": "",           # empty: no model configured (offline repairer, stored plans)
    "model_name": "gpt-4.1-mini",
    "api_key_env": "OPENAI_API_KEY",
    "model_timeout": 120.0,         # seconds the agent waits for a model reply
    "blender_python": "",           # empty: <studio checkout>/.venv-blender/bin/python
    "blender_binary": "",           # a Blender executable, used with `-b --python` when set
    "render_engine": "BLENDER_WORKBENCH",
    "farm_address": "",             # Ray dashboard address, e.g. http://127.0.0.1:8265; empty: local
    "local_concurrency": 1,
    "endpoint": "",                 # the named endpoint profile in use (studio.store.endpoints); empty: model_*
    "endpoints": {},                # name -> {base_url, model, api_key_env, capabilities, prices}
    "model_max_wait": 60.0,         # seconds the agent waits at most when a server says Retry-After
    "unsandboxed_agent_code": False,  # True: run agent code without bubblewrap where it cannot run (logged)
    "mesh_face_limit": 1_000_000,   # the most faces an imported mesh may have; refused before it is read
}


def _limits():
    from studio.store.json_reading import Limits
    return Limits(max_bytes=1 << 20, max_depth=16, max_items=100_000, max_digits=30)


def settings_path() -> Path:
    env = os.environ.get("KEYPOSE_SETTINGS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "keypose-studio" / "settings.json"


def _read_file(path: Path) -> dict:
    """The settings file's object; one that does not parse is kept aside, the user told, {} used."""
    if not path.exists():
        return {}
    try:
        with open(path, "rb") as f:
            text = f.read(_limits().max_bytes + 1)
    except OSError as e:
        raise ValueError(f"{path}: cannot read the settings file ({e.strerror or e})") from None
    from studio.store.json_reading import JsonRefused, loads
    try:
        data = loads(text, str(path), _limits())
        problem = None if isinstance(data, dict) else f"expected a JSON object, got {type(data).__name__}"
    except JsonRefused as e:
        problem = str(e).removeprefix(f"{path}: ")
    if problem is None:
        return data
    kept = path.with_name(f"{path.name}.bad-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    try:
        os.replace(path, kept)
        where = f"kept it as {kept}"
    except OSError as e:
        where = f"could not move it aside ({e.strerror or e})"
    from studio.store.project import tell         # the project store loads only when there is something to say
    tell(f"{path}: the settings file does not parse ({problem}); {where}; using the default settings")
    return {}


def load_settings() -> dict:
    out = dict(DEFAULTS)
    path = settings_path()
    data = _read_file(path)
    out.update({k: v for k, v in data.items() if k in DEFAULTS or k == "api_key"})
    for key in DEFAULTS:   # KEYPOSE_MODEL_BASE_URL etc. override the file
        env = os.environ.get(f"KEYPOSE_{key.upper()}")
        if env is not None and isinstance(DEFAULTS[key], bool):
            out[key] = env.strip().lower() in ("1", "true", "yes", "on")
        elif env is not None and not isinstance(DEFAULTS[key], dict):
            out[key] = type(DEFAULTS[key])(env) if not isinstance(DEFAULTS[key], str) else env
    return out


def api_key(settings: dict) -> str | None:
    return os.environ.get(settings.get("api_key_env") or "OPENAI_API_KEY") or settings.get("api_key") or None


def save_settings(values: dict) -> None:
    """Write the non-secret settings; an api_key already in the file is kept as is."""
    path = settings_path()
    current = _read_file(path)
    current.update({k: v for k, v in values.items() if k in DEFAULTS})
    from studio.store.project import write_atomic
    write_atomic(path, json.dumps(current, indent=1, sort_keys=True).encode(), mode=0o600)
