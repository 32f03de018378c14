"""The job queue, the done contract, recovery and the export gate, without Blender."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from jobs_scenes import approved_film, film_project, sink_base_into_floor
from studio.checks.run import verify_film
from studio.cli import main
from studio.jobs import queue, spec as specs
from studio.jobs.contract import check_done, missing_frames
from studio.jobs.export_gate import film_gate, write_delivery_report
from studio.store.project import sha256_file
from studio.timeline.reviews import list_reviews, record_review


def test_submit_writes_spec_meshes_and_tracks(tmp_project):
    scene, tracks = film_project(tmp_project, n_frames=5)
    job = queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d))
    folder = queue.job_dir(tmp_project, job.id)
    assert job.state == "queued" and job.attempts == 0
    on_disk = json.loads((folder / "spec.json").read_text())
    assert on_disk["frame_start"] == 1001 and on_disk["frame_end"] == 1005
    assert on_disk["expected"] == [f"frames/{f:06d}.png" for f in range(1001, 1006)] + ["out/preview.mp4"]
    assert set(on_disk["meshes"]) == {"floor", "base", "arm"}
    import numpy as np
    with np.load(folder / on_disk["meshes"]["arm"]) as z:
        assert z["vertices"].shape == (8, 3) and z["faces"].shape == (12, 3)
        assert np.allclose(z["vertices"][:, 0].min(), 0.0) and np.allclose(z["vertices"][:, 0].max(), 0.6)
    with np.load(folder / "tracks.npz") as z:
        assert np.allclose(z["joint:elbow"], tracks.joints["elbow"])
        assert z["root:floor"].shape == (5, 7)   # completed from the scene's rest
    assert on_disk["shots"] == [{"camera": "main", "frame": 1001, "name": "wide"}]   # one shot, one camera


def test_a_spec_that_cannot_be_built_leaves_no_job(tmp_project):
    scene, _ = film_project(tmp_project)
    with pytest.raises(specs.SpecProblem, match="no storyboard state named 'nope'"):
        queue.submit(tmp_project, "still", lambda d: specs.still_spec(tmp_project, d, ["nope"]))
    with pytest.raises(specs.SpecProblem, match="even numbers"):
        queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d, resolution=(63, 36)))
    assert queue.list_jobs(tmp_project) == []
    assert list((tmp_project.path / "jobs").iterdir()) == []


def test_no_baked_tracks_is_refused_by_the_cli(tmp_path, capsys):
    from studio.scene.io import save_scene
    from studio.store.project import Project
    from jobs_scenes import hinge_scene
    with Project.create(tmp_path / "p") as p:
        save_scene(p, hinge_scene())
    assert main(["render", str(tmp_path / "p"), "--preview"]) == 2
    assert "no baked tracks yet" in capsys.readouterr().err


def test_done_contract_needs_exit_zero_marker_and_every_output(tmp_path):
    spec = {"expected": ["frames/001001.png", "frames/001002.png", "out/preview.mp4"]}
    (tmp_path / "frames").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "frames/001001.png").write_bytes(b"one")
    v = check_done(tmp_path, spec, 0, {})
    assert not v.ok and v.missing == ["frames/001002.png", "out/preview.mp4"]
    assert "no finish marker" in v.message() and "2 of 3 expected outputs missing" in v.message()
    assert missing_frames(spec, v.missing) == [1002]
    (tmp_path / "frames/001002.png").write_bytes(b"two")
    (tmp_path / "out/preview.mp4").write_bytes(b"mp4")
    (tmp_path / "done.json").write_text("{}")
    reported = {"frames/001001.png": sha256_file(tmp_path / "frames/001001.png")}
    v = check_done(tmp_path, spec, 0, reported)
    assert v.ok and len(v.outputs) == 3
    assert not check_done(tmp_path, spec, -9, reported).ok
    # an output altered after the worker reported it fails the contract
    (tmp_path / "frames/001001.png").write_bytes(b"changed")
    v = check_done(tmp_path, spec, 0, reported)
    assert not v.ok and v.missing == ["frames/001001.png"]


def test_requeue_only_unfinished_jobs(tmp_project):
    film_project(tmp_project)
    job = queue.submit(tmp_project, "export_blend", lambda d: specs.blend_spec(tmp_project, d, "/tmp/x.blend"))
    with pytest.raises(queue.JobError, match="only failed, cancelled, interrupted"):
        queue.requeue(tmp_project, job.id)
    queue.finish(tmp_project, job.id, "failed", error="boom")
    assert queue.requeue(tmp_project, job.id).state == "queued"
    actions = [a["action"] for a in tmp_project.audit_log()]
    assert {"submit job", "job failed", "resume job"} <= set(actions)


def test_recover_marks_orphaned_running_jobs_interrupted_and_kills_their_worker(tmp_project, tmp_path):
    film_project(tmp_project)
    job = queue.submit(tmp_project, "export_blend", lambda d: specs.blend_spec(tmp_project, d, "/tmp/x.blend"))
    # a worker left behind by a studio that died: a process whose command line names worker.py
    script = tmp_path / "worker.py"
    script.write_text("import time\ntime.sleep(60)\n")
    orphan = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    studio = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])   # another open studio
    try:
        queue.mark_running(tmp_project, job.id, runner="local:999999999", pid=orphan.pid)
        other = queue.submit(tmp_project, "export_blend", lambda d: specs.blend_spec(tmp_project, d, "/tmp/y.blend"))
        queue.mark_running(tmp_project, other.id, runner=f"local:{studio.pid}", pid=None)
        assert queue.recover(tmp_project) == [job.id]
        assert orphan.wait(timeout=5) == -signal.SIGKILL
    finally:
        studio.kill()
        studio.wait()
        if orphan.poll() is None:
            orphan.kill()
    j = queue.get_job(tmp_project, job.id)
    assert j.state == "interrupted" and "resume" in j.error and j.pid is None
    assert queue.get_job(tmp_project, other.id).state == "running"


def test_export_gate_reads_the_storyboard_and_the_real_checks(tmp_project, tmp_path):
    film_project(tmp_project)               # states unreviewed, the segment stored outside the gate
    gate = film_gate(tmp_project)
    assert not gate.ok
    assert gate.reasons[:2] == ["state a: unreviewed: no one has approved it yet",
                                "state b: unreviewed: no one has approved it yet"]
    assert "segment a..b: baked against states that have changed since" in gate.reasons[2]
    assert "no film reports" in gate.reasons[3]
    scene, _, _ = approved_film(tmp_project)
    assert film_gate(tmp_project).ok
    sink_base_into_floor(tmp_project, scene)
    gate = film_gate(tmp_project)
    assert not gate.ok and "computed for other tracks" in gate.reasons[0]
    verify_film(tmp_project)
    gate = film_gate(tmp_project)
    assert not gate.ok and gate.reasons == ["NoPenetration: fail"]
    j, m = write_delivery_report(tmp_path, gate, [str(tmp_path / "film.blend")])
    data = json.loads(j.read_text())
    assert [c["name"] for c in data["failing_checks"]] == ["NoPenetration"]
    assert [e["frame"] for e in data["failing_checks"][0]["evidence"]] == [1003, 1004]
    assert data["failing_checks"][0]["evidence"][0]["depth_m"] == pytest.approx(0.015)
    assert "NoPenetration: fail" in m.read_text() and '"depth_m": 0.015' in m.read_text()


def test_export_refused_for_a_real_penetration(tmp_project, tmp_path, capsys):
    scene, _, _ = approved_film(tmp_project)
    sink_base_into_floor(tmp_project, scene)
    verify_film(tmp_project)
    out = tmp_path / "out" / "film.blend"
    code = main(["export", str(tmp_project.path), "--blend", str(out)])
    assert code == 1
    err = capsys.readouterr().err
    assert "export refused" in err and "NoPenetration: fail" in err
    assert not out.exists() and queue.list_jobs(tmp_project) == []


def test_a_state_rejected_after_a_passing_bake_blocks_export(tmp_project, tmp_path, capsys):
    scene, _, reports = approved_film(tmp_project)
    assert film_gate(tmp_project).ok
    record_review(tmp_project, "b", "reject", "the arm ends too high", "ben", scene)
    verify_film(tmp_project)                 # the tracks still pass: the rejection is the storyboard's
    gate = film_gate(tmp_project)
    assert not gate.ok and gate.reasons == ["state b: rejected by ben at " + list_reviews(tmp_project, "b")[-1].at
                                            + ": the arm ends too high"]
    assert [(s["state"], s["status"]) for s in gate.states] == [("b", "rejected")]
    out = tmp_path / "out" / "film.blend"
    assert main(["export", str(tmp_project.path), "--blend", str(out)]) == 1
    assert "state b: rejected by ben" in capsys.readouterr().err
    assert not out.exists() and queue.list_jobs(tmp_project) == []
    j, m = write_delivery_report(tmp_path, gate, [str(out)])
    assert json.loads(j.read_text())["unapproved_states"][0]["state"] == "b"
    assert "**b** (rejected): rejected by ben" in m.read_text()
    record_review(tmp_project, "b", "approve", "fine after all", "ben", scene)
    assert film_gate(tmp_project).ok


def test_moving_a_state_stales_its_review_and_blocks_export(tmp_project):
    from studio.timeline.commands import CommandStack, MoveKey
    approved_film(tmp_project)
    CommandStack().run(MoveKey(tmp_project, "b", 1005))
    gate = film_gate(tmp_project)
    assert "state b: stale: the state's pose, frame or cameras changed since review" in gate.reasons
    assert "segment a..b: baked against states that have changed since; bake it again" in gate.reasons


def test_export_to_a_folder_that_cannot_exist_is_refused(tmp_project, tmp_path, capsys):
    film_project(tmp_project)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["export", str(tmp_project.path), "--blend", str(blocker / "film.blend"),
                 "--with-exceptions"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_missing_blender_is_an_environment_error(tmp_project, monkeypatch, capsys):
    film_project(tmp_project)
    monkeypatch.setenv("KEYPOSE_BLENDER_PYTHON", "/nonexistent/blender/python")
    assert main(["render", str(tmp_project.path), "--stills", "--quiet"]) == 3
    assert "no Blender Python at /nonexistent/blender/python" in capsys.readouterr().err
    (job,) = queue.list_jobs(tmp_project)
    assert job.state == "failed" and "/nonexistent/blender/python" in job.error


def test_worker_environment_carries_no_secrets(monkeypatch):
    from studio.jobs.worker_process import _worker_env
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    env = _worker_env()
    assert "OPENAI_API_KEY" not in env and "sk-test-secret" not in json.dumps(env)


def test_farm_log_lines_become_events():
    from studio.jobs.farm import events_in
    logs = ('(run_worker pid=12) {"stage": "frame", "frame": 1001, "of": 2, "output": "frames/001001.png", '
            '"sha256": "ab"}\nsome chatter {not json\n{"stage": "done", "message": "ok"}\n')
    assert [e["stage"] for e in events_in(logs)] == ["frame", "done"]
    assert events_in(logs)[0]["frame"] == 1001


def test_a_still_of_a_state_edited_while_rendering_is_not_recorded_on_it(tmp_project):
    from studio.jobs.deliver import deliver
    from studio.timeline.storyboard import get_state, put_state
    scene, _ = film_project(tmp_project)
    job = queue.submit(tmp_project, "still", lambda d: specs.still_spec(tmp_project, d, None, ["main"]))
    folder = queue.job_dir(tmp_project, job.id)
    (folder / "out" / "stills").mkdir(parents=True)
    for rel in job.spec["expected"]:
        (folder / rel).write_bytes(rel.encode())          # stand-ins for the rendered PNGs
    moved = get_state(tmp_project, "b")
    moved.pose.joints["elbow"] = 0.3                      # the person edits b meanwhile
    put_state(tmp_project, scene, moved)
    deliver(tmp_project, folder, job.spec)
    assert get_state(tmp_project, "a").still == tmp_project.put_asset(b"out/stills/a_main.png", "png")
    assert get_state(tmp_project, "b").still == ""
    assert (tmp_project.path / "renders/stills/b_main.png").read_bytes() == b"out/stills/b_main.png"


def test_farm_submit_waits_for_a_head_that_has_just_started():
    """A loopback server answering like a fresh Ray head: 'no available agent' twice, then the job."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from studio.jobs.farm import FarmClient, FarmError
    bodies = []

    class Head(BaseHTTPRequestHandler):
        def do_POST(self):
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            if len(bodies) <= 2:
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"No available agent to submit job, please try again later.")
            else:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps({"submission_id": bodies[-1]["submission_id"]}).encode())

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Head)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = FarmClient(f"http://127.0.0.1:{server.server_address[1]}", timeout=5)
    try:
        assert client.submit("python -c 1", "keypose-7-1-abc", env={"A": "1"}) == "keypose-7-1-abc"
        assert len(bodies) == 3 and {b["submission_id"] for b in bodies} == {"keypose-7-1-abc"}
        assert bodies[0]["runtime_env"] == {"env_vars": {"A": "1"}}
        bodies.clear()
        with pytest.raises(FarmError, match="answered 500: No available agent"):
            client.submit("python -c 1", "keypose-8-1-abc", wait=0)
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_a_render_range_outside_the_film_is_refused_naming_the_film(tmp_project):
    film_project(tmp_project, n_frames=6)                     # baked 1001..1006
    with pytest.raises(specs.SpecProblem, match=r"frames 1004\.\.1010 are outside .*within 1001\.\.1006"):
        queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d, frame_range=(1004, 1010)))
    assert queue.list_jobs(tmp_project) == []
    job = queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d, frame_range=(1002, 1004)))
    spec = json.loads((queue.job_dir(tmp_project, job.id) / "spec.json").read_text())
    assert (spec["frame_start"], spec["frame_end"]) == (1002, 1004)
    assert spec["expected"] == [f"frames/{f:06d}.png" for f in (1002, 1003, 1004)] + ["out/preview.mp4"]


def test_the_cli_refuses_a_render_range_outside_the_film(tmp_project):
    import subprocess
    import sys
    film_project(tmp_project, n_frames=6)
    r = subprocess.run([sys.executable, "-m", "studio", "render", str(tmp_project.path), "--preview",
                        "--frames", "990..1003"], capture_output=True, text=True, timeout=120)
    assert r.returncode in (1, 2) and "within 1001..1006" in (r.stdout + r.stderr)
    assert "Traceback" not in r.stderr
