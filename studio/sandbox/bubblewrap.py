"""The OS wall around agent code: the bubblewrap command line, and whether it can run.

The code runs in new user, PID, IPC, UTS, network and cgroup namespaces (no
network at all: the namespace has only its own loopback), with a read-only
root holding only what the interpreter needs (the system's /usr and /lib*,
a few files of /etc, the interpreter's venv and prefix), its job folder the
one writable place, a fresh /proc that shows only the sandbox, a clean
environment, every capability dropped, no new privileges, no nested user
namespaces, its own session, and SIGKILL when the studio goes away. When the
studio runs as root the code runs as uid 65534 (see `wall_command`). The
rlimits and the task group (cgroup) cap what it may use.

The job folder the code sees is a tmpfs of the job-folder cap (`--size`), so
the kernel refuses the byte past it however many processes race to write;
the code itself is bound read-only into it. A seccomp filter (`seccomp.py`)
is loaded last, just before the code starts.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives", "fonts")
SANDBOX_UID = 65534
INSTALL_HINT = ("agent code runs only behind bubblewrap: install it (Debian/Ubuntu: sudo apt install bubblewrap) "
                "and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu "
                "24.04 also kernel.apparmor_restrict_unprivileged_userns=0), or opt in to running agent code "
                "without it by setting \"unsandboxed_agent_code\": true in the settings")


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def interpreter_roots(exe: Path) -> list[Path]:
    """The folders an interpreter needs: its venv, its base prefix, or a frozen app's own folder."""
    exe = Path(os.path.abspath(exe))
    found: list[Path] = []
    cfg = exe.parent.parent / "pyvenv.cfg"
    if cfg.is_file():
        found.append(exe.parent.parent)
        for line in cfg.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                found.append(Path(value.strip()).parent)
    real = exe.resolve()
    found.append(real.parent.parent if real.parent.name == "bin" else real.parent)
    if getattr(sys, "frozen", False):
        found.append(Path(sys.executable).resolve().parent)
    roots: list[Path] = []
    for root in (p.resolve() for p in found):
        if not root.is_dir() or any(root.is_relative_to(s) for s in SYSTEM_DIRS if Path(s).is_dir()):
            continue
        if root != Path("/") and not any(root.is_relative_to(r) for r in roots):
            roots = [r for r in roots if not r.is_relative_to(root)] + [root]
    return roots


def _view(exe: Path, job_dir: Path, job_bind: str | None = "--bind") -> list[str]:
    """Mounts of what the code may see: the system, the interpreter (read-only), its job folder
    (bound with `job_bind`, or left for the caller to mount when None)."""
    view: list[str] = []
    made: set[str] = set()

    def parents(path: Path) -> None:       # folders on the way, open to the sandbox user
        for p in reversed(path.parents[:-1]):
            if str(p) not in made and not any(p.is_relative_to(d) for d in SYSTEM_DIRS):
                made.add(str(p))
                view.extend(["--perms", "0755", "--dir", str(p)])
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            view += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            view += ["--ro-bind", d, d]
    view += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FILES:
        view += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    view += ["--perms", "0755", "--dir", "/tmp"]
    made.add("/tmp")
    for root in interpreter_roots(exe):
        parents(root)
        view += ["--ro-bind", str(root), str(root)]
    parents(job_dir)
    return view + ([job_bind, str(job_dir), str(job_dir)] if job_bind else [])


def _job_mount(job_dir: Path, job_bytes: int | None, script: str | None) -> list[str]:
    """The job folder inside: a tmpfs of `job_bytes` holding the code read-only, or the folder itself."""
    job = str(job_dir)
    if job_bytes is None:
        return ["--bind", job, job]
    mount = ["--size", str(int(job_bytes)), "--perms", "0755", "--tmpfs", job]
    if script:
        mount += ["--ro-bind", f"{job}/{script}", f"{job}/{script}"]
    return mount


def wall_command(bwrap: str, exe: Path, job_dir: Path, argv: list[str], env: dict[str, str],
                 job_bytes: int | None = None, script: str | None = None, seccomp_fd: int | None = None) -> list[str]:
    """The command that runs `argv` (starting with `exe`) confined to `job_dir`.

    With `job_bytes` the job folder inside is a tmpfs of that size (the code
    at `job_dir/script` bound read-only into it) instead of the folder on disk;
    with `seccomp_fd` bubblewrap loads the BPF program read from that handle.

    Run by root, an outer bwrap (root, its own PID namespace) lays out the view,
    then setpriv drops to uid 65534 with no capability, and the inner, unprivileged
    bwrap makes the sandbox from that view: the sandbox's processes are 65534 on
    the host too, so the kernel counts them for RLIMIT_NPROC and root's files stay
    root's. An unprivileged bwrap cannot reach a path below a folder closed to
    others (root's home), which is why the outer one lays out the view.
    """
    job = str(job_dir)
    sandbox = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               "--hostname", "sandbox"]
    tail = ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", *_job_mount(job_dir, job_bytes, script),
            "--chdir", job, "--remount-ro", "/"]
    if seccomp_fd is not None:
        tail += ["--seccomp", str(seccomp_fd)]
    tail += ["--clearenv"]
    for key, value in env.items():
        tail += ["--setenv", key, value]
    tail += ["--", *argv]
    if os.geteuid() != 0:
        return [*sandbox, *_view(exe, job_dir, job_bind=None), *tail]
    view = _view(exe, job_dir, "--bind" if job_bytes is None else "--ro-bind")
    outer = [bwrap, "--unshare-pid", "--die-with-parent", *view, "--bind", "/proc", "/proc", "--dev", "/dev",
             "--remount-ro", "/", "--", shutil.which("setpriv") or "/usr/bin/setpriv", "--reuid", str(SANDBOX_UID),
             "--regid", str(SANDBOX_UID), "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
             "--no-new-privs", "--"]
    return [*outer, *sandbox, "--ro-bind", "/", "/", *tail]


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str, euid: int) -> str:
    """Run /usr/bin/true behind the whole wall (tmpfs job folder, seccomp filter) once."""
    from studio.sandbox import seccomp
    problem = seccomp.problem()
    if problem:
        return problem
    fd = seccomp.program_fd()
    try:
        with tempfile.TemporaryDirectory(prefix="keypose-probe-") as tmp:
            os.chmod(tmp, 0o755)                 # the sandbox user reads the code bound from here
            Path(tmp, "probe").write_text("")
            cmd = wall_command(bwrap, Path("/usr/bin/true"), Path(tmp), ["/usr/bin/true"], {}, job_bytes=1 << 20,
                               script="probe", seccomp_fd=fd)
            try:
                r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20,
                                   pass_fds=(fd,))
            except (OSError, subprocess.TimeoutExpired) as e:
                return f"{bwrap} could not start ({e})"
    finally:
        os.close(fd)
    return "" if r.returncode == 0 else f"{bwrap} refused to make the sandbox ({r.stderr.strip()[:200]})"


def wall_problem() -> str:
    """Why bubblewrap cannot run here ('' when it can)."""
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    return _probe(bwrap, os.geteuid())
