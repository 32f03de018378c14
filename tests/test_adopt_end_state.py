"""A simulation that ends away from its approved second state is refused with its own end
offered; the offer is kept with the bake job, adopted by a tool call (from `studio bake
--adopt-end`, `studio board adopt` or a calls file), reviewed like any other state, baked, and
replayed to the same hashes. `max_difference` means the same in the tool and in the bake."""
from __future__ import annotations

import json
import math

import pytest
from calls_scenes import fingerprint

from studio.cli import main
from studio.store.project import Project
from studio.timeline import film
from studio.timeline.storyboard import get_state

TILT = [math.cos(0.35), 0.0, math.sin(0.35), 0.0]       # about y: the crate falls onto its side


def calls(guess: list[float], max_difference: float | None = None) -> list[dict]:
    """A crate dropped tilted onto the floor; the second key state is where someone guessed it lands."""
    params = {"bodies": ["crate"]}
    if max_difference is not None:
        params["max_difference"] = max_difference
    plan = {"prompt": "a crate falls onto the floor", "scene_brief": "a floor and a tall crate",
            "motion_brief": "the crate drops, hits the floor on an edge and topples",
            "shots": [{"id": "topple", "camera": "cam_side", "start": 1001, "end": 1049}],
            "states": [{"id": "dropped", "frame": 1001, "shot": "topple", "description": "the crate in the air"},
                       {"id": "lying", "frame": 1049, "shot": "topple", "description": "the crate at rest"}],
            "objects": [{"name": "crate", "description": "the falling crate"}], "events": [],
            "motion": [{"segment": "dropped..lying", "tool": "simulate", "params": params}]}
    return [
        {"tool": "create_body", "arguments": {"name": "floor", "kind": "ground", "size": [4, 4, 0.1],
                                              "offset": [0, 0, -0.05], "rest": [0, 0, 0, 1, 0, 0, 0]}},
        {"tool": "create_body", "arguments": {"name": "crate", "size": [0.2, 0.2, 0.5], "mass": 2.0,
                                              "rest": [0, 0, 0.6, *TILT]}},
        {"tool": "add_camera", "arguments": {"name": "cam_side", "position": [2.5, -2.5, 1.2],
                                             "target": [0, 0, 0.2], "resolution": [160, 96]}},
        {"tool": "set_plan", "arguments": {"plan": plan}},
        {"tool": "set_state", "arguments": {"state": "dropped", "frame": 1001, "shot": "topple",
                                            "description": "the crate in the air"}},
        {"tool": "set_state", "arguments": {"state": "lying", "frame": 1049, "shot": "topple",
                                            "description": "the crate at rest", "roots": {"crate": guess}}},
        {"tool": "run_verifiers", "arguments": {"state": "dropped"}},
        {"tool": "run_verifiers", "arguments": {"state": "lying"}},
        {"tool": "review_state", "arguments": {"state": "dropped", "verdict": "approve", "note": "in the air"}},
        {"tool": "review_state", "arguments": {"state": "lying", "verdict": "approve", "note": "where it lands"}},
    ]


GUESS = [0.8, 0.4, 0.25, 1, 0, 0, 0]        # upright, far from where it really lands


def replayed(tmp_path, name: str, items: list[dict]):
    path = tmp_path / name
    assert main(["new", str(path)]) == 0
    f = tmp_path / f"{name}.jsonl"
    f.write_text("".join(json.dumps(c) + "\n" for c in items))
    assert main(["agent", "replay", str(path), str(f), "--quiet"]) == 0
    return path


