"""Code the agent writes runs here: behind bubblewrap, never in the studio.

A build123d part runs under .venv's Python, a Blender script under the
Blender Python, each inside the wall `bubblewrap.wall_command` builds: its
job folder is the only place it can write and the only part of the project
it can see; it has no network, no key, no view of other processes, a fresh
empty session keyring (`keyring.py`) and a seccomp filter (`seccomp.py`).
Limits: rlimits on address space, CPU time, file size and (for a non-root
studio) process count; a task group (cgroup) on the process count and memory
of the whole tree where the studio may make one; the job folder a tmpfs of
the job-folder cap, so the kernel enforces it; a watch on the folder's
entries and on the output; a wall-clock limit, at which the namespace's first
process is killed and every process in it dies with it.

The job folder on disk holds the code; the tmpfs the code writes in is seen
by the studio through a handle the runner sends over a socket before the
code starts, and its regular files and folders are copied to the folder on
disk once the run has ended (links and special files are left out). A run
that filled its folder to the cap keeps nothing but its log.

Where bubblewrap cannot run, agent code is refused (SandboxMissing) unless
the person opted in with the setting `unsandboxed_agent_code`; such a run
keeps the rlimits, the keyring, the seccomp filter and an audit hook (a
courtesy, not a boundary), writes in the job folder on disk (its size is
watched, not enforced) and its job log says it ran unsandboxed. Every run writes `sandbox.log` in its job folder.
The studio reads back only regular files inside the job folder.
"""
from __future__ import annotations

import array
import os
import resource
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from studio.store.secrets import scrub
from studio.store.shown import shown

from studio.sandbox.bubblewrap import INSTALL_HINT, SANDBOX_UID, bwrap_path, wall_command, wall_problem
from studio.sandbox import job_folder, keyring, seccomp
from studio.sandbox.errors import SandboxMissing, SandboxRefused
from studio.sandbox.task_group import TaskGroup

SCRIPT = "agent_code.py"
LOG = "sandbox.log"
# Before the code: hand the studio a handle on the job folder (the tmpfs), then close the line to it.
RUNNER = ("import os, _socket, sys, array\n"
          "line = _socket.socket(fileno=int(sys.argv[1]))\n"
          "folder = os.open('.', os.O_RDONLY | os.O_DIRECTORY)\n"
          "line.sendmsg([b'job'], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array('i', [folder]))])\n"
          "os.close(folder); line.close(); del line, folder, os, _socket, array\n"
          "import runpy; sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')")
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
    left_out: dict[str, int] = field(default_factory=dict)   # links, fifos... not brought back, by kind

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
        return f"the code exited with status {self.returncode}: " + (shown(tail[0]) if tail else "no message")

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
    """A new job folder under the project's jobs/, made without following a link on the way."""
    from studio.store.beneath import open_folder
    jobs = open_folder(Path(project_dir), "jobs", create=True)
    try:
        name = f"agent-{label}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        os.mkdir(name, 0o755, dir_fd=jobs)
    finally:
        os.close(jobs)
    return Path(project_dir) / "jobs" / name


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
    os.chmod(job_dir, 0o755)                  # the sandbox user reads the code from here
    fd = os.open(job_dir / SCRIPT, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as f:
        os.fchmod(fd, 0o644)
        f.write(code)
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
    keyring.prepare()
    filter_fd = seccomp.program_fd() if walled else None
    load_filter = None if walled or seccomp.problem() else seccomp.loader()
    host_end, code_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) if walled else (None, None)
    if walled:
        argv = [str(exe), "-I", "-B", "-c", RUNNER, str(code_end.fileno()), SCRIPT]
        cmd = wall_command(bwrap_path() or "bwrap", exe, job_dir, argv, env, job_bytes=job_mb << 20, script=SCRIPT,
                           seccomp_fd=filter_fd)
        cwd, child_env, fds = "/", {"PATH": env["PATH"]}, (code_end.fileno(), filter_fd)
    else:
        cmd, cwd, child_env, fds = [str(exe), "-I", "-c", BOOTSTRAP, str(job_dir), SCRIPT], job_dir, env, ()
    nproc = _own_tasks(SANDBOX_UID if os.geteuid() == 0 else os.getuid()) + max_processes
    group = TaskGroup.make(max_processes, memory_mb << 20)

    def limits() -> None:   # runs in the child before exec
        keyring.join_fresh()
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if group is not None:
            group.join()
        if load_filter is not None:
            load_filter()

    t0 = time.monotonic()
    folder = Folder(job_mb)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            try:
                proc = subprocess.Popen(cmd, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=err, preexec_fn=limits, start_new_session=True, pass_fds=fds)
            except subprocess.SubprocessError as e:      # the keyring could not be joined: refuse, run nothing
                raise SandboxRefused(f"agent code was not started: {e}; the studio will not run it with the "
                                     f"keyring of the process that started it") from None
            finally:
                for fd in (filter_fd, code_end.fileno() if code_end else None):
                    if fd is not None:
                        os.close(fd)
                if code_end is not None:
                    code_end.detach()
        except BaseException:
            if group is not None:
                group.remove()
            if host_end is not None:
                host_end.close()
            raise
        try:
            timed_out, stopped = _watch(proc, out, err, job_dir, t0, time_limit, job_mb, output_mb, host_end,
                                        folder)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)      # bwrap; its namespace's processes die with it
            if group is not None:
                group.kill()
            proc.wait()
            if host_end is not None:
                host_end.close()
        seconds = time.monotonic() - t0
        rc = proc.returncode
        if walled and rc > 128:                  # bwrap reports a signal death as 128 + the signal
            rc = -(rc - 128)
        stderr = _tail(err)
        try:
            if walled:
                kept_out = folder.bring_back(job_dir, stderr + _tail(out))
                files, largest = folder.copied.files, folder.largest
            else:
                kept_out = ""
                files, largest = job_folder.regular_files(job_dir, skip=(SCRIPT, LOG)), _largest_file(job_dir)
        finally:
            folder.close()
        if not stopped and not timed_out:
            stopped = kept_out or _limit_met(rc, stderr, largest, group, memory_mb, file_mb, cpu, max_processes)
        if group is not None:
            group.remove()
        run = SandboxRun(job_dir, rc, _tail(out), stderr, seconds, timed_out, files, walled, stopped,
                         dict(folder.copied.left_out))
    _write_log(run, group, time_limit, memory_mb, file_mb, job_mb, max_processes)
    return run


