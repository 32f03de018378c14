"""Agent-written code runs in a confined worker process, never in the studio."""
from __future__ import annotations

import os
import uuid

import pytest
import trimesh

from studio.sandbox.errors import SandboxRefused
from studio.sandbox.run import inside_job, run_code


ESCAPE_DIR = f"agent-sandbox-escape-{uuid.uuid4().hex[:10]}"     # a name of this run alone
MARGIN = 30.0        # seconds a loaded machine may add to a limit before a stopped run is seen to end


@pytest.fixture
def job(tmp_path):
    return tmp_path / "project" / "jobs" / "agent-test"


def test_code_writes_inside_its_job_folder_with_no_key_in_its_environment(job, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-in-the-sandbox")
    run = run_code("import os, sys\nopen('out.txt', 'w').write(os.environ.get('OPENAI_API_KEY', 'none'))\n"
                   "print(os.getcwd()); print(sys.flags.isolated)", job)
    assert run.ok and run.files == ["out.txt"]
    assert (job / "out.txt").read_text() == "none"
    assert run.stdout.split() == [str(job.resolve()), "1"]


@pytest.mark.parametrize("code, refusal", [
    ("open('../escaped.txt', 'w').write('x')", "Read-only file system: '../escaped.txt'"),
    (f"import os; os.makedirs('/tmp/{ESCAPE_DIR}')", f"Read-only file system: '/tmp/{ESCAPE_DIR}'"),
    ("import os; os.remove('../victim.txt')", "Read-only file system: '../victim.txt'"),
    ("import os; os.rename('../victim.txt', 'mine.txt')", "Invalid cross-device link: '../victim.txt'"),
    ("import subprocess; subprocess.run(['touch', '../escaped.txt'], check=True)", "returned non-zero exit status 1"),
    ("import os; assert os.system('touch ../escaped.txt') == 0, 'touch failed'", "AssertionError: touch failed"),
    ("import socket; socket.create_connection(('127.0.0.1', 9))", "Connection refused"),
    ("import os; fd = os.open('../escaped.txt', os.O_WRONLY | os.O_CREAT); os.write(fd, b'x')",
     "Read-only file system"),
])
def test_escapes_are_refused(job, code, refusal):
    victim = job.parent / "victim.txt"
    job.mkdir(parents=True)
    victim.write_text("keep me")
    run = run_code(code, job)
    assert not run.ok and refusal in run.failure()
    assert victim.read_text() == "keep me"
    assert not (job.parent / "escaped.txt").exists() and not os.path.exists(f"/tmp/{ESCAPE_DIR}")


def test_time_and_memory_limits_stop_the_worker(job):
    run = run_code("while True:\n    pass\n", job, time_limit=1.0)
    assert run.timed_out and not run.ok and "time limit" in run.failure() and run.seconds < 1.0 + MARGIN
    run = run_code("blob = bytearray(2 << 30)\n", job, memory_mb=512)
    assert not run.ok and "MemoryError" in run.failure()


def test_paths_given_by_the_agent_stay_in_the_job_folder(job):
    job.mkdir(parents=True)
    assert inside_job(job, "out/part.stl") == (job / "out" / "part.stl").resolve()
    for bad in ("/etc/passwd", "../x.stl", "out/../../x.stl", " "):
        with pytest.raises(SandboxRefused):
            inside_job(job, bad)


def test_a_build123d_part_comes_back_as_a_mesh(job):
    run = run_code("from build123d import Box, export_stl\nexport_stl(Box(0.2, 0.1, 0.05), 'part.stl')\n",
                   job, time_limit=60)
    assert run.ok, run.failure()
    mesh = trimesh.load(job / "part.stl", file_type="stl", force="mesh")
    assert mesh.extents == pytest.approx([0.2, 0.1, 0.05], abs=1e-6)


@pytest.mark.blender
def test_a_blender_script_runs_under_the_blender_python_confined_the_same_way(job, tmp_path):
    escaped = tmp_path / "blender-escape.txt"
    code = ("import bpy\nbpy.ops.mesh.primitive_cube_add(size=0.5)\nprint('objects', len(bpy.data.objects))\n"
            f"bpy.ops.wm.save_as_mainfile(filepath='scene.blend')\nopen({str(escaped)!r}, 'w')\n")
    run = run_code(code, job, kind="blender", memory_mb=4096)
    assert "objects 4" in run.stdout and run.files == ["scene.blend"]
    head = (job / "scene.blend").read_bytes()[:7]
    assert head == b"BLENDER" or head[:4] == b"\x28\xb5\x2f\xfd"      # plain or zstd-compressed .blend
    assert not run.ok and "Read-only file system" in run.failure() and not escaped.exists()


def test_what_the_code_sees_and_who_it_is_on_the_host(job, monkeypatch, tmp_path):
    """A fresh /proc, no network device but its own loopback, no capability, and not root on the host."""
    import threading
    import time
    from pathlib import Path
    monkeypatch.setenv("OPENAI_API_KEY", "sk-seen-from-the-host-0123")
    marker = f"sandbox-probe-{os.getpid()}"
    code = ("import os, time\n"
            "status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
            "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
            "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]))\n"
            "print(status['CapEff'], status['NoNewPrivs'], os.uname().nodename)\n"
            "print(os.path.exists(os.path.expanduser('~root/.config')), os.path.exists('/etc/shadow'))\n"
            f"import subprocess; subprocess.run(['sh', '-c', 'sleep 1.5', {marker!r}])\n")
    seen: dict = {}

    def watch():       # from the host, while the code runs
        for _ in range(100):
            for e in os.scandir("/proc"):
                try:
                    if e.name.isdigit() and marker.encode() in Path(e.path, "cmdline").read_bytes():
                        seen["uid"] = e.stat().st_uid
                        seen["environ"] = Path(e.path, "environ").read_bytes()
                        return
                except OSError:
                    continue
            time.sleep(0.05)
    t = threading.Thread(target=watch)
    t.start()
    run = run_code(code, job, time_limit=20)
    t.join()
    assert run.ok, run.failure()
    pids, devices, caps, homes = run.stdout.splitlines()
    assert pids in ("['1', '2', '3']", "['1', '2']")         # the namespace's init, the code and its child
    assert devices == "['lo']"
    assert caps == "0000000000000000 1 sandbox"
    assert homes == "False False"
    assert seen["uid"] == (65534 if os.geteuid() == 0 else os.getuid())
    assert b"sk-seen-from-the-host" not in seen["environ"] and b"PATH=/usr/bin:/bin" in seen["environ"]


def test_processes_that_together_pass_the_memory_limit_are_killed(job):
    from studio.sandbox.task_group import TaskGroup
    group = TaskGroup.make(8, 1 << 30)
    if group is None:
        pytest.skip("the studio may not make a task group here; each process keeps only its rlimit")
    group.remove()
    code = ("import os, time\n"
            "for _ in range(4):\n"
            "    if os.fork() == 0:\n"
            "        block = bytearray(100 << 20)\n"
            "        block[::4096] = b'x' * len(block[::4096])\n"
            "        time.sleep(3)\n"
            "        os._exit(0)\n"
            "print(sorted(os.wait()[1] for _ in range(4)))\n")
    run = run_code(code, job, memory_mb=256, time_limit=30)
    assert "used more than the memory limit (256 MB) and were killed" in run.failure()
    assert "9]" in run.stdout or "9," in run.stdout        # the kernel's SIGKILL, seen by the parent
