"""Plan validation names the field; progress rises with work and falls after an invalidating edit."""
from __future__ import annotations

import copy
import json

import pytest
from timeline_scenes import arm_plan, arm_scene, author_arm, check_state

from studio.scene.io import save_scene
from studio.checks.run import verify_film
from studio.store.reports import REQUIRED
from studio.timeline import film
from studio.timeline.bake import bake_segment
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.plan import PlanError, load_plan, plan_segments, save_plan, validate_plan
from studio.timeline.progress import progress
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import get_state, put_state


@pytest.mark.parametrize("edit, message", [
    (lambda p: p["states"][2].update(frame=1300), "plan.states[2].frame: 1300 is outside shot 'close' (1001..1048)"),
    (lambda p: p["shots"][0].update(camera="cam_x"), "plan.shots[0].camera: no camera named 'cam_x'"),
    (lambda p: p["states"][1].update(id="rest"), "plan.states[1].id: 'rest' is used twice"),
    (lambda p: p["objects"].append({"name": "ghost"}), "plan.objects[2].name: 'ghost' is not a body"),
    (lambda p: p["states"][0].update(objects=["ghost"]), "plan.states[0].objects[0]: 'ghost'"),
    (lambda p: p["events"][0].update(kind="teleport"), "plan.events[0].kind: expected one of"),
    (lambda p: p["events"][0].update(window=[1030, 1010]), "plan.events[0].window: last frame 1010 is before"),
    (lambda p: p["events"][0].update(after=["nothing"]), "plan.events[0].after[0]: no other event 'nothing'"),
    (lambda p: p["motion"][0].update(segment="rest-bent"), "plan.motion[0].segment: expected 'A..B'"),
    (lambda p: p["motion"][0].update(segment="rest..nowhere"), "plan.motion[0].segment: no state 'nowhere'"),
    (lambda p: p["states"][0].update(shot="long"), "plan.states[0].shot: no shot 'long'"),
])
def test_plan_errors_name_the_field(edit, message):
    plan = arm_plan()
    edit(plan)
    with pytest.raises(PlanError) as e:
        validate_plan(plan, arm_scene())
    assert str(e.value).startswith(message)


def test_event_order_cycle_is_refused():
    plan = arm_plan()
    plan["events"].append({"id": "b", "kind": "order", "subjects": [], "window": [1001, 1002], "after": ["point"]})
    plan["events"][0]["after"] = ["b"]
    with pytest.raises(PlanError, match="cycle: point -> b -> point|cycle: b -> point -> b"):
        validate_plan(plan)


def test_bad_plan_leaves_stored_plan_unchanged(tmp_project):
    scene = arm_scene()
    save_plan(tmp_project, arm_plan(), scene)
    bad = copy.deepcopy(arm_plan())
    bad["shots"][0]["camera"] = "nope"
    with pytest.raises(PlanError):
        save_plan(tmp_project, bad, scene)
    assert load_plan(tmp_project) == arm_plan()
    assert plan_segments(load_plan(tmp_project)) == ["rest..bent", "bent..back"]


def _bake_all(project, scene):
    for seg in ("rest..bent", "bent..back"):
        a, b = (get_state(project, s) for s in seg.split(".."))
        bake_segment(project, seg, interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)]), "interpolate")


def _verify_film(project):
    reports = verify_film(project)
    assert {r.name: r.verdict for r in reports if r.name in REQUIRED} == dict.fromkeys(REQUIRED, "pass")


def test_progress_rises_with_work_and_falls_after_an_edit(tmp_project):
    steps = [progress(tmp_project)[0]]
    scene = arm_scene()
    save_plan(tmp_project, arm_plan())
    steps.append(progress(tmp_project)[0])
    save_scene(tmp_project, scene)
    steps.append(progress(tmp_project)[0])
    author_arm(tmp_project, approve=False)
    steps.append(progress(tmp_project)[0])
    for sid in ("rest", "bent", "back"):
        record_review(tmp_project, sid, "approve", "", "ana", scene)
    steps.append(progress(tmp_project)[0])
    _bake_all(tmp_project, scene)
    steps.append(progress(tmp_project)[0])
    _verify_film(tmp_project)
    steps.append(progress(tmp_project)[0])
    tmp_project.db["jobs"].insert({"kind": "film", "state": "succeeded", "created": "9999", "updated": "9999"})
    value, missing = progress(tmp_project)
    steps.append(value)
    assert steps == sorted(steps) and len(set(steps)) == len(steps), steps
    assert steps[0] == 0.0 and steps[-1] == 1.0 and missing == []
    assert all(v < 1 for v in steps[:-1])
    # an edit to a state's pose stales its review, the two segments and the film
    st = get_state(tmp_project, "bent")
    st.pose.joints["elbow"] = 1.0
    put_state(tmp_project, scene, st)
    check_state(tmp_project, "bent")
    value, missing = progress(tmp_project)
    assert value < steps[4]
    assert "state bent: stale: the state's pose, frame or cameras changed since review" in missing
    assert "film: rest..bent, bent..back baked against states that have changed since" in missing
    assert "segment rest..bent: waiting for its states" in missing


def test_progress_below_one_until_rendered(tmp_project):
    scene = author_arm(tmp_project)
    _bake_all(tmp_project, scene)
    _verify_film(tmp_project)
    value, missing = progress(tmp_project)
    assert 0.75 < value < 1 and missing == ["film: not rendered since the last bake"]
    (tmp_project.path / "renders" / "film.mp4").write_bytes(b"\x00" * 64)
    assert progress(tmp_project) == (1.0, [])
    # the crate pushed into the base mid-segment: the real verifiers fail the film
    a, b = (get_state(tmp_project, s) for s in ("rest", "bent"))
    tracks = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
    tracks.roots["crate"][5:15] = [0.15, 0.0, 0.1, 1, 0, 0, 0]
    bake_segment(tmp_project, "rest..bent", tracks, "interpolate")
    reports = {r.name: r for r in verify_film(tmp_project)}
    assert reports["NoPenetration"].verdict == "fail"
    (tmp_project.path / "renders" / "film.mp4").write_bytes(b"\x00" * 64)
    value, missing = progress(tmp_project)
    assert value < 1 and "film: required checks fail" in missing


def test_a_rejection_after_the_render_makes_progress_fall(tmp_project):
    scene = author_arm(tmp_project)
    _bake_all(tmp_project, scene)
    _verify_film(tmp_project)
    (tmp_project.path / "renders" / "film.mp4").write_bytes(b"\x00" * 64)
    assert progress(tmp_project) == (1.0, [])
    record_review(tmp_project, "bent", "reject", "the elbow reads wrong", "ben", scene)
    value, missing = progress(tmp_project)
    assert value < 0.9 and "state bent: rejected by ben" in " ".join(missing)


def test_film_hash_matches_the_checks_layer(tmp_project):
    run = pytest.importorskip("studio.checks.run")
    scene = author_arm(tmp_project)
    _bake_all(tmp_project, scene)
    tracks = film.load_film_tracks(tmp_project)
    assert film.film_hash(tmp_project) == run.film_hash(tracks, scene, load_plan(tmp_project))