def test_a_run_ending_away_from_its_state_is_offered_adopted_reviewed_baked_and_replayed(tmp_path, capsys):
    path = replayed(tmp_path, "crate", calls(GUESS))
    capsys.readouterr()
    assert main(["bake", str(path)]) == 1
    out = capsys.readouterr()
    said = out.out + out.err
    assert "dropped..lying: the run ends away from lying, furthest at crate" in said
    assert "adopt the run's end state as 'lying'" in said and "Traceback" not in said
    with Project.open(path) as p:
        offered = json.loads((p.path / "jobs" / "1" / "out" / "offered.json").read_text())
        assert film.list_segments(p) == []                               # nothing baked
        assert get_state(p, "lying").pose.roots["crate"] == GUESS          # nothing changed
    assert offered["state"] == "lying" and offered["worst"] == "crate"
    off = offered["differences"]["crate"]
    assert off["metres"] > 0.5                                           # the guess was 0.8 m to the side
    landed = offered["pose"]["roots"]["crate"]
    assert abs(landed[0]) < 0.5 and 0.05 < landed[2] < 0.3               # on the floor, near where it fell

    assert main(["bake", str(path), "--adopt-end"]) == 1                # adopted, and now needs a review
    said = capsys.readouterr().out
    assert "adopted the end of dropped..lying as lying (a tool call); lying needs a review" in said
    with Project.open(path) as p:
        assert get_state(p, "lying").pose.roots["crate"] == pytest.approx(landed, abs=1e-9)
        assert film.list_segments(p) == []
    assert main(["board", "status", str(path)]) == 0
    assert "lying                frame 1049   stale" in capsys.readouterr().out
    assert main(["bake", str(path)]) == 1                               # the gate: lying is not reviewed
    assert "lying: stale: the state's pose, frame or cameras changed since review" in capsys.readouterr().out

    assert main(["board", "approve", str(path), "lying", "--note", "lands on its side"]) == 0
    assert main(["bake", str(path)]) == 0
    with Project.open(path) as p:
        tracks = film.load_segment(p, "dropped..lying")
        last = tracks.roots["crate"][-1].tolist()
        made = fingerprint(p)
    assert last == pytest.approx(landed, abs=1e-12)                     # the film ends where the run ended
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()

    assert main(["agent", "log", str(path), "--calls", str(tmp_path / "history.jsonl")]) == 0
    assert "outside the tool layer" not in capsys.readouterr().err
    logged = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert {"tool": "adopt_end_state", "arguments": {"segment": "dropped..lying"}} in logged
    again = tmp_path / "again"
    assert main(["new", str(again)]) == 0
    assert main(["agent", "replay", str(again), str(tmp_path / "history.jsonl"), "--quiet"]) == 0
    with Project.open(again) as p:
        assert fingerprint(p) == made


def test_board_adopt_is_the_same_tool_call_and_refuses_a_segment_that_offers_nothing(tmp_path, capsys):
    path = replayed(tmp_path, "crate", calls(GUESS))
    with Project.open(path) as p:
        before = get_state(p, "lying").pose.roots["crate"]
    assert main(["board", "adopt", str(path), "dropped..nowhere"]) == 2
    assert "dropped..nowhere is no segment of the plan" in capsys.readouterr().err
    plan_calls = calls(GUESS)
    plan_calls[3]["arguments"]["plan"]["motion"] = [{"segment": "dropped..lying", "tool": "interpolate",
                                                     "params": {}}]
    eased = replayed(tmp_path, "eased", plan_calls)
    capsys.readouterr()
    assert main(["board", "adopt", str(eased), "dropped..lying"]) == 2
    err = capsys.readouterr().err
    assert "dropped..lying is authored by interpolate, which offers no end state of its own" in err
    assert len(err.strip().splitlines()) == 1
    with Project.open(eased) as p:
        assert get_state(p, "lying").pose.roots["crate"] == GUESS
    assert main(["board", "adopt", str(path), "dropped..lying"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("lying now holds the end of the run of dropped..lying (crate was ")
    with Project.open(path) as p:
        assert get_state(p, "lying").pose.roots["crate"] != before


def test_max_difference_lets_the_tool_and_the_bake_fade_the_same_residual(tmp_path, capsys):
    """With max_difference above how far the run ends from the guess, the tool passes and the bake
    fades that residual out instead of refusing on a limit of its own."""
    path = replayed(tmp_path, "crate", calls(GUESS, max_difference=10.0))
    capsys.readouterr()
    assert main(["bake", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the run ends" in out and "furthest at 'crate'" in out
    with Project.open(path) as p:
        assert film.load_segment(p, "dropped..lying").roots["crate"][-1].tolist() == GUESS
    tight = replayed(tmp_path, "tight", calls(GUESS, max_difference=0.05))
    assert main(["bake", str(tight)]) == 1
    assert "more than max_difference 0.05" in capsys.readouterr().out


def test_a_rejected_guess_is_replaced_by_the_run_s_end_through_the_gate_of_the_first_state(tmp_path, capsys):
    """A person rejected where someone guessed the crate lands: the bake cannot run (the gate), but
    adopting needs only the first state, so `--adopt-end` replaces the guess with the run's end."""
    items = calls(GUESS)
    items[-1] = {"tool": "review_state", "arguments": {"state": "lying", "verdict": "reject",
                                                       "note": "it would never land upright there"}}
    path = replayed(tmp_path, "crate", items)
    capsys.readouterr()
    assert main(["bake", str(path)]) == 1
    assert "lying: rejected by a replay run" in capsys.readouterr().out
    assert main(["bake", str(path), "--adopt-end"]) == 1
    assert "adopted the end of dropped..lying as lying" in capsys.readouterr().out
    assert main(["board", "approve", str(path), "lying", "--note", "on its side"]) == 0
    assert main(["bake", str(path)]) == 0
    unbaked = calls(GUESS)[:2]
    bare = replayed(tmp_path, "bare", unbaked)
    capsys.readouterr()
    assert main(["bake", str(bare), "--adopt-end"]) == 2          # no plan: nothing to bake or adopt
    assert "no plan" in capsys.readouterr().err
