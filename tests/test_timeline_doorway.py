"""The doorway film carried through from its calls file: plan, ten states approved through the
CLI, baked motion that hits every state exactly and passes the required checks."""
from __future__ import annotations

import numpy as np
import pytest

from studio.cli import main
from studio.scene.io import load_scene
from studio.store.reports import failing_required, load_reports
from studio.timeline import film
from studio.timeline.gate import GateError, board_status
from studio.timeline.plan import validate_plan
from studio.timeline.commands import CommandStack
from studio.timeline.progress import progress
from studio.timeline.segment_commands import AuthorSegment
from studio.timeline.storyboard import list_states

from example_films import finish, storyboard

FINGERTIPS = 0.044        # the gripper frame sits this far behind the edge face: fingertips 4 mm short of it

run = pytest.importorskip("studio.checks.run")


@pytest.fixture(scope="module")
def doorway_project(tmp_path_factory):
    project = storyboard("doorway", tmp_path_factory.mktemp("doorway") / "film")
    yield project
    project.close()


def test_plan_and_states(doorway_project):
    scene = load_scene(doorway_project)
    validate_plan(doorway_project.get_doc("plan"), scene)
    states = list_states(doorway_project)
    assert [s.id for s in states] == ["start", "reach", "lift", "sidestep", "advance", "align", "tilt",
                                      "through", "set_down", "release"]
    reach = {s.id: s for s in states}["reach"].pose
    from studio.timeline.motion.ik import frame_pose
    for side, handle in (("l", "handle_left"), ("r", "handle_right")):
        grip = frame_pose(scene, reach, f"gripper_{side}")[:3, 3]
        edge = frame_pose(scene, reach, handle)[:3, 3] - [0.03, 0, 0]        # the near edge face
        assert np.linalg.norm(grip - (edge - [FINGERTIPS, 0, 0])) < 1e-3
    for s in states:                                    # planted soles on the floor
        for side in "lr":
            assert abs(frame_pose(scene, s.pose, f"sole_{side}")[2, 3]) < 1e-3


def test_motion_is_gated_until_states_are_approved(doorway_project):
    with pytest.raises(GateError) as e:
        CommandStack().run(AuthorSegment(doorway_project, "start..reach", "lead"))
    assert {sid for sid, _ in e.value.reasons} == {"start", "reach"}
    assert film.list_segments(doorway_project) == []


def test_approve_through_cli_then_bake_and_verify(doorway_project, capsys):
    path = str(doorway_project.path)
    for s in list_states(doorway_project):
        assert main(["board", "approve", path, s.id, "--note", "reads well", "--reviewer", "lead"]) == 0, \
            capsys.readouterr().err
        reports, _ = load_reports(doorway_project, f"state:{s.id}")
        assert failing_required(reports) == [], s.id
    assert all(st.status == "approved" for st in board_status(doorway_project))
    finish("doorway", doorway_project, ("motion",))
    assert len(film.list_segments(doorway_project)) == 9
    tracks = film.load_film_tracks(doorway_project)
    assert (tracks.frame_start, tracks.frame_end) == (1001, 1481)
    scene = load_scene(doorway_project)
    for s in list_states(doorway_project):              # the film passes through every state exactly
        got, want = tracks.pose_at(s.frame), s.pose.completed(scene)
        for k, v in want.roots.items():
            assert got.roots[k] == list(map(float, v)), (s.id, k)
        for k, v in want.joints.items():
            assert got.joints[k] == v, (s.id, k)
    reports = run.verify_film(doorway_project)
    assert failing_required(reports) == []
    events = next(r for r in reports if r.name == "EventsSatisfied")
    assert events.metrics["held"] == events.metrics["events"] == 8
    value, missing = progress(doorway_project)
    assert 0.75 < value < 1 and missing == ["film: not rendered since the last bake"]
