"""`studio agent replay` and `studio agent log --calls`: a film's calls file
replays into an identical project, a project's history writes out as a calls
file that replays to the same hashes, and bad input names its line and field
and leaves the project holding exactly the calls before it."""
from __future__ import annotations

import json

import pytest
from agent_scripts import db_dump
from calls_scenes import calls, fingerprint, write

from studio.tools.calls import history
from studio.tools.box import ToolBox
from studio.cli import main
from studio.store.project import Project
from studio.timeline.commands import CommandStack
from studio.timeline.reviews import list_reviews


def new(path):
    assert main(["new", str(path)]) == 0
    return path


def prints(path) -> dict:
    with Project.open(path) as p:
        return fingerprint(p)


def test_replay_then_log_calls_gives_an_identical_project(tmp_path, capsys):
    first = new(tmp_path / "first")
    assert main(["agent", "replay", str(first), str(write(tmp_path / "film.jsonl"))]) == 0
    out = capsys.readouterr().out
    assert "line 18: author_segment: bake start..slid (interpolate)" in out and "replayed 19 call(s)" in out
    made = prints(first)
    assert made["film"] and set(made["tracks"]) == {"start..slid", "slid..rest"}
    assert made["tracks"]["slid..rest"][0] == "hold"
    with Project.open(first) as p:
        assert {r.reviewer for r in list_reviews(p)} == {"replay"}        # never recorded as a person
        assert {r["actor"] for r in p.db.query("SELECT actor FROM audit WHERE action = 'tool call'")} == {"replay"}
    assert main(["agent", "log", str(first), "--calls", str(tmp_path / "history.jsonl")]) == 0
    logged = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert logged == calls()
    second = new(tmp_path / "second")
    assert main(["agent", "replay", str(second), str(tmp_path / "history.jsonl"), "--quiet"]) == 0
    assert prints(second) == made


def test_a_persons_session_with_undo_logs_to_calls_that_replay_to_the_same_hashes(tmp_path, capsys):
    path = new(tmp_path / "session")
    items = calls()
    with Project.open(path) as p:
        stack = CommandStack()
        box = ToolBox(p, stack, actor="person")
        for c in items[:8]:
            box.call(c["tool"], c["arguments"])
        box.call("set_state", {"state": "slid", "roots": {"crate_b": [0.5, 0.5, 0.2, 1, 0, 0, 0]}})
        stack.undo()                              # the person changes their mind
        box.call("allow_overlap", {"a": "crate_a", "b": "crate_b", "reason": "touching lids"})
        stack.undo()
        stack.redo()
        for c in items[8:]:
            box.call(c["tool"], c["arguments"])
        made = fingerprint(p)
    capsys.readouterr()
    assert main(["agent", "log", str(path), "--calls"]) == 0
    text = capsys.readouterr().out
    logged = [json.loads(line) for line in text.splitlines()]
    assert [c["tool"] for c in logged] == [c["tool"] for c in items[:8]] + ["allow_overlap"] + \
        [c["tool"] for c in items[8:]]
    (tmp_path / "session.jsonl").write_text(text)
    again = new(tmp_path / "again")
    assert main(["agent", "replay", str(again), str(tmp_path / "session.jsonl"), "--quiet"]) == 0
    assert prints(again) == made


