"""The dog-and-newspaper example end to end, replayed from its calls file: an articulated dog, key states through their checks,
the gate, the motion tools its plan names (grasp, a walk carrying the paper on the mouth, place,
release), and the film's required checks."""
from __future__ import annotations

import numpy as np
import pytest

from studio.checks.report import required_checks_pass
from studio.checks.run import verify_film
from studio.examples.pipeline import example_plan
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import frame_world, tracks_world
from studio.timeline.commands import CommandStack
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.gate import GateError
from studio.timeline.motion.ik import frame_pose
from studio.timeline.plan import plan_segments, validate_plan
from studio.timeline.reviews import record_review
from studio.timeline.segment_commands import AuthorSegment
from studio.timeline.storyboard import list_states

from example_films import example_scene, finish, state_reports, storyboard

LEGS = ("fl", "fr", "hl", "hr")
GRASP, CARRY, PUT_DOWN = 1030, 1090, 1160
PAPER, MAT = (0.16, 0.28, 0.025), (0.5, 0.7, 0.012)          # x, y, z extents
PAPER_X, MAT_X = -0.46, 0.8
PAPER_REST = [PAPER_X, 0.0, PAPER[2] / 2, 1.0, 0.0, 0.0, 0.0]
ON_MAT = ([MAT_X - MAT[0] / 2, -MAT[1] / 2, MAT[2]], [MAT_X + MAT[0] / 2, MAT[1] / 2, 0.06])


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    """The project after plan, states, state checks, approvals, motion and film checks."""
    project = storyboard("dog_paper", tmp_path_factory.mktemp("dog") / "dog_paper")
    reports_before = state_reports(project)
    for s in list_states(project)[:3]:                   # two segments approved, the rest not yet
        record_review(project, s.id, "approve", note="good", reviewer="ana")
    stack = CommandStack()
    for seg in plan_segments(project.get_doc("plan"))[:2]:
        stack.run(AuthorSegment(project, seg, "ana"))
    with pytest.raises(GateError) as refused:
        stack.run(AuthorSegment(project, "carry..at_mat", "ana"))
    finish("dog_paper", project)                          # the file's own reviews, then every segment
    baked = [s["segment"] for s in list_segments(project)]
    reports = verify_film(project)
    scene = load_scene(project)
    tracks = load_film_tracks(project)
    yield {"project": project, "scene": scene, "tracks": tracks, "world": tracks_world(scene, tracks),
           "state_reports": reports_before, "refused": refused.value, "baked": baked,
           "reports": {r.name: r for r in reports}, "report_list": reports}
    project.close()


def test_scene_is_an_articulated_dog_with_limits(tmp_path):
    scene = example_scene("dog_paper", tmp_path / "dog")
    assert Scene.from_json(scene.to_json()).to_dict() == scene.to_dict()
    assert scene.roots == ["floor", "mat", "newspaper", "torso"]
    for leg in LEGS:
        for kind in ("hip", "knee", "ankle"):
            j = scene.joint(f"{kind}_{leg}")
            assert j.type == "revolute" and j.lower < j.upper
        assert scene.frame(f"paw_{leg}").body == f"paw_{leg}"
    assert scene.joint("knee_fl").upper == 0.0 and scene.joint("knee_hl").lower == 0.0
    assert scene.frame("mouth").body == "head"
    validate_plan(example_plan("dog_paper"), scene)


def test_standing_key_states_have_four_flat_paws_on_the_floor(film):
    scene = film["scene"]
    for s in list_states(film["project"]):
        if s.id not in ("stand", "carry", "at_mat", "release"):
            continue
        for leg in LEGS:
            m = frame_pose(scene, s.pose.completed(scene), f"paw_{leg}")
            assert abs(m[2, 3]) < 2e-4, (s.id, leg)
            np.testing.assert_allclose(m[:3, :3], np.eye(3), atol=2e-3)        # the paw is level


