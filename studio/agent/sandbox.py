"""Code the agent writes runs here: in a worker process, never in the studio.

A build123d part runs under .venv's Python, a Blender script under the
Blender Python. The worker starts isolated (`-I`), in its own job folder
(its cwd and HOME), with a clean environment (no API key), a CPU-time, a
memory and a file-size limit (setrlimit), a wall-clock limit, and an audit
hook installed before the agent's code runs that refuses writing, deleting
or renaming anything outside the job folder, starting processes and opening
sockets. The studio reads back only files inside the job folder.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ToolRefused

BOOTSTRAP = r'''
import os, sys
JOB = os.path.realpath(sys.argv[1])
SCRIPT = sys.argv[2]
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
PATH_EVENTS = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 1, "os.chmod": 1, "os.chown": 1,
               "os.truncate": 1, "os.utime": 1, "shutil.rmtree": 1, "os.rename": 2, "os.link": 2,
               "os.symlink": 2, "shutil.copyfile": 2, "shutil.move": 2}
REFUSED = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
           "os.forkpty", "os.kill", "os.killpg", "socket.connect", "socket.bind", "pty.spawn")

def inside(p):
    if isinstance(p, int):
        return True
    p = os.path.realpath(os.fsdecode(p))
    return p == JOB or p.startswith(JOB + os.sep)

def hook(event, args):
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & WRITE)
        if writing and path is not None and not inside(path):
            raise PermissionError(f"the sandbox refuses writing outside the job folder: {path}")
    elif event in PATH_EVENTS:
        for p in args[:PATH_EVENTS[event]]:
            if p is not None and not inside(p):
                raise PermissionError(f"the sandbox refuses {event} outside the job folder: {p}")
    elif event in REFUSED:
        raise PermissionError(f"the sandbox refuses {event}")

with open(SCRIPT) as f:
    source = f.read()
sys.addaudithook(hook)
sys.argv = [SCRIPT]
exec(compile(source, SCRIPT, "exec"), {"__name__": "__main__", "__file__": SCRIPT})
'''


@dataclass
class SandboxRun:
    job_dir: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def failure(self) -> str:
        """Why the run failed, in a line or two for the agent and the person."""
        if self.timed_out:
            return f"the code ran past its time limit ({self.seconds:.1f} s) and was stopped"
        if self.returncode < 0:
            return f"the code was killed by signal {-self.returncode} (a limit was exceeded)"
        tail = [ln for ln in self.stderr.strip().splitlines() if ln.strip()][-1:]
        return f"the code exited with status {self.returncode}: " + (tail[0] if tail else "no message")


def default_interpreter(kind: str, settings: dict | None = None) -> Path:
    root = Path(__file__).resolve().parents[2]
    if kind == "python":
        return Path(sys.executable)
    if kind == "blender":
        custom = (settings or {}).get("blender_python")
        return Path(custom) if custom else root / ".venv-blender" / "bin" / "python"
    raise ToolRefused(f"code kind {kind!r}: expected 'python' (build123d) or 'blender'")


def new_job_dir(project_dir: Path, label: str = "code") -> Path:
    job = Path(project_dir) / "jobs" / f"agent-{label}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    job.mkdir(parents=True)
    return job


def inside_job(job_dir: Path, name: str) -> Path:
    """The path of `name` in the job folder; refuses absolute paths and '..' escapes."""
    p = Path(name)
    if p.is_absolute() or not name.strip():
        raise ToolRefused(f"path {name!r}: expected a relative path inside the job folder")
    full = (Path(job_dir) / p).resolve()
    if not full.is_relative_to(Path(job_dir).resolve()):
        raise ToolRefused(f"path {name!r}: leads outside the job folder; refused")
    return full


def run_code(code: str, job_dir: Path, kind: str = "python", time_limit: float = 60.0,
             memory_mb: int = 2048, file_mb: int = 256, interpreter: Path | None = None) -> SandboxRun:
    """Run `code` in a worker process confined to `job_dir`; returns what happened."""
    job_dir = Path(job_dir).resolve()
    job_dir.mkdir(parents=True, exist_ok=True)
    script = job_dir / "agent_code.py"
    script.write_text(code)
    exe = interpreter or default_interpreter(kind)
    if not Path(exe).exists():
        raise ToolRefused(f"{exe}: the {kind} interpreter for agent code is missing")
    cpu = int(time_limit) + 1

    def limits() -> None:   # runs in the child before exec
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    env = {"PATH": "/usr/bin:/bin", "HOME": str(job_dir), "TMPDIR": str(job_dir), "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen([str(exe), "-I", "-c", BOOTSTRAP, str(job_dir), script.name], cwd=job_dir, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=limits, text=True, errors="replace")
    timed_out = False
    try:
        out, err = proc.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    files = sorted(str(p.relative_to(job_dir)) for p in job_dir.rglob("*") if p.is_file() and p != script)
    return SandboxRun(job_dir, proc.returncode, out[-20000:], err[-20000:], time.monotonic() - t0, timed_out, files)