class Folder:
    """The run's tmpfs job folder, seen from the studio through the handle the runner sent before
    the code started; its contents are copied to the job folder on disk when the run has ended."""

    FULL_SHARE = 32               # within 1/32 of the cap, seen while watching or at the end: it ran into it
    NO_SPACE = os.strerror(28)    # "No space left on device": a write the kernel refused at the cap

    def __init__(self, job_mb: int):
        self.job_mb = job_mb
        self.fd: int | None = None
        self.copied = job_folder.Copied()
        self.largest = 0
        self.was_full = False

    def receive(self, sock: socket.socket) -> None:
        """Take the one folder handle the runner sends; anything else is dropped."""
        try:
            _, ancillary, _, _ = sock.recvmsg(16, socket.CMSG_SPACE(4 * array.array("i").itemsize * 4))
        except OSError:
            return
        fds = array.array("i")
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        for fd in fds:
            if self.fd is None and self._is_the_job_tmpfs(fd):
                self.fd = fd
            else:
                os.close(fd)

    def _is_the_job_tmpfs(self, fd: int) -> bool:
        try:
            st, vfs = os.fstat(fd), os.fstatvfs(fd)
        except OSError:
            return False
        size = vfs.f_blocks * vfs.f_frsize
        page = os.sysconf("SC_PAGE_SIZE")
        return stat.S_ISDIR(st.st_mode) and size == -(-(self.job_mb << 20) // page) * page

    def entries(self) -> int:
        """Entries in the folder now (and a note of whether it is at the cap)."""
        if self.fd is None:
            return 0
        vfs = os.fstatvfs(self.fd)
        self.was_full = self.was_full or self._full(vfs)
        return max(0, vfs.f_files - vfs.f_ffree - 1)

    def _full(self, vfs) -> bool:
        return vfs.f_bavail * vfs.f_frsize < max(1 << 20, (self.job_mb << 20) // self.FULL_SHARE)

    def bring_back(self, job_dir: Path, output: str = "") -> str:
        """Copy the run's files out ('' when done), or the limit that keeps them in (nothing copied)."""
        if self.fd is None:
            return ""
        entries, _, deep, self.largest = job_folder.measure(self.fd)
        if self.was_full or self._full(os.fstatvfs(self.fd)) or self.NO_SPACE in output:
            return (f"its job folder reached the job-folder limit ({self.job_mb} MB); nothing it wrote was kept "
                    f"(the kernel refused every byte past the limit)")
        if entries > MAX_FILES:
            return f"it made more than {MAX_FILES} files in its job folder; nothing it wrote was kept"
        if deep:
            return (f"it nested folders deeper than {job_folder.MAX_DEPTH} levels in its job folder; "
                    f"nothing it wrote was kept")
        staging = Path(tempfile.mkdtemp(dir=job_dir, prefix=".copy-"))
        try:
            self.copied = job_folder.copy_out(self.fd, staging, skip=(SCRIPT, LOG))
            for entry in sorted(os.listdir(staging)):
                os.rename(staging / entry, job_dir / entry)
        except OSError as e:
            self.copied = job_folder.Copied()
            return f"its files could not be copied out of the sandbox ({e.strerror or e}); nothing was kept"
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return ""

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _watch(proc: subprocess.Popen, out, err, job_dir: Path, t0: float, time_limit: float, job_mb: int,
           output_mb: int, handshake: socket.socket | None, folder: Folder) -> tuple[bool, str]:
    """Wait for the run to end; (timed out, the limit that stopped it) when it has to be stopped first."""
    try:
        exited = os.pidfd_open(proc.pid)      # readable the moment the process ends
    except (OSError, AttributeError):         # a kernel before 5.3: poll instead
        exited = None
    try:
        while True:
            waiting = [w for w in (exited, handshake) if w is not None]
            if exited is None:
                time.sleep(0.02)
            ready = select.select(waiting, [], [], 0.05)[0] if waiting else []
            if handshake is not None and handshake in ready:
                folder.receive(handshake)
                handshake = None
            if proc.poll() is not None:
                return False, ""
            if time.monotonic() - t0 > time_limit:
                return True, ""
            if handshake is None and folder.fd is None:       # unsandboxed: the folder on disk
                used, entries, deep = job_folder.usage(job_dir, MAX_FILES)
                if used > job_mb << 20:
                    return False, f"its job folder grew past the job-folder limit ({job_mb} MB)"
                if deep:
                    return False, f"it nested folders deeper than {job_folder.MAX_DEPTH} levels in its job folder"
            else:
                entries = folder.entries()
            if entries > MAX_FILES:
                return False, f"it made more than {MAX_FILES} files in its job folder"
            if max(os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size) > output_mb << 20:
                return False, f"it printed more than the output limit ({output_mb} MB)"
    finally:
        if exited is not None:
            os.close(exited)


def _limit_met(rc: int, stderr: str, largest: int, group: TaskGroup | None, memory_mb: int, file_mb: int,
               cpu: int, max_processes: int) -> str:
    """The limit a finished run ran into, in words ('' when none)."""
    if -rc in SIGNALS:
        return SIGNALS[signal.Signals(-rc)].format(file_mb=file_mb, cpu=cpu)
    if group is not None and group.hit_memory_limit():
        return f"its processes used more than the memory limit ({memory_mb} MB) and were killed"
    if rc != 0 and largest >= file_mb << 20:
        return SIGNALS[signal.SIGXFSZ].format(file_mb=file_mb)     # Python ignores SIGXFSZ: EFBIG
    if (rc != 0 and "fork" in stderr and "Resource temporarily unavailable" in stderr) or \
            (group is not None and group.hit_process_limit()):
        return f"it tried to start more than the process limit ({max_processes} processes)"
    return ""


def _write_log(run: SandboxRun, group: TaskGroup | None, time_limit: float, memory_mb: int, file_mb: int, job_mb: int,
               max_processes: int) -> None:
    how = ("behind bubblewrap (namespaces: user pid ipc uts net cgroup; read-only root; no network; seccomp "
           "filter; a fresh session keyring; the job folder a tmpfs of the job-folder cap)" if run.walled
           else "WITHOUT the OS sandbox: bubblewrap cannot run here and the settings allow unsandboxed_agent_code")
    grouped = f"task group {', '.join(map(str, group.dirs.values()))}" if group else \
        "rlimits only; no task group could be made"
    lines = [f"agent code ran {how}",
             f"limits: {time_limit:g} s wall clock, {memory_mb} MB memory, {file_mb} MB per file, "
             f"{job_mb} MB job folder, {max_processes} processes "
             f"({grouped})",
             f"outcome: {'ok' if run.ok else run.failure()} after {run.seconds:.2f} s",
             f"files: {', '.join(run.files) or 'none'}"]
    if run.left_out:
        lines.append("left out (never copied out of the sandbox): "
                     + ", ".join(f"{n} {kind}" for kind, n in sorted(run.left_out.items())))
    try:
        (run.job_dir / LOG).unlink(missing_ok=True)      # the code may have left a link here
        fd = os.open(run.job_dir / LOG, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(scrub("\n".join(lines)) + "\n")
    except OSError:
        pass
    if not run.walled:
        print(f"studio: warning: {lines[0]} ({run.job_dir / LOG})", file=sys.stderr)