def test_key_states_pass_their_checks(film):
    assert list(film["state_reports"]) == ["stand", "grasp", "carry", "at_mat", "put_down", "release"]
    for sid, reports in film["state_reports"].items():
        assert required_checks_pass(reports), (sid, [(r.name, r.verdict, r.evidence[:2]) for r in reports])


def test_gate_refused_until_every_state_was_approved(film):
    assert film["refused"].segment == "carry..at_mat"
    assert dict(film["refused"].reasons)["at_mat"].startswith("unreviewed")
    assert film["baked"] == ["stand..grasp", "grasp..carry", "carry..at_mat", "at_mat..put_down",
                             "put_down..release"]
    assert [s["tool"] for s in list_segments(film["project"])] == ["grasp", "carry", "carry", "place", "release"]


def test_baked_film_hits_states_and_passes_required_checks(film):
    tracks, scene = film["tracks"], film["scene"]
    assert (tracks.frame_start, tracks.frame_end) == (1001, 1180)
    for s in list_states(film["project"]):
        pose = s.pose.completed(scene)
        for k, v in pose.roots.items():
            np.testing.assert_array_equal(tracks.roots[k][s.frame - 1001], v)
        for k, v in pose.joints.items():
            assert tracks.joints[k][s.frame - 1001] == v, (s.id, k)
    assert required_checks_pass(film["report_list"]), \
        [(r.name, r.verdict, r.evidence[:2]) for r in film["report_list"]]
    assert film["reports"]["EventsSatisfied"].metrics["held"] == 4
    assert film["reports"]["JointLimits"].metrics["joint_frames_out"] == 0


def test_paws_planted_or_stepping_and_never_below_the_floor(film):
    scene, world = film["scene"], film["world"]
    soles = np.stack([frame_world(scene, world, f"paw_{leg}")[:, :3, 3] for leg in LEGS])
    assert soles[:, :, 2].min() > -5e-4
    planted = soles[:, :, 2] < 5e-4
    assert planted.sum(axis=0).min() >= 2                       # two paws hold the dog at every frame
    assert soles[:, :, 2].max() > 0.04                           # and the others do lift
    for leg in range(len(LEGS)):                      # a planted paw slides at most 5 mm
        start = None
        for f in range(soles.shape[1]):
            if planted[leg, f]:
                start = f if start is None else start
                assert np.linalg.norm(soles[leg, f, :2] - soles[leg, start, :2]) <= 0.005
            else:
                start = None
    torso_x = film["tracks"].roots["torso"][:, 0]
    assert torso_x[-1] - torso_x[0] == pytest.approx(MAT_X - PAPER_X, abs=1e-9)


def test_newspaper_carried_in_the_mouth_and_left_on_the_mat(film):
    scene, world, tracks = film["scene"], film["world"], film["tracks"]
    paper = tracks.roots["newspaper"]
    mouth = frame_world(scene, world, "mouth")[:, :3, 3]
    i = lambda f: f - 1001                                                        # noqa: E731
    np.testing.assert_allclose(paper[:i(GRASP)], np.tile(PAPER_REST, (i(GRASP), 1)), atol=1e-9)
    gap = np.linalg.norm(paper[:, :3] - mouth, axis=1)
    held = slice(i(GRASP), i(PUT_DOWN) + 1)
    assert np.ptp(gap[held]) < 1e-9                                               # rides on the mouth
    assert paper[i(CARRY), 2] > 0.3                                         # lifted off the floor
    lo, hi = ON_MAT
    end = paper[-1]
    assert np.all(end[:3] >= lo) and np.all(end[:3] <= hi)
    assert end[0] == pytest.approx(MAT_X, abs=1e-6)
    assert end[2] == pytest.approx(MAT[2] + PAPER[2] / 2, abs=1e-6)   # flat on the mat
    np.testing.assert_allclose(end[3:], [1, 0, 0, 0], atol=1e-6)
    assert np.ptp(paper[i(PUT_DOWN):], axis=0).max() < 1e-12                # stays where it was put
    assert gap[-1] > gap[i(PUT_DOWN)] + 0.2                                 # the dog has let go
