"""Code the agent writes runs here: behind bubblewrap, never in the studio.

A build123d part runs under .venv's Python, a Blender script under the
Blender Python, each inside the wall `bubblewrap.wall_command` builds: its
job folder is the only place it can write and the only part of the project
it can see; it has no network, no key, no view of other processes. Limits:
rlimits on address space, CPU time, file size and (for a non-root studio)
process count; a task group (cgroup) on the process count and memory of the
whole tree where the studio may make one; a watch on the job folder's total
size and on the output; a wall-clock limit, at which the namespace's first
process is killed and every process in it dies with it.

Where bubblewrap cannot run, agent code is refused (SandboxMissing) unless
the person opted in with the setting `unsandboxed_agent_code`; such a run
keeps the rlimits and an audit hook (a courtesy, not a boundary) and its job
log says it ran unsandboxed. Every run writes `sandbox.log` in its job folder.
The studio reads back only regular files inside the job folder.
"""
from __future__ import annotations

import os
import resource
import select
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from studio.store.secrets import scrub

from studio.sandbox.bubblewrap import INSTALL_HINT, SANDBOX_UID, bwrap_path, hand_over, take_back, wall_command, wall_problem
from studio.sandbox import job_folder
from studio.sandbox.errors import SandboxMissing, SandboxRefused
from studio.sandbox.task_group import TaskGroup

SCRIPT = "agent_code.py"
LOG = "sandbox.log"
RUNNER = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
MAX_OUTPUT = 20_000           # characters of stdout and stderr kept, from the end
MAX_FILES = 20_000            # entries in a job folder before the run is stopped

# Without bubblewrap (the person opted in) an audit hook refuses the obvious escapes; it is no boundary.
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

SIGNALS = {signal.SIGXFSZ: "a file grew past the file-size limit ({file_mb} MB)",
           signal.SIGXCPU: "it used up its CPU-time limit ({cpu} s)"}


@dataclass
class SandboxRun:
    job_dir: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    files: list[str] = field(default_factory=list)
    walled: bool = True
    stopped: str = ""             # the limit that stopped the run, in words ('' when none did)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.stopped

    def failure(self) -> str:
        """Why the run failed, in a line or two for the agent and the person."""
        if self.timed_out:
            return f"the code ran past its time limit ({self.seconds:.1f} s) and was stopped"
        if self.stopped:
            return f"the code was stopped: {self.stopped}"
        if self.returncode < 0:
            return f"the code was killed by signal {-self.returncode} (a limit was exceeded)"
        tail = [ln for ln in self.stderr.strip().splitlines() if ln.strip()][-1:]
        return f"the code exited with status {self.returncode}: " + (tail[0] if tail else "no message")

    def read_bytes(self, name: str) -> bytes:
        """A regular file the code wrote at the top of its job folder, never through a link."""
        if name not in self.files or "/" in name or job_folder.shown(name) != name:
            raise SandboxRefused(f"{name}: the code wrote no such regular file in its job folder")
        fd = os.open(self.job_dir / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SandboxRefused(f"{name}: not a regular file")
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read()
        finally:
            os.close(fd)


def default_interpreter(kind: str, settings: dict | None = None) -> Path:
    root = Path(__file__).resolve().parents[2]
    if kind == "python":
        return Path(sys.executable)
    if kind == "blender":
        custom = (settings or {}).get("blender_python")
        return Path(custom) if custom else root / ".venv-blender" / "bin" / "python"
    raise SandboxRefused(f"code kind {kind!r}: expected 'python' (build123d) or 'blender'")


def new_job_dir(project_dir: Path, label: str = "code") -> Path:
    job = Path(project_dir) / "jobs" / f"agent-{label}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    job.mkdir(parents=True)
    return job


def inside_job(job_dir: Path, name: str) -> Path:
    """The path of `name` in the job folder; refuses absolute paths and '..' escapes."""
    p = Path(name)
    if p.is_absolute() or not name.strip():
        raise SandboxRefused(f"path {name!r}: expected a relative path inside the job folder")
    full = (Path(job_dir) / p).resolve()
    if not full.is_relative_to(Path(job_dir).resolve()):
        raise SandboxRefused(f"path {name!r}: leads outside the job folder; refused")
    return full


def _largest_file(job_dir: Path) -> int:
    return max((st.st_size for _, _, _, st in job_folder.walk(job_dir) if stat.S_ISREG(st.st_mode)), default=0)


def _own_tasks(uid: int) -> int:
    """Processes and threads of `uid` now: RLIMIT_NPROC counts them all."""
    count = 0
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                if e.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{e.name}/task"))
            except OSError:
                pass
    return count


def _tail(f) -> str:
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - 4 * MAX_OUTPUT))
    return scrub(f.read().decode(errors="replace"))[-MAX_OUTPUT:]


