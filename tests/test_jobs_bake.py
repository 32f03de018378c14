"""Bake jobs: motion authored between approved states in a separate Python process,
under the same done contract, cancel and gate as the render jobs."""
from __future__ import annotations

import json
import os
import threading

import numpy as np
from timeline_scenes import author_arm, check_state

from studio.cli import main
from studio.jobs import queue
from studio.jobs.bake_spec import bake_spec
from studio.jobs.local import JobWatch, LocalRunner, run_job
from studio.scene.pose import Pose
from studio.store.project import sha256_file
from studio.timeline.bake import hits_states
from studio.timeline.film import list_segments, load_segment
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import State, get_state, put_state


def bake(project, segments=None, watch=None):
    job = queue.submit(project, "bake", lambda d: bake_spec(project, d, segments))
    return run_job(project, job.id, watch, {})


def test_a_bake_job_hits_both_approved_states_and_hashes_its_listing(tmp_project):
    scene = author_arm(tmp_project)
    events = []
    job = bake(tmp_project, watch=JobWatch(on_event=lambda i, e: events.append(e)))
    assert job.state == "succeeded", job.error
    assert job.progress == 1.0
    listing_path = queue.job_dir(tmp_project, job.id) / "out" / "bake.json"
    assert job.outputs == {"out/bake.json": sha256_file(listing_path)}
    listing = json.loads(listing_path.read_text())
    rows = {r["segment"]: r for r in list_segments(tmp_project)}
    assert [s["segment"] for s in listing["segments"]] == ["rest..bent", "bent..back"]
    assert [s["tracks_hash"] for s in listing["segments"]] == [rows["rest..bent"]["hash"], rows["bent..back"]["hash"]]
    assert [s["frames"] for s in listing["segments"]] == [[1001, 1024], [1024, 1048]]
    assert [e["segment"] for e in events if e["stage"] == "segment"] == ["rest..bent", "bent..back"]
    for seg, (a, b) in {"rest..bent": ("rest", "bent"), "bent..back": ("bent", "back")}.items():
        tracks = load_segment(tmp_project, seg)
        pa, pb = get_state(tmp_project, a).pose.completed(scene), get_state(tmp_project, b).pose.completed(scene)
        assert hits_states(tracks, pa, pb)
        elbow = tracks.joints["elbow"]
        assert np.all(np.diff(elbow) >= 0) if seg == "rest..bent" else np.all(np.diff(elbow) <= 0)
        assert abs(elbow[1] - elbow[0]) < abs(elbow[len(elbow) // 2] - elbow[len(elbow) // 2 - 1])   # eases in
    assert job.pid is None and job.runner.startswith("local:")


def test_an_unapproved_state_fails_the_job_with_the_gates_reasons_and_bakes_nothing(tmp_project):
    scene = author_arm(tmp_project, approve=False)
    record_review(tmp_project, "rest", "approve", "ok", "ana", scene)
    record_review(tmp_project, "back", "reject", "arm too low", "ana", scene)
    job = bake(tmp_project)
    assert job.state == "failed"
    assert "bent: unreviewed" in job.error and "back: rejected by ana" in job.error and "arm too low" in job.error
    assert list_segments(tmp_project) == []
    folder = queue.job_dir(tmp_project, job.id)
    assert not (folder / "out" / "bake.json").exists() and not (folder / "done.json").exists()


def test_cancel_stops_a_long_bake_before_it_finishes(tmp_project):
    scene = author_arm(tmp_project)
    ids = ["back"]
    for i in range(240):                      # a long chain of approved states past the plan's end
        sid = f"k{i}"
        pose = Pose.rest(scene)
        pose.joints["elbow"] = 0.3 + 0.8 * (i % 2)
        put_state(tmp_project, scene, State(sid, 1049 + 4 * i, pose, "close"))
        check_state(tmp_project, sid)
        record_review(tmp_project, sid, "approve", "", "ana", scene)
        ids.append(sid)
    segments = [f"{a}..{b}" for a, b in zip(ids, ids[1:])]
    job = queue.submit(tmp_project, "bake", lambda d: bake_spec(tmp_project, d, segments))
    first = threading.Event()
    runner = LocalRunner(tmp_project.path, settings={},
                         on_event=lambda i, e: e["stage"] == "segment" and first.set())
    try:
        future = runner.start(job.id)
        assert first.wait(60), "the bake never reported a segment"
        pid = queue.get_job(tmp_project, job.id).pid
        runner.cancel(job.id)
        done = future.result(30)
    finally:
        runner.shutdown()
    assert done.state == "cancelled"
    assert 1 <= len(list_segments(tmp_project)) < len(segments)
    assert not (queue.job_dir(tmp_project, job.id) / "done.json").exists()
    try:
        os.kill(pid, 0)
        gone = open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    except (ProcessLookupError, FileNotFoundError):
        gone = True
    assert gone


def test_studio_bake_exit_codes(tmp_project, capsys):
    scene = author_arm(tmp_project, approve=False)
    path = str(tmp_project.path)
    assert main(["bake", path, "--segment", "rest-bent"]) == 2
    assert main(["bake", path]) == 1
    err = capsys.readouterr().err
    assert "rest: unreviewed" in err and "back: unreviewed" in err
    assert list_segments(tmp_project) == []
    for sid in ("rest", "bent"):
        record_review(tmp_project, sid, "approve", "", "ana", scene)
    assert main(["bake", path, "--segment", "rest..bent"]) == 0
    out = capsys.readouterr().out
    assert "baked rest..bent with interpolate (1/1)" in out
    assert [r["segment"] for r in list_segments(tmp_project)] == ["rest..bent"]
    assert [j.state for j in queue.list_jobs(tmp_project)] == ["failed", "succeeded"]


def test_each_segment_bakes_with_the_tool_its_plan_names_and_a_tool_that_cannot_fails_the_job(tmp_project):
    from studio.timeline.plan import load_plan, save_plan
    scene = author_arm(tmp_project)
    plan = load_plan(tmp_project)
    plan["motion"][0].update(tool="hold", params={"blend": 6})
    save_plan(tmp_project, plan, scene)
    job = bake(tmp_project)
    assert job.state == "succeeded", job.error
    rows = {r["segment"]: r for r in list_segments(tmp_project)}
    assert {k: r["tool"] for k, r in rows.items()} == {"rest..bent": "hold", "bent..back": "interpolate"}
    elbow = load_segment(tmp_project, "rest..bent").joints["elbow"]
    rest = get_state(tmp_project, "rest").pose.completed(scene).joints["elbow"]
    assert np.all(elbow[:-6] == rest) and elbow[-1] != rest        # held, then moves over the last 6 frames
    plan["motion"][1].update(tool="hold", params={})                # the two states differ: hold cannot
    save_plan(tmp_project, plan, scene)
    before = {k: r["hash"] for k, r in rows.items()}
    job = bake(tmp_project, ["bent..back"])
    assert job.state == "failed" and "hold bent..back: the two states differ" in job.error
    assert {r["segment"]: r["hash"] for r in list_segments(tmp_project)} == before