@pytest.mark.parametrize("line,expect", [
    ('{"tool": "create_body", "arguments": {"name": "crate_c", "size": [0.1, 0.1', "line 3: not valid JSON"),
    ('{"tool": "teleport_body", "arguments": {"name": "crate_a"}}', "line 3: unknown tool 'teleport_body'"),
    ('{"tool": "create_body", "arguments": {"name": "crate_c", "size": [0.1, -1, 0.1]}}',
     "line 3: create_body.size[1]: -1 is less than or equal to the minimum of 0"),
    ('["create_body", {"name": "crate_c"}]', "line 3: expected an object with exactly 'tool' and 'arguments'"),
    ('{"tool": "create_body", "arguments": {"name": "crate_c"}, "who": "person"}',
     "line 3: expected an object with exactly 'tool' and 'arguments', got ['arguments', 'tool', 'who']"),
])
def test_a_broken_line_an_unknown_tool_or_a_bad_argument_is_bad_input_and_nothing_runs(tmp_path, capsys, line, expect):
    path = new(tmp_path / "p")
    good = [json.dumps(c) for c in calls()[:2]]
    f = tmp_path / "bad.jsonl"
    f.write_text("\n".join([*good, line, *[json.dumps(c) for c in calls()[2:5]]]) + "\n")
    with Project.open(path) as p:
        before = db_dump(p)
    assert main(["agent", "replay", str(path), str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f} {expect}" in err and err.count("\n") == 1 and "Traceback" not in err
    with Project.open(path) as p:
        assert db_dump(p) == before


def test_a_call_the_gate_refuses_stops_the_replay_and_keeps_every_call_before_it(tmp_path, capsys):
    items = calls()
    early = items[:12] + [items[17]] + items[12:]        # bake start..slid before anyone reviewed it
    path = new(tmp_path / "p")
    assert main(["agent", "replay", str(path), str(write(tmp_path / "early.jsonl", early))]) == 1
    err = capsys.readouterr().err
    assert "early.jsonl line 13: refused: author_segment: segment start..slid: motion is blocked" in err
    assert "start: unreviewed" in err and "the project holds the 12 call(s) before line 13" in err
    prefix = new(tmp_path / "prefix")
    assert main(["agent", "replay", str(prefix), str(write(tmp_path / "prefix.jsonl", items[:12])), "--quiet"]) == 0
    assert prints(path) == prints(prefix)
    with Project.open(path) as p:
        assert list_reviews(p) == [] and [c.tool for c in history(p)] == [c["tool"] for c in items[:12]]


def test_a_refusal_inside_the_project_names_the_field(tmp_path, capsys):
    items = calls()[:9] + [{"tool": "set_joint", "arguments": {"state": "slid", "joint": "elbow", "value": 0.3}}]
    path = new(tmp_path / "p")
    assert main(["agent", "replay", str(path), str(write(tmp_path / "j.jsonl", items))]) == 1
    err = capsys.readouterr().err
    assert "j.jsonl line 10: refused: set_joint: " in err and "elbow" in err
    assert "Traceback" not in err


def test_replay_of_a_missing_file_or_project_is_bad_input(tmp_path, capsys):
    path = new(tmp_path / "p")
    assert main(["agent", "replay", str(path), str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl: cannot read the calls file" in capsys.readouterr().err
    assert main(["agent", "replay", str(tmp_path / "nowhere"), str(write(tmp_path / "c.jsonl"))]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_log_calls_warns_of_edits_made_outside_the_tool_layer(tmp_path, capsys):
    from calls_scenes import plan
    from studio.timeline.plan import save_plan
    path = new(tmp_path / "p")
    assert main(["agent", "replay", str(path), str(write(tmp_path / "c.jsonl", calls()[:5])), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["agent", "log", str(path), "--calls", str(tmp_path / "h.jsonl")]) == 0
    assert "outside the tool layer" not in capsys.readouterr().err       # all of it was tool calls
    with Project.open(path) as p:
        save_plan(p, plan(), actor="script")                                # straight to the store
    assert main(["agent", "log", str(path), "--calls", str(tmp_path / "h.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "1 edit(s)" in err and "outside the tool layer" in err and "'set plan' on plan by script" in err
    assert len((tmp_path / "h.jsonl").read_text().splitlines()) == 5


def test_a_film_baked_by_studio_bake_logs_to_calls_that_rebuild_it(tmp_path, capsys):
    """`studio bake` (the job the window's Bake runs too) records each segment as an author_segment
    call, so the project's calls replay into an empty project to the same film, with no warning."""
    path = new(tmp_path / "baked")
    unbaked = [c for c in calls() if c["tool"] != "author_segment"]
    assert main(["agent", "replay", str(path), str(write(tmp_path / "c.jsonl", unbaked)), "--quiet"]) == 0
    assert not prints(path)["tracks"]
    assert main(["bake", str(path), "--quiet"]) == 0
    made = prints(path)
    assert set(made["tracks"]) == {"start..slid", "slid..rest"} and made["tracks"]["slid..rest"][0] == "hold"
    capsys.readouterr()
    assert main(["agent", "log", str(path), "--calls", str(tmp_path / "history.jsonl")]) == 0
    assert "outside the tool layer" not in capsys.readouterr().err
    logged = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    bakes = [c for c in logged if c["tool"] == "author_segment"]
    assert [c["arguments"]["segment"] for c in bakes] == ["start..slid", "slid..rest"]
    assert bakes[1]["arguments"]["tool"] == "hold"                 # the tool the plan named, said in the call
    with Project.open(path) as p:
        actors = {r["actor"] for r in p.db.query("SELECT actor FROM audit WHERE action = 'tool call' "
                                                 "AND target = 'author_segment'")}
    assert len(actors) == 1 and actors.pop().startswith("job:")
    again = new(tmp_path / "again")
    assert main(["agent", "replay", str(again), str(tmp_path / "history.jsonl"), "--quiet"]) == 0
    assert prints(again) == made
