"""The dog-and-newspaper example end to end: an articulated dog, key states through their checks,
the gate, the motion tools its plan names (grasp, a walk carrying the paper on the mouth, place,
release), and the film's required checks."""
from __future__ import annotations

import numpy as np
import pytest

from studio.checks.report import required_checks_pass
from studio.checks.run import verify_film, verify_state
from studio.examples import dog_paper as scene_def
from studio.examples import dog_paper_story as story
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import frame_world, tracks_world
from studio.timeline.film import list_segments, load_film_tracks
from studio.timeline.gate import GateError
from studio.timeline.ik import frame_pose
from studio.timeline.plan import validate_plan
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import list_states


@pytest.fixture(scope="module")
def film(tmp_path_factory):
    """The project after plan, states, state checks, approvals, motion and film checks."""
    project = scene_def.create(tmp_path_factory.mktemp("dog") / "dog_paper")
    story.author_plan(project)
    story.author_states(project)
    state_reports = {s.id: verify_state(project, s.id) for s in list_states(project)}
    for s in list_states(project)[:3]:                   # two segments approved, the rest not yet
        record_review(project, s.id, "approve", note="good", reviewer="ana")
    with pytest.raises(GateError) as refused:
        story.author_motion(project)
    for s in list_states(project)[3:]:
        record_review(project, s.id, "approve", note="good", reviewer="ana")
    baked = story.author_motion(project)
    reports = verify_film(project)
    scene = load_scene(project)
    tracks = load_film_tracks(project)
    yield {"project": project, "scene": scene, "tracks": tracks, "world": tracks_world(scene, tracks),
           "state_reports": state_reports, "refused": refused.value, "baked": baked,
           "reports": {r.name: r for r in reports}, "report_list": reports}
    project.close()


def test_scene_is_an_articulated_dog_with_limits():
    scene = scene_def.build_scene()
    assert Scene.from_json(scene.to_json()).to_dict() == scene.to_dict()
    assert scene.roots == ["floor", "mat", "newspaper", "torso"]
    for leg in scene_def.LEGS:
        for kind in ("hip", "knee", "ankle"):
            j = scene.joint(f"{kind}_{leg}")
            assert j.type == "revolute" and j.lower < j.upper
        assert scene.frame(f"paw_{leg}").body == f"paw_{leg}"
    assert scene.joint("knee_fl").upper == 0.0 and scene.joint("knee_hl").lower == 0.0
    assert scene.frame("mouth").body == "head"
    validate_plan(story.plan(), scene)


def test_key_poses_stand_on_flat_paws_under_the_hips():
    scene = scene_def.build_scene()
    pose = story.dog_pose(scene, -1.0, 0.36, 0.2)
    for sole, (x, y, z, _) in story.stance(-1.0).items():
        m = frame_pose(scene, pose, sole)
        np.testing.assert_allclose(m[:3, 3], [x, y, z], atol=2e-4)
        np.testing.assert_allclose(m[:3, :3], np.eye(3), atol=2e-3)            # the paw is level
    with pytest.raises(ValueError, match="cannot stand where asked"):
        story.dog_pose(scene, -1.0, 0.36, 0.2, paws_at=-1.6)


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
    soles = np.stack([frame_world(scene, world, f"paw_{leg}")[:, :3, 3] for leg in scene_def.LEGS])
    assert soles[:, :, 2].min() > -5e-4
    planted = soles[:, :, 2] < 5e-4
    assert planted.sum(axis=0).min() >= 2                       # two paws hold the dog at every frame
    assert soles[:, :, 2].max() > 0.04                           # and the others do lift
    for leg in range(len(scene_def.LEGS)):                      # a planted paw slides at most 5 mm
        start = None
        for f in range(soles.shape[1]):
            if planted[leg, f]:
                start = f if start is None else start
                assert np.linalg.norm(soles[leg, f, :2] - soles[leg, start, :2]) <= 0.005
            else:
                start = None
    torso_x = film["tracks"].roots["torso"][:, 0]
    assert torso_x[-1] - torso_x[0] == pytest.approx(scene_def.MAT_X - scene_def.PAPER_X, abs=1e-9)


def test_newspaper_carried_in_the_mouth_and_left_on_the_mat(film):
    scene, world, tracks = film["scene"], film["world"], film["tracks"]
    paper = tracks.roots["newspaper"]
    mouth = frame_world(scene, world, "mouth")[:, :3, 3]
    i = lambda f: f - 1001                                                        # noqa: E731
    np.testing.assert_allclose(paper[:i(story.GRASP)], np.tile(story.PAPER_REST, (i(story.GRASP), 1)), atol=1e-9)
    gap = np.linalg.norm(paper[:, :3] - mouth, axis=1)
    held = slice(i(story.GRASP), i(story.PUT_DOWN) + 1)
    assert np.ptp(gap[held]) < 1e-9                                               # rides on the mouth
    assert paper[i(story.CARRY), 2] > 0.3                                         # lifted off the floor
    lo, hi = story.mat_region()
    end = paper[-1]
    assert np.all(end[:3] >= lo) and np.all(end[:3] <= hi)
    assert end[0] == pytest.approx(scene_def.MAT_X, abs=1e-6)
    assert end[2] == pytest.approx(scene_def.MAT[2] + scene_def.PAPER[2] / 2, abs=1e-6)   # flat on the mat
    np.testing.assert_allclose(end[3:], [1, 0, 0, 0], atol=1e-6)
    assert np.ptp(paper[i(story.PUT_DOWN):], axis=0).max() < 1e-12                # stays where it was put
    assert gap[-1] > gap[i(story.PUT_DOWN)] + 0.2                                 # the dog has let go
