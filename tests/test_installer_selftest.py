"""`studio selftest`: the installation check the smoke test runs from the frozen app."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from studio.cli import main
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.store.reports import load_reports
from studio.timeline.storyboard import State, list_states, put_state

sys.path.insert(0, str(Path(__file__).parent))
from jobs_scenes import film_project  # noqa: E402


@pytest.fixture
def hinge(tmp_path):
    """A project on disk with a hinge scene and two storyboard states, closed."""
    p = Project.create(tmp_path / "hinge", name="hinge")
    film_project(p, n_frames=4)
    p.close()
    return tmp_path / "hinge"


def test_verifies_a_copy_and_leaves_the_project_as_it_was(hinge, tmp_path, capsys):
    before = (hinge / "studio.db").read_bytes()
    code = main(["selftest", str(hinge), "--no-render", "--work", str(tmp_path / "work")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ok   open    hinge: 3 bodies, 1 joints, 1 cameras, 2 states; checking 'a'" in out
    assert "AnimationWellFormed pass" in out and "NoPenetration pass" in out and "JointLimits pass" in out
    assert out.rstrip().endswith("selftest: every step worked")
    assert (hinge / "studio.db").read_bytes() == before
    with Project.open(tmp_path / "work" / "hinge") as copy:
        assert {r.name: r.verdict for r in load_reports(copy, "state:a")[0]}["NoPenetration"] == "pass"


def test_a_failing_state_fails_the_selftest_and_names_the_check(hinge, capsys):
    with Project.open(hinge) as p:
        from studio.scene.io import load_scene
        scene = load_scene(p)
        sunk = Pose({"base": [0, 0, 0.1, 1, 0, 0, 0], "floor": [0, 0, -0.01, 1, 0, 0, 0]}, {"elbow": 0.0})
        put_state(p, scene, State("sunk", p.frame_start + 1, sunk, shot="main"))
    code = main(["selftest", str(hinge), "--state", "sunk", "--no-render"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL verify  state 'sunk': required checks fail: NoPenetration" in out
    assert "selftest: FAILED" in out


def test_refuses_what_is_not_a_project_or_has_no_states(tmp_path, capsys):
    assert main(["selftest", str(tmp_path)]) == 2
    assert "not a project folder" in capsys.readouterr().err
    Project.create(tmp_path / "empty", name="empty").close()
    assert main(["selftest", str(tmp_path / "empty"), "--no-render"]) == 1
    assert "the storyboard has no states to verify" in capsys.readouterr().out
    assert main(["selftest", str(tmp_path / "empty"), "--resolution", "wide"]) == 2


def test_no_blender_is_an_environment_failure_that_says_what_to_set(hinge, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KEYPOSE_BLENDER_PYTHON", str(tmp_path / "nowhere" / "python"))
    code = main(["selftest", str(hinge)])
    out = capsys.readouterr().out
    assert code == 3
    assert f"FAIL worker  no Blender worker: no Blender Python at {tmp_path / 'nowhere' / 'python'}" in out


@pytest.mark.blender
def test_renders_one_still_through_the_worker(hinge, tmp_path, capsys):
    code = main(["selftest", str(hinge), "--resolution", "64x36", "--work", str(tmp_path / "work")])
    out = capsys.readouterr().out
    assert code == 0, out
    still = tmp_path / "work" / "hinge" / "renders" / "stills" / "a_main.png"
    from PIL import Image
    with Image.open(still) as img:
        assert img.size == (64, 36)
        assert len(img.convert("RGB").getcolors(1 << 16)) > 5     # the hinge, not an empty frame
    assert f"ok   render  {still} (64x36," in out
    with Project.open(tmp_path / "work" / "hinge") as copy:
        assert [s.still for s in list_states(copy) if s.id == "a"][0]   # recorded on the state
