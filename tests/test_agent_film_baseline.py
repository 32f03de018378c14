"""Single-pass baselines (the studio's own `examples/baseline.py` on a film
built here, and the marble run's committed one, copied) taken through
`studio agent repair --film --until-pass` to a film whose required checks
pass, the rounds and proposals reported."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from motion_films import doorway_source

from studio.checks.report import failing_required
from studio.checks.run import verify_film
from studio.cli import main
from studio.examples.baseline import single_pass
from studio.store.project import Project
from studio.timeline.film import list_segments
from studio.timeline.reviews import list_reviews, reviewer_kinds

ROOT = Path(__file__).resolve().parents[1]


def test_a_single_pass_baseline_through_a_wall_is_repaired_round_by_round_until_it_passes(tmp_path, capsys):
    doorway_source(tmp_path / "source").close()
    base = single_pass(tmp_path / "source", tmp_path / "baseline")
    with Project.open(base) as project:
        failing = failing_required(verify_film(project))
        assert failing == ["NoPenetration: fail"] and not list_reviews(project)
    code = main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", "6"])
    out = capsys.readouterr().out
    assert code == 0, out
    rounds = re.findall(r"^round (\d+): required failing: (.*?); (\d+) failing run\(s\), (\d+) verified proposal",
                        out, re.M)
    assert rounds and rounds[0][1] == "NoPenetration: fail" and all(int(r[3]) >= 1 for r in rounds)
    summary = re.search(r"^(\d+) round\(s\), (\d+) proposal\(s\), (\d+) applied; required checks pass", out, re.M)
    assert summary and int(summary.group(1)) == len(rounds) and int(summary.group(3)) >= 1
    with Project.open(base) as project:
        assert not failing_required(verify_film(project))
        assert len(list_segments(project)) >= 2                     # the single segment was split by key states
        reviews = list_reviews(project)
        assert reviews and {r.reviewer for r in reviews} == {"batch"}
        assert reviewer_kinds(project) == {"batch": "batch"}


def test_the_marble_runs_single_pass_baseline_is_repaired_until_it_passes(tmp_path, capsys):
    """The committed baseline, copied: the marble flown straight through three ramps."""
    base = tmp_path / "baseline"
    shutil.copytree(ROOT / "projects" / "marble_run-single-pass", base)
    with Project.open(base) as project:
        assert failing_required(verify_film(project)) == ["NoPenetration: fail"] and not list_reviews(project)
    assert main(["agent", "repair", str(base), "--film", "--offline", "--until-pass", "--approve-verified",
                 "--max-rounds", "6"]) == 0
    out = capsys.readouterr().out
    summary = re.search(r"^(\d+) round\(s\), (\d+) proposal\(s\), (\d+) applied; required checks pass", out, re.M)
    assert summary and int(summary.group(3)) >= 1, out
    with Project.open(base) as project:
        assert not failing_required(verify_film(project))
        assert {r.reviewer for r in list_reviews(project)} == {"batch"}
