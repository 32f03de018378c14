"""The Ray farm runner against a real Ray head on loopback: a short film rendered
through the Jobs REST API with frames fanned out to `blender` tasks, and a job
stopped mid-render. The head runs in its own process group, which the
finalizer ends (then any process left under its temp folder, by pid)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import av
import pytest

from jobs_scenes import film_project
from studio.jobs import queue, spec as specs
from studio.jobs.farm import FarmClient, run_farm_job
from studio.jobs.local import JobWatch
from studio.store.project import Project

pytestmark = [pytest.mark.ray, pytest.mark.blender]
ROOT = Path(__file__).resolve().parents[1]


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def processes_mentioning(text: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text.encode() in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


@pytest.fixture(scope="module")
def farm():
    temp = tempfile.mkdtemp(prefix="kpray", dir="/tmp")
    gcs, dash, client, agent, agent_grpc, metrics, env_agent = free_ports(7)
    cmd = [str(ROOT / ".venv/bin/ray"), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
           f"--port={gcs}", "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}",
           f"--ray-client-server-port={client}", f"--dashboard-agent-listen-port={agent}",
           f"--dashboard-agent-grpc-port={agent_grpc}", f"--metrics-export-port={metrics}",
           f"--runtime-env-agent-port={env_agent}", '--resources={"blender": 2}', "--num-cpus=2",
           "--include-dashboard=true", "--disable-usage-stats", f"--temp-dir={temp}"]
    head = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    address = f"http://127.0.0.1:{dash}"

    def shutdown():
        for sig, wait in ((signal.SIGTERM, 4.0), (signal.SIGKILL, 2.0)):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and processes_mentioning(temp):
                time.sleep(0.2)
        for pid in processes_mentioning(temp):      # anything of this head that left the group
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        head.wait(timeout=10)
        shutil.rmtree(temp, ignore_errors=True)

    try:
        c = FarmClient(address)
        deadline = time.monotonic() + 180
        while True:
            try:
                c.version()
                c.http.get("/api/jobs/").raise_for_status()   # the job server is up, not just the dashboard
                break
            except Exception:
                if time.monotonic() > deadline or head.poll() is not None:
                    raise RuntimeError("the Ray head did not come up")
                time.sleep(1)
        yield c
        c.close()
    finally:
        shutdown()
    assert processes_mentioning(temp) == []


def test_film_renders_through_the_farm(farm, tmp_project):
    film_project(tmp_project, n_frames=6, resolution=(64, 36))
    job = queue.submit(tmp_project, "preview", lambda d: specs.video_spec(tmp_project, d))
    events = []
    job = run_farm_job(tmp_project, job.id, farm, JobWatch(on_event=lambda j, e: events.append(e)), chunk=3)
    assert job.state == "succeeded", job.error
    assert job.runner.startswith("ray:") and job.submission_id.startswith(f"keypose-{job.id}-1-")
    status = farm.status(job.submission_id)
    assert status["status"] == "SUCCEEDED"
    assert sorted(e["frame"] for e in events if e["stage"] == "frame") == list(range(1001, 1007))
    folder = queue.job_dir(tmp_project, job.id)
    assert {p.name for p in folder.glob("done-chunk-*.json")} == {"done-chunk-0.json", "done-chunk-1.json"}
    with av.open(str(tmp_project.path / "renders" / "preview.mp4")) as c:
        s = c.streams.video[0]
        assert (float(s.average_rate), s.width, s.height) == (24.0, 64, 36)
        assert sum(1 for _ in c.decode(video=0)) == 6
    assert '"stage": "frame"' in farm.logs(job.submission_id)


def test_stopping_a_farm_job_cancels_it_and_leaves_no_blender(farm, tmp_project):
    film_project(tmp_project, n_frames=16, resolution=(160, 90))
    job = queue.submit(tmp_project, "film",
                       lambda d: specs.video_spec(tmp_project, d, "film", engine="CYCLES", samples=24))
    folder = queue.job_dir(tmp_project, job.id)
    first = threading.Event()
    watch = JobWatch(on_event=lambda j, e: e.get("stage") == "frame" and first.set())
    result = {}

    def run():
        with Project.open(tmp_project.path) as p:
            result["job"] = run_farm_job(p, job.id, farm, watch, chunk=2)

    t = threading.Thread(target=run)
    t.start()
    assert first.wait(240), "no frame came back from the farm"
    watch.cancel(job.id)
    t.join(60)
    assert not t.is_alive()
    job = result["job"]
    assert job.state == "cancelled" and 0 < len(job.outputs) < 17
    assert farm.status(job.submission_id)["status"] == "STOPPED"
    deadline = time.monotonic() + 15
    while processes_mentioning(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert processes_mentioning(str(folder)) == []      # no Blender left rendering this job
    assert not (folder / "out" / "film.mp4").exists()
