"""From an empty project to an exported film through the agent: the real
OpenAI SDK talks to the loopback chat server, whose replies are the calls of
a calls file; the agent's tool loop runs them through the tool layer (reviews
as the agent), the real verifiers pass the film, the real Blender worker
exports a .blend and an MP4, and the same file through `studio agent replay`
gives the same content hashes."""
from __future__ import annotations

import json

import av
from calls_scenes import fingerprint, write
from chat_server import ChatServer

from studio.tools.calls import read_calls
from studio.agent.client import ModelClient
from studio.agent.loop import run_tools
from studio.cli import main
from studio.store.project import Project
from studio.timeline.reviews import list_reviews


def replies_of(calls, per_reply: int = 5) -> list[dict]:
    """The model's replies: the file's calls, a few per reply, then a closing word."""
    out = [{"tool_calls": [{"name": c.tool, "arguments": c.arguments} for c in calls[i:i + per_reply]]}
           for i in range(0, len(calls), per_reply)]
    return out + [{"content": "The film is baked; both segments are between approved states."}]


def test_the_agent_makes_a_film_from_an_empty_project_and_replay_makes_the_same(tmp_path, capsys):
    calls = read_calls(write(tmp_path / "film.jsonl"))
    agent_path, replay_path = tmp_path / "agent", tmp_path / "replayed"
    assert main(["new", str(agent_path)]) == 0
    with ChatServer(replies_of(calls)) as chat, Project.open(agent_path) as project:
        client = ModelClient(chat.base_url, "scripted", None)
        result = run_tools(project, client, "Make the film in the plan you are given.", max_turns=8)
        assert result.refused == [] and result.final_text.startswith("The film is baked")
        assert len(result.steps) == len(calls)                  # one checkpointed step per call
        sent = chat.requests[0]["body"]
        tools = {t["function"]["name"]: t["function"]["parameters"] for t in sent["tools"]}
        assert {"interpolate", "hold"} <= set(tools["author_segment"]["properties"]["tool"]["enum"])
        answers = [json.loads(m["content"]) for m in chat.requests[-1]["body"]["messages"] if m["role"] == "tool"]
        assert answers[-1]["ok"] and answers[-1]["tool"] == "hold"
        made = fingerprint(project)
        assert {r.reviewer for r in list_reviews(project)} == {"agent"}
    assert made["film"] and set(made["tracks"]) == {"start..slid", "slid..rest"}

    assert main(["verify", str(agent_path)]) == 0                # the real verifiers store the film's reports
    out = capsys.readouterr().out
    for check in ("AnimationWellFormed", "JointLimits", "NoPenetration", "EventsSatisfied"):
        assert any(line.startswith(check) and ("pass" in line or "not_applicable" in line)
                   for line in out.splitlines()), out
    blend, video = tmp_path / "deliver" / "film.blend", tmp_path / "deliver" / "film.mp4"
    assert main(["export", str(agent_path), "--blend", str(blend), "--video", str(video), "--quiet"]) == 0
    assert blend.stat().st_size > 10_000
    with av.open(str(video)) as c:
        s = c.streams.video[0]
        frames = sum(1 for _ in c.decode(s))
        assert (s.codec_context.name, s.width, s.height, frames) == ("h264", 160, 96, 25)

    assert main(["new", str(replay_path)]) == 0
    assert main(["agent", "replay", str(replay_path), str(tmp_path / "film.jsonl"), "--quiet"]) == 0
    with Project.open(replay_path) as project:
        assert fingerprint(project) == made
        assert {r.reviewer for r in list_reviews(project)} == {"replay"}
