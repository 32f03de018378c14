"""The model key never shows: not as itself, nor reversed, hex, base64 or split across lines."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from agent_scenes import make_arm_project
from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.errors import AgentError
from studio.agent.loop import run_tools
from studio.agent.planner import make_plan
from studio.store.secrets import scrub

KEY = "sk-proj-Scrub0123456789abcdefGHIJ"
REV = KEY[::-1]


def disguises(key: str) -> dict[str, str]:
    raw = key.encode()
    return {
        "itself": key, "reversed": key[::-1], "hex": raw.hex(), "HEX": raw.hex().upper(),
        "base64": base64.b64encode(raw).decode(), "base64 reversed": base64.b64encode(raw[::-1]).decode(),
        "base64 url-safe": base64.urlsafe_b64encode(raw).decode(),
        "base64 inside a text, shifted 1": base64.b64encode(b"k=" + raw + b";").decode(),
        "base64 inside a text, shifted 2": base64.b64encode(b"key: " + raw).decode(),
        "split across lines": key[:9] + "\n" + key[9:20] + "\n  " + key[20:],
        "spaced out": " ".join(key),
        "base64 wrapped at 16 columns": "\n".join(base64.b64encode(raw).decode()[i:i + 16] for i in range(0, 44, 16)),
    }


@pytest.mark.parametrize("name", sorted(disguises(KEY)))
def test_every_disguise_of_the_key_is_scrubbed(name):
    text = f"the model said: <<{disguises(KEY)[name]}>> and more"
    out = scrub(text, KEY)
    assert out.startswith("the model said: <<") and out.endswith(" and more") and "***" in out
    leftover = out.replace(" ", "").replace("\n", "")
    for form in disguises(KEY).values():
        assert form.replace(" ", "").replace("\n", "")[:12] not in leftover


def test_ordinary_text_and_short_keys_are_left_alone():
    text = "cannot reach the model at http://127.0.0.1:9/v1 (Connection refused)"
    assert scrub(text, KEY) == text
    assert scrub("no-key in sight, no-key", "no-key") == "no-key in sight, no-key"


def test_the_current_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert scrub(f"leak {REV}") == "leak ***"


def test_a_model_error_echoing_the_key_reversed_reaches_nobody(tmp_project):
    make_arm_project(tmp_project)
    with ChatServer() as chat:
        b64 = base64.b64encode(KEY.encode()).decode()
        chat.add({"status": 401, "body": json.dumps({"error": {"message": f"bad key {REV} / {b64}"}})})
        with pytest.raises(AgentError) as err:
            make_plan(tmp_project, ModelClient(chat.base_url, "m", KEY, timeout=5, max_retries=0), "carry it")
    message = str(err.value)
    assert "(HTTP 401): bad key *** / ***" in message and REV not in message


def test_agent_code_printing_the_key_encoded_is_scrubbed_before_the_model_sees_it(tmp_project):
    make_arm_project(tmp_project)
    code = f"import base64\nraise SystemExit('got ' + base64.b64encode({REV!r}[::-1].encode()).decode())\n"
    events: list[str] = []
    with ChatServer() as chat:
        chat.add({"tool_calls": [{"name": "build_part_code", "arguments": {"body": "part", "code": code}}]},
                 {"content": f"done, the key reversed is {REV}"})
        result = run_tools(tmp_project, ModelClient(chat.base_url, "m", KEY, timeout=5, max_retries=0),
                           "Build a part.", on_event=events.append)
        sent = json.dumps(chat.requests[-1]["body"]["messages"][-1])
    b64 = base64.b64encode(KEY.encode()).decode()
    assert "got ***" in result.refused[0] and b64 not in result.refused[0]
    assert "got ***" in sent and b64 not in sent
    assert result.final_text == "done, the key reversed is ***"
    assert all(b64 not in e and REV not in e for e in events)


def test_a_cli_error_naming_the_key_is_scrubbed(tmp_project, tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    r = subprocess.run([sys.executable, "-m", "studio.cli", "agent", "run-code", str(tmp_project.path),
                        str(tmp_path / f"{REV}.py")], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "***.py: cannot read the code" in r.stderr and REV not in r.stderr