def run_code(code: str, job_dir: Path, kind: str = "python", time_limit: float = 60.0,
             memory_mb: int = 2048, file_mb: int = 256, interpreter: Path | None = None,
             job_mb: int = 1024, max_processes: int = 64, output_mb: int = 8,
             settings: dict | None = None) -> SandboxRun:
    """Run `code` behind the wall, confined to `job_dir`; returns what happened."""
    job_dir = Path(job_dir).resolve()
    job_dir.mkdir(parents=True, exist_ok=True)
    script = job_dir / SCRIPT
    script.write_text(code)
    exe = Path(interpreter or default_interpreter(kind, settings))
    if not exe.exists():
        raise SandboxRefused(f"{exe}: the {kind} interpreter for agent code is missing")
    problem = wall_problem()
    if problem:
        if settings is None:
            from studio.store.settings import load_settings
            settings = load_settings()
        if not settings.get("unsandboxed_agent_code"):
            raise SandboxMissing(f"{problem}; {INSTALL_HINT}")
    walled = not problem
    cpu = int(time_limit) + 1
    env = {"PATH": "/usr/bin:/bin", "HOME": str(job_dir), "TMPDIR": str(job_dir), "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if walled:
        argv = [str(exe), "-I", "-B", "-c", RUNNER, SCRIPT]
        cmd = wall_command(bwrap_path() or "bwrap", exe, job_dir, argv, env)
        cwd, child_env = "/", {"PATH": env["PATH"]}
    else:
        cmd, cwd, child_env = [str(exe), "-I", "-c", BOOTSTRAP, str(job_dir), SCRIPT], job_dir, env
    nproc = _own_tasks(SANDBOX_UID if os.geteuid() == 0 else os.getuid()) + max_processes
    if walled:
        hand_over(job_dir)
    group = TaskGroup.make(max_processes, memory_mb << 20)

    def limits() -> None:   # runs in the child before exec
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if group is not None:
            group.join()

    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    preexec_fn=limits, start_new_session=True)
        except BaseException:
            if group is not None:
                group.remove()
            if walled:
                take_back(job_dir)
            raise
        try:
            timed_out, stopped = _watch(proc, out, err, job_dir, t0, time_limit, job_mb, output_mb)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)      # bwrap; its namespace's processes die with it
            if group is not None:
                group.kill()
            proc.wait()
        seconds = time.monotonic() - t0
        if walled:
            take_back(job_dir)
        rc = proc.returncode
        if walled and rc > 128:                  # bwrap reports a signal death as 128 + the signal
            rc = -(rc - 128)
        stderr = _tail(err)
        if not stopped and not timed_out:
            stopped = _limit_met(rc, stderr, job_dir, group, memory_mb, file_mb, cpu, max_processes)
        if group is not None:
            group.remove()
        run = SandboxRun(job_dir, rc, _tail(out), stderr, seconds, timed_out,
                         job_folder.regular_files(job_dir, skip=(SCRIPT, LOG)), walled, stopped)
    _write_log(run, group is not None, time_limit, memory_mb, file_mb, job_mb, max_processes)
    return run


def _watch(proc: subprocess.Popen, out, err, job_dir: Path, t0: float, time_limit: float, job_mb: int,
           output_mb: int) -> tuple[bool, str]:
    """Wait for the run to end; (timed out, the limit that stopped it) when it has to be stopped first."""
    try:
        exited = os.pidfd_open(proc.pid)      # readable the moment the process ends
    except (OSError, AttributeError):         # a kernel before 5.3: poll instead
        exited = None
    try:
        while True:
            if exited is None:
                time.sleep(0.02)
            else:
                select.select([exited], [], [], 0.05)
            if proc.poll() is not None:
                return False, ""
            if time.monotonic() - t0 > time_limit:
                return True, ""
            used, entries, deep = job_folder.usage(job_dir, MAX_FILES)
            if used > job_mb << 20:
                return False, f"its job folder grew past the job-folder limit ({job_mb} MB)"
            if entries > MAX_FILES:
                return False, f"it made more than {MAX_FILES} files in its job folder"
            if deep:
                return False, f"it nested folders deeper than {job_folder.MAX_DEPTH} levels in its job folder"
            if max(os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size) > output_mb << 20:
                return False, f"it printed more than the output limit ({output_mb} MB)"
    finally:
        if exited is not None:
            os.close(exited)


def _limit_met(rc: int, stderr: str, job_dir: Path, group: TaskGroup | None, memory_mb: int, file_mb: int,
               cpu: int, max_processes: int) -> str:
    """The limit a finished run ran into, in words ('' when none)."""
    if -rc in SIGNALS:
        return SIGNALS[signal.Signals(-rc)].format(file_mb=file_mb, cpu=cpu)
    if group is not None and group.hit_memory_limit():
        return f"its processes used more than the memory limit ({memory_mb} MB) and were killed"
    if rc != 0 and _largest_file(job_dir) >= file_mb << 20:
        return SIGNALS[signal.SIGXFSZ].format(file_mb=file_mb)     # Python ignores SIGXFSZ: EFBIG
    if (rc != 0 and "fork" in stderr and "Resource temporarily unavailable" in stderr) or \
            (group is not None and group.hit_process_limit()):
        return f"it tried to start more than the process limit ({max_processes} processes)"
    return ""


def _write_log(run: SandboxRun, grouped: bool, time_limit: float, memory_mb: int, file_mb: int, job_mb: int,
               max_processes: int) -> None:
    how = ("behind bubblewrap (namespaces: user pid ipc uts net cgroup; read-only root; no network)" if run.walled
           else "WITHOUT the OS sandbox: bubblewrap cannot run here and the settings allow unsandboxed_agent_code")
    lines = [f"agent code ran {how}",
             f"limits: {time_limit:g} s wall clock, {memory_mb} MB memory, {file_mb} MB per file, "
             f"{job_mb} MB job folder, {max_processes} processes "
             f"({'task group' if grouped else 'rlimits only; no task group could be made'})",
             f"outcome: {'ok' if run.ok else run.failure()} after {run.seconds:.2f} s",
             f"files: {', '.join(run.files) or 'none'}"]
    try:
        (run.job_dir / LOG).unlink(missing_ok=True)      # the code may have left a link here
        fd = os.open(run.job_dir / LOG, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(scrub("\n".join(lines)) + "\n")
    except OSError:
        pass
    if not run.walled:
        print(f"studio: warning: {lines[0]} ({run.job_dir / LOG})", file=sys.stderr)
