"""A Ray head on loopback for the farm tests and the farm benchmark: its own process group and
temp folder, `blender` slots as a resource, ended on exit (then any process left under its
temp folder, by pid)."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from studio.jobs.farm import FarmClient

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


@contextlib.contextmanager
def loopback_head(slots: int = 2, prefix: str = "kpray"):
    """Yield (client, temp folder) of a Ray head with `slots` blender slots, up and serving jobs."""
    temp = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    gcs, dash, client, agent, agent_grpc, metrics, env_agent = free_ports(7)
    cmd = [str(ROOT / ".venv/bin/ray"), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
           f"--port={gcs}", "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}",
           f"--ray-client-server-port={client}", f"--dashboard-agent-listen-port={agent}",
           f"--dashboard-agent-grpc-port={agent_grpc}", f"--metrics-export-port={metrics}",
           f"--runtime-env-agent-port={env_agent}", f'--resources={{"blender": {slots}}}', f"--num-cpus={slots}",
           "--include-dashboard=true", "--disable-usage-stats", f"--temp-dir={temp}"]
    head = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    c = FarmClient(f"http://127.0.0.1:{dash}")
    try:
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
        yield c, temp
    finally:
        c.close()
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
