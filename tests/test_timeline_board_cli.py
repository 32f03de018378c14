"""`studio board status|approve|reject|plan|progress` from the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from timeline_scenes import arm_plan, author_arm, check_state, crate_into_base

from studio.cli import main
from studio.timeline.gate import state_status
from studio.timeline.reviews import list_reviews

ROOT = Path(__file__).resolve().parents[1]


def test_status_lists_every_state_with_reason(tmp_project, capsys):
    scene = author_arm(tmp_project, approve=False)
    main(["board", "approve", str(tmp_project.path), "rest", "--note", "good", "--reviewer", "ana"])
    crate_into_base(tmp_project, "back", scene)
    capsys.readouterr()
    assert main(["board", "status", str(tmp_project.path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["rest", "frame", "1001", "approved"]
    assert lines[1].split()[:4] == ["bent", "frame", "1024", "unreviewed"]
    assert lines[2].split()[:4] == ["back", "frame", "1048", "unreviewed"]
    assert lines[3].strip() == "failing: NoPenetration: fail"
    assert lines[4:] == ["segment rest..bent               not baked", "segment bent..back               not baked"]


def test_approve_records_review_with_reviewer_and_note(tmp_project, capsys):
    author_arm(tmp_project, approve=False)
    code = main(["board", "approve", str(tmp_project.path), "bent", "--note", "elbow reads well", "--reviewer", "ana"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("approved bent") and "visible: base, floor, fore, upper" in out
    (r,) = list_reviews(tmp_project, "bent")
    assert (r.verdict, r.note, r.reviewer) == ("approve", "elbow reads well", "ana")
    assert state_status(tmp_project, "bent").status == "approved"


def test_approve_refuses_failing_state(tmp_project, capsys):
    scene = author_arm(tmp_project, approve=False)
    crate_into_base(tmp_project, "bent", scene)
    code = main(["board", "approve", str(tmp_project.path), "bent", "--note", "ok"])
    assert code == 1
    assert "not approved: state bent failing: NoPenetration: fail" in capsys.readouterr().err
    assert list_reviews(tmp_project, "bent") == []


def test_reject_and_unknown_state(tmp_project, capsys):
    author_arm(tmp_project, approve=False)
    assert main(["board", "reject", str(tmp_project.path), "back", "--note", "arm too low", "--reviewer", "ben"]) == 0
    assert state_status(tmp_project, "back").reasons[0].startswith("rejected by ben")
    assert main(["board", "approve", str(tmp_project.path), "nowhere"]) == 2
    assert "no state 'nowhere'" in capsys.readouterr().err


def test_approve_runs_missing_checks_first(tmp_project, capsys):
    pytest.importorskip("studio.checks.run")
    scene = author_arm(tmp_project, approve=False)
    tmp_project.db.execute("DELETE FROM reports WHERE target = 'state:bent'")
    code = main(["board", "approve", str(tmp_project.path), "bent", "--note", "ok"])
    out = capsys.readouterr().out
    assert "running the checks of bent" in out
    from studio.store.reports import load_reports
    from studio.timeline.storyboard import content_hash, get_state
    reports, checked = load_reports(tmp_project, "state:bent")
    assert checked == content_hash(scene, get_state(tmp_project, "bent").pose, 1024)
    assert code == (0 if state_status(tmp_project, "bent").ok else 1)


def test_plan_and_progress_commands_in_a_real_process(tmp_project, tmp_path):
    author_arm(tmp_project)
    bad = arm_plan()
    bad["states"][1]["frame"] = 2000
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    studio = [sys.executable, "-m", "studio"]
    r = subprocess.run([*studio, "board", "plan", str(tmp_project.path), str(tmp_path / "bad.json")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "plan.states[1].frame: 2000 is outside shot 'close'" in r.stderr
    r = subprocess.run([*studio, "board", "progress", str(tmp_project.path)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0
    value = float(r.stdout.split()[1])
    assert 0.5 <= value < 1 and "segment rest..bent: not baked" in r.stdout
