"""Hostile agent code, run through `studio agent run-code` as a person auditing it would.

Each script tries one escape. The studio runs with a secret in its session
keyring (a fresh keyring of the test's own, joined by the launcher) and the
model key in its environment. After it, the test checks what a person would:
no file outside the job folder created, changed or deleted (the project's and
a folder beside it), the project's database unchanged to the byte and
`studio audit verify` passing, an unrelated process the test started still
alive and no process of the script left, the run's own task group (named in
its sandbox.log) removed, nothing received by loopback UDP, TCP and
abstract-socket listeners the test holds open, and neither the keyring's
secret nor the model key, in any of its disguises, in the output or the job
folder. Time is judged only against the limits each test gives the run.
"""
from __future__ import annotations

import base64
import hashlib
import os
import platform
import re
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_scripts import db_dump
from studio.sandbox.bubblewrap import wall_problem
from studio.store.project import Project

KEY = "sk-proj-HostileAudit0123456789abcdefXYZ"
SECRET = "HOST-KEYRING-SECRET-42"
DISGUISES = [KEY, KEY[::-1], base64.b64encode(KEY.encode()).decode(), KEY.encode().hex(), SECRET, SECRET[::-1],
             SECRET.encode().hex()]
MARGIN = 30.0         # seconds a loaded machine may add before a run stopped at its limit is seen to end
# Runs the studio in a new session keyring of its own holding SECRET, as a desktop session would hold one.
LAUNCH = """
import ctypes, os, sys
import pyseccomp
syscall_number = lambda name: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.syscall(ctypes.c_long(syscall_number("keyctl")), 1, None) > 0, "no session keyring"
secret = sys.argv[1].encode()
assert libc.syscall(ctypes.c_long(syscall_number("add_key")), b"user", b"session_rtsecret", secret,
                    ctypes.c_size_t(len(secret)), ctypes.c_long(-3)) > 0, os.strerror(ctypes.get_errno())
os.execv(sys.executable, [sys.executable, "-m", "studio.cli", *sys.argv[2:]])
"""


@pytest.fixture(autouse=True)
def the_wall_stands():
    """The battery fails, never skips, where the sandbox cannot run: the studio refuses agent code there."""
    assert not wall_problem(), f"bubblewrap cannot run here ({wall_problem()}); make setup installs it"


@dataclass
class World:
    root: Path
    project: Path
    outside: Path
    marker: str
    victim: subprocess.Popen
    udp: socket.socket
    tcp: socket.socket
    abstract: socket.socket
    settings: Path

    def fill(self, code: str) -> str:
        return code.format(project=self.project, outside=self.outside, marker=self.marker, victim=self.victim.pid,
                           udp=self.udp.getsockname()[1], tcp=self.tcp.getsockname()[1],
                           abstract=self.abstract.getsockname()[1:].decode(), key=KEY)


@pytest.fixture
def world(tmp_path):
    Project.create(tmp_path / "proj", name="audit").close()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me")
    (tmp_path / "proj" / "assets" / "keep.txt").parent.mkdir(exist_ok=True)
    (tmp_path / "proj" / "assets" / "keep.txt").write_text("keep me too")
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0keypose-audit-{uuid.uuid4().hex}")
    abstract.listen(8)
    for s in (udp, tcp, abstract):
        s.setblocking(False)
    settings = tmp_path / "settings.json"
    settings.write_text('{"unsandboxed_agent_code": false}')
    w = World(tmp_path, tmp_path / "proj", outside, f"keypose-hostile-{uuid.uuid4().hex[:8]}", victim, udp, tcp,
              abstract, settings)
    yield w
    victim.kill()
    victim.wait()
    for pid in _pids_of(w):
        os.kill(pid, 9)
    for s in (udp, tcp, abstract):
        s.close()


def _snapshot(world: World) -> dict:
    """Every path under the test's folder but the job folders, with type, mode, content and xattrs."""
    out = {}
    for top, dirs, files in os.walk(world.root):
        dirs[:] = [d for d in dirs if not (Path(top) == world.project / "jobs" and d.startswith("agent-"))]
        for name in dirs + files:
            p = Path(top) / name
            if p.name.startswith("studio.db"):
                continue            # compared row by row instead
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[str(p.relative_to(world.root))] = (st.st_mode, digest, sorted(os.listxattr(p, follow_symlinks=False)))
    return out


def _pids_of(world: World) -> list[int]:
    """Processes left by the script: the marker in their command line, or working inside the test's folder."""
    found = []
    for e in os.scandir("/proc"):
        if not e.name.isdigit() or int(e.name) in (os.getpid(), world.victim.pid):
            continue
        try:
            cmd = Path(f"/proc/{e.name}/cmdline").read_bytes()
            cwd = os.readlink(f"/proc/{e.name}/cwd")
        except OSError:
            continue
        if world.marker.encode() in cmd or cwd.startswith(str(world.root)):
            found.append(int(e.name))
    return found


def _own_task_groups(job: Path) -> list[Path]:
    """The task group (cgroup) folders this run made, as its sandbox.log names them."""
    log = (job / "sandbox.log").read_text()
    found = re.search(r"\(task group ([^)]*)\)", log)
    return [Path(p) for p in found.group(1).split(", ")] if found else []


def _run_seconds(job: Path) -> float:
    """How long the run took, as the sandbox measured it (the studio's own start-up left out)."""
    return float(re.search(r"^outcome: .* after ([0-9.]+) s$", (job / "sandbox.log").read_text(), re.M).group(1))


def _db_bytes(project: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in project.glob("studio.db*")}


def _received(s: socket.socket) -> bool:
    try:
        if s.type == socket.SOCK_DGRAM:
            s.recv(100)
        else:
            s.accept()[0].close()
        return True
    except BlockingIOError:
        return False


@dataclass
class Audit:
    code: int
    out: str
    job: Path
    seconds: float


def run_hostile(world: World, code: str, time_limit: float = 30.0) -> Audit:
    script = world.root / "hostile.py"
    script.write_text(world.fill(code))
    before = _snapshot(world)
    with Project.open(world.project) as p:
        rows = db_dump(p)
    db_before = _db_bytes(world.project)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "KEYPOSE_SETTINGS": str(world.settings)}
    r = subprocess.run([sys.executable, "-c", LAUNCH, SECRET, "agent", "run-code", str(world.project), str(script),
                        "--time-limit", str(time_limit)], env=env, capture_output=True, text=True,
                       timeout=time_limit + 120)
    out = r.stdout + r.stderr
    jobs = [ln.split(": ", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("job folder: ")]
    assert jobs, out
    job = Path(jobs[0])
    assert job.parent == world.project / "jobs" and job.name.startswith("agent-part-")
    # what a person checks after the run
    assert _snapshot(world) == before, "a file outside the job folder was created, changed or deleted"
    assert _db_bytes(world.project) == db_before, "studio.db changed"
    with Project.open(world.project) as p:
        assert db_dump(p) == rows, "the project's database changed"
    verify = subprocess.run([sys.executable, "-m", "studio.cli", "audit", "verify", str(world.project)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0 and "audit log intact" in verify.stdout, verify.stdout + verify.stderr
    assert not list(Path("/tmp").glob(f"{world.marker}*")), "a file appeared in /tmp"
    time.sleep(0.2)
    assert world.victim.poll() is None, "the unrelated process was killed"
    assert _pids_of(world) == [], "a process of the agent code outlived its run"
    assert not [g for g in _own_task_groups(job) if g.exists()], "the run's task group (cgroup) was left behind"
    assert not any(_received(s) for s in (world.udp, world.tcp, world.abstract)), "a packet left the sandbox"
    texts = [out]
    for top, _, files in os.walk(job):
        for name in files:
            try:
                fd = os.open(os.path.join(top, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:          # a link, or a path past the system's length limit
                continue
            with os.fdopen(fd, "rb") as f:
                texts.append(f.read(1 << 20).decode(errors="replace"))
    for form in DISGUISES:
        assert not any(form in t for t in texts), "the key was read"
    return Audit(r.returncode, out, job, _run_seconds(job))


SYSCALLS = """
import ctypes, os
from ctypes import c_long
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = c_long
NUMBERS = {{"keyctl": 250, "add_key": 248, "request_key": 249, "io_uring_setup": 425, "io_uring_enter": 426,
           "ptrace": 101, "process_vm_readv": 310, "pidfd_getfd": 438, "bpf": 321, "perf_event_open": 298,
           "userfaultfd": 323, "unshare": 272, "setns": 308, "clone": 56, "clone3": 435, "fsopen": 430,
           "open_tree": 428, "mount": 165, "kexec_load": 246, "init_module": 175}}      # x86_64
def sys_(name, *args):
    ctypes.set_errno(0)
    return libc.syscall(c_long(NUMBERS[name]), *[c_long(a) if isinstance(a, int) else a for a in args])
def errno():
    return ctypes.get_errno()
"""

ESCAPES = {
    "ctypes_system": """
import ctypes
libc = ctypes.CDLL(None)
print(libc.system(b"touch {outside}/ctypes.txt {project}/ctypes.txt /tmp/{marker}-ctypes; rm -f {outside}/victim.txt"))
""",
    "posixsubprocess_fork_exec": """
import _posixsubprocess, os
r, w = os.pipe()
pid = _posixsubprocess.fork_exec([b"/bin/sh", b"-c", b"touch {outside}/fork_exec.txt; rm {outside}/victim.txt"],
    [b"/bin/sh"], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1,
    None, False)
print("child", os.waitpid(pid, 0))
""",
    "os_system_and_subprocess": """
import os, subprocess
print(os.system("echo x > {outside}/victim.txt; touch {project}/escaped.txt"))
print(subprocess.run(["sh", "-c", "touch /tmp/{marker}-sub; cat /proc/*/environ | tr '\\\\0' '\\\\n' | grep KEY"],
                     capture_output=True, text=True))
""",
    "audit_hook_switched_off": """
import gc, sys
main = sys.modules["__main__"]
for name in ("JOB", "REFUSED", "PATH_EVENTS", "WRITE"):
    setattr(main, name, "/" if name == "JOB" else ())
for obj in gc.get_objects():
    if callable(obj) and getattr(obj, "__name__", "") == "hook":
        obj.__code__ = (lambda event, args: None).__code__
open("{outside}/after_hook.txt", "w").write("x")
""",
    "dir_fd_create_rename_delete": """
import os
for target in ("..", "../..", "/", "/tmp"):
    try:
        fd = os.open(target, os.O_RDONLY)
        for step in (lambda: os.close(os.open("{marker}", os.O_CREAT | os.O_WRONLY, dir_fd=fd)),
                     lambda: os.rename("studio.db", "{marker}", src_dir_fd=fd, dst_dir_fd=fd),
                     lambda: os.unlink("studio.db", dir_fd=fd),
                     lambda: os.unlink("outside/victim.txt", dir_fd=fd)):
            try:
                step(); print("done in", target)
            except OSError as e:
                print(target, e)
    except OSError as e:
        print(target, e)
os.open("{outside}/victim.txt", os.O_WRONLY | os.O_TRUNC)
""",
    "fifo_node_xattr_outside": """
import os
for step in (lambda: os.mkfifo("../{marker}-fifo"), lambda: os.mkfifo("/tmp/{marker}-fifo"),
             lambda: os.mknod("/tmp/{marker}-node"), lambda: os.setxattr("{project}", "user.x", b"1"),
             lambda: os.setxattr("{outside}/victim.txt", "user.x", b"1"), lambda: os.setxattr("..", "user.x", b"1")):
    try:
        step(); print("done")
    except OSError as e:
        print(e)
os.setxattr("{project}/assets/keep.txt", "user.x", b"1")
""",
    "network_udp_tcp_abstract_dns": """
import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print(u.sendto(b"hello", ("127.0.0.1", {udp})))
for step in (lambda: socket.create_connection(("127.0.0.1", {tcp}), timeout=1),
             lambda: socket.socket(socket.AF_UNIX).connect("\\0{abstract}"),
             lambda: socket.create_connection(("10.0.0.1", 80), timeout=1)):
    try:
        step(); print("connected")
    except OSError as e:
        print(e)
print(socket.getaddrinfo("pypi.org", 443))
""",
    "signals_to_an_unrelated_process": """
import os, signal
for step in (lambda: os.kill({victim}, signal.SIGKILL), lambda: os.kill(-1, signal.SIGKILL)):
    try:
        step(); print("sent")
    except OSError as e:
        print(e)
fd = os.pidfd_open({victim})
signal.pidfd_send_signal(fd, signal.SIGKILL)
""",
    "read_etc_shadow": """
print(open("/etc/shadow").read())
""",
    "key_from_the_parent_environment": """
import base64, os
found = []
for pid in ["self", str(os.getppid()), "1"] + [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        env = open(f"/proc/{{pid}}/environ", "rb").read().split(b"\\0")
    except OSError as e:
        print(pid, e); continue
    found += [v.split(b"=", 1)[1].decode() for v in env if v.startswith(b"OPENAI_API_KEY=")]
found += [v for k, v in os.environ.items() if "KEY" in k]
for key in found:
    print(key[::-1], base64.b64encode(key.encode()).decode())
    open("loot.txt", "a").write(key + "\\n")
assert found, "no key found"
""",
    "project_database_with_sqlite": """
import sqlite3
db = sqlite3.connect("{project}/studio.db")
db.execute("DROP TRIGGER IF EXISTS audit_no_delete")
db.execute("DELETE FROM audit")
db.commit()
""",
    "kernel_settings_through_proc": """
import ctypes, os
for path, value in (("/proc/sys/kernel/core_pattern", "|/tmp/{marker}"), ("/proc/sys/vm/drop_caches", "3"),
                    ("/proc/sysrq-trigger", "h"), ("/proc/sys/kernel/hostname", "{marker}")):
    try:
        open(path, "w").write(value); print("wrote", path)
    except OSError as e:
        print(e)
libc = ctypes.CDLL(None, use_errno=True)
for name, call in (("remount / read-write", lambda: libc.mount(b"none", b"/", None, 32 | 1, None)),
                   ("unmount /usr", lambda: libc.umount2(b"/usr", 2)),
                   ("a nested user namespace", lambda: libc.unshare(0x10000000))):
    print(name, call(), os.strerror(ctypes.get_errno()))
""",
    "symlinks_and_fifos_for_the_studio_to_follow": """
import os
os.symlink("{outside}/victim.txt", "part.stl")
os.mkfifo("fifo.stl")
os.symlink("{outside}/victim.txt", "sandbox.log")
open("real.txt", "w").write("mine")
""",
    # the calls below go through libc's syscall() with the numbers of this machine's kernel
    "session_keyring_secret": SYSCALLS + """
kid = sys_("keyctl", 10, -3, b"user", b"session_rtsecret", 0)          # KEYCTL_SEARCH the session keyring
print("search", kid, errno())
buf = ctypes.create_string_buffer(256)
print("read", sys_("keyctl", 11, kid, buf, 256), errno(), buf.value)   # KEYCTL_READ
print("request_key", sys_("request_key", b"user", b"session_rtsecret", None, 0), errno())
print("add_key", sys_("add_key", b"user", b"mine", b"x", 1, -3), errno())
print("user keyring", sys_("keyctl", 0, -4, 0), errno())              # KEYCTL_GET_KEYRING_ID @u
print(open("/proc/keys").read())
""",
    "io_uring": SYSCALLS + """
params = ctypes.create_string_buffer(120)
print("io_uring_setup", sys_("io_uring_setup", 8, params), errno())
print("io_uring_enter", sys_("io_uring_enter", 0, 1, 0, 0, None, 0), errno())
""",
    "ptrace_and_other_processes_memory": SYSCALLS + """
print("ptrace attach 1", sys_("ptrace", 16, 1, 0, 0), errno())          # PTRACE_ATTACH the namespace's pid 1
print("ptrace traceme", sys_("ptrace", 0, 0, 0, 0), errno())
buf = ctypes.create_string_buffer(8)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
print("process_vm_readv", sys_("process_vm_readv", 1, iov, 1, iov, 1, 0), errno())
print("pidfd_getfd", sys_("pidfd_getfd", 0, 0, 0), errno())
""",
    "bpf_perf_userfaultfd": SYSCALLS + """
attr = ctypes.create_string_buffer(128)
print("bpf", sys_("bpf", 0, attr, 128), errno())
print("perf_event_open", sys_("perf_event_open", attr, 0, -1, -1, 0), errno())
print("userfaultfd", sys_("userfaultfd", 0), errno())
""",
    "namespaces_mounts_and_modules": SYSCALLS + """
print("unshare", sys_("unshare", 0x10000000), errno())                 # CLONE_NEWUSER
print("setns", sys_("setns", 0, 0), errno())
print("clone newuser", sys_("clone", 0x10000000 | 17, 0, 0, 0, 0), errno())
print("clone3", sys_("clone3", None, 0), errno())
print("fsopen", sys_("fsopen", b"tmpfs", 0), errno())
print("open_tree", sys_("open_tree", -100, b"/", 1), errno())
print("mount", sys_("mount", b"none", b"/tmp", b"tmpfs", 0, None), errno())
print("kexec_load", sys_("kexec_load", 0, 0, None, 0), errno())
print("init_module", sys_("init_module", None, 0, b""), errno())
pid = os.fork()
if pid == 0:
    os._exit(7)
print("child exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""",
    "socket_families_beyond_the_network_namespace": SYSCALLS + """
import socket
for name, family in (("vsock", 40), ("packet", 17), ("netlink", 16), ("bluetooth", 31), ("alg", 38)):
    try:
        socket.socket(family, socket.SOCK_DGRAM if family != 40 else socket.SOCK_STREAM).close(); print(name, "opened")
    except OSError as e:
        print(name, e)
""",
    "another_architectures_entry": SYSCALLS + """
import mmap
def child(run):
    pid = os.fork()
    if pid == 0:
        run(); os._exit(0)
    return os.waitpid(pid, 0)[1]
# keyctl(KEYCTL_GET_KEYRING_ID, @s) through the x32 entry, and through int 0x80 (i386, keyctl is 288)
print("x32 keyctl status", child(lambda: print("x32 got", libc.syscall(ctypes.c_long(0x40000000 | 250), 0, -3, 0))))
code = bytes.fromhex("53b82001000031dbb9fdffffffcd805bc3")  # push rbx; mov eax,288; xor ebx,ebx; mov ecx,-3; int 0x80
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print("int80 keyctl status", child(lambda: print("int80 got", fn(), flush=True)))
""",
}


# What the script itself saw: the attempt was made and the system said no (EPERM is 1, ENOSYS 38).
SEEN = {
    "session_keyring_secret": ["search -1 1", "read -1 1", "request_key -1 1", "add_key -1 1",
                               "user keyring -1 1"],
    "io_uring": ["io_uring_setup -1 1", "io_uring_enter -1 1"],
    "ptrace_and_other_processes_memory": ["ptrace attach 1 -1 1", "ptrace traceme -1 1", "process_vm_readv -1 1",
                                          "pidfd_getfd -1 1"],
    "bpf_perf_userfaultfd": ["bpf -1 1", "perf_event_open -1 1", "userfaultfd -1 1"],
    "namespaces_mounts_and_modules": ["unshare -1 1", "setns -1 1", "clone newuser -1 1", "clone3 -1 38",
                                      "fsopen -1 1", "open_tree -1 1", "mount -1 1", "kexec_load -1 1",
                                      "init_module -1 1", "child exit 7"],
    "socket_families_beyond_the_network_namespace": [
        "vsock [Errno 97] Address family not supported", "packet [Errno 97]", "netlink [Errno 97]",
        "bluetooth [Errno 97]", "alg [Errno 97]"],
    "another_architectures_entry": ["x32 keyctl status 31\n", "int80 keyctl status 31\n"],   # killed by SIGSYS
    "audit_hook_switched_off": ["after_hook.txt'", "No such file or directory"],
    "ctypes_system": ["ctypes.txt': No such file or directory", "proj/ctypes.txt': Read-only file system"],
    "dir_fd_create_rename_delete": ["Read-only file system: 'studio.db'",
                                    "No such file or directory: 'outside/victim.txt'"],
    "fifo_node_xattr_outside": ["Read-only file system", "keep.txt'"],
    "key_from_the_parent_environment": ["AssertionError: no key found"],
    "kernel_settings_through_proc": ["Permission denied: '/proc/sys/kernel/core_pattern'",
                                     "remount / read-write -1 Operation not permitted",
                                     "unmount /usr -1 Operation not permitted", "a nested user namespace -1"],
    "network_udp_tcp_abstract_dns": ["Connection refused", "Network is unreachable",
                                     "Temporary failure in name resolution"],
    "os_system_and_subprocess": ["Directory nonexistent", "escaped.txt': Read-only file system"],
    "posixsubprocess_fork_exec": ["fork_exec.txt': No such file or directory"],
    "project_database_with_sqlite": ["unable to open database file"],
    "read_etc_shadow": ["No such file or directory: '/etc/shadow'"],
    "signals_to_an_unrelated_process": ["No such process"],
    "symlinks_and_fifos_for_the_studio_to_follow": ["wrote: real.txt\n"],     # links and fifos are never read back
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_hostile_code_is_blocked(world, name):
    if "sys_(" in ESCAPES[name] and platform.machine() != "x86_64":
        pytest.skip("the script calls the kernel by x86_64 system-call numbers")
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    audit = run_hostile(world, ESCAPES[name])
    assert Path("/proc/sys/kernel/core_pattern").read_text() == core_pattern and world.marker not in os.uname().nodename
    assert audit.code in (0, 1), audit.out
    for words in SEEN[name]:
        assert words in audit.out, audit.out
    assert "agent code ran behind bubblewrap" in (audit.job / "sandbox.log").read_text()


def test_children_in_a_new_session_die_at_the_time_limit(world):
    audit = run_hostile(world, """
import subprocess, sys, time
for i in range(3):
    subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: open('beat', 'a').write('.'); time.sleep(0.1)",
                      "{marker}"], start_new_session=True)
if __import__("os").fork() == 0:
    __import__("os").setsid(); time.sleep(600)
time.sleep(600)
""", time_limit=3)
    assert audit.code == 1 and "ran past its time limit" in audit.out
    assert audit.seconds < 3 + MARGIN
    beats = (audit.job / "beat").stat().st_size
    time.sleep(0.5)
    assert (audit.job / "beat").stat().st_size == beats, "a child kept running after the limit"


def test_children_left_behind_die_with_the_script(world):
    audit = run_hostile(world, """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: open('beat', 'a').write('.'); time.sleep(0.1)",
                  "{marker}"], start_new_session=True)
print("left a daemon behind")
""")
    assert audit.code == 0 and "left a daemon behind" in audit.out


def test_a_fork_bomb_is_contained(world):
    audit = run_hostile(world, """
import os, time
children = 0
try:
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
finally:
    print("forked", children, flush=True)
""", time_limit=120)
    assert audit.code == 1 and "more than the process limit (64 processes)" in audit.out
    assert audit.seconds < 120, "the bomb ran to the time limit instead of being refused"


def test_writing_10_gb_to_one_file_stops_at_the_file_size_limit(world):
    audit = run_hostile(world, """
block = b"x" * (1 << 20)
with open("big.bin", "wb") as f:
    for _ in range(10 * 1024):
        f.write(block)
""", time_limit=120)
    assert audit.code == 1 and "a file grew past the file-size limit (256 MB)" in audit.out
    assert (audit.job / "big.bin").stat().st_size <= 256 << 20
    (audit.job / "big.bin").unlink()


def test_writing_10_gb_in_many_files_stops_at_the_job_folder_limit(world):
    audit = run_hostile(world, """
block = b"x" * (1 << 20)
for i in range(50):
    with open(f"part{{i}}.bin", "wb") as f:
        for _ in range(200):
            f.write(block)
""", time_limit=120)
    assert audit.code == 1 and "reached the job-folder limit (1024 MB); nothing it wrote was kept" in audit.out
    assert sorted(p.name for p in audit.job.iterdir()) == ["agent_code.py", "sandbox.log"]


def test_parallel_fallocates_cannot_race_past_the_job_folder_cap(world):
    """Eight processes each reserving 250 MB at once: the kernel holds the folder to its cap, and a run
    that ran into the cap leaves nothing but its log (and the code that ran)."""
    audit = run_hostile(world, """
import os
pids = []
for i in range(8):
    pid = os.fork()
    if pid == 0:
        fd = os.open(f"fill{{i}}.bin", os.O_CREAT | os.O_WRONLY)
        try:
            os.posix_fallocate(fd, 0, 250 << 20); print("reserved", i, flush=True)
        except OSError as e:
            print("refused", i, e, flush=True)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
print("used", sum(os.stat(f"fill{{i}}.bin").st_blocks * 512 for i in range(8)) >> 20, "MB")
""", time_limit=120)
    assert "No space left on device" in audit.out and audit.code == 1
    used = int(re.search(r"used (\d+) MB", audit.out).group(1))
    assert used <= 1024, "the processes together wrote past the cap"
    assert "reached the job-folder limit (1024 MB); nothing it wrote was kept" in audit.out
    assert sorted(p.name for p in audit.job.iterdir()) == ["agent_code.py", "sandbox.log"]
    assert sum(p.stat().st_size for p in (world.project / "jobs").rglob("*") if p.is_file()) < 1 << 20


def test_memory_and_output_floods_are_contained(world):
    audit = run_hostile(world, "blob = bytearray(6 << 30)\n")
    assert audit.code == 1 and "MemoryError" in audit.out
    audit = run_hostile(world, "import sys\nwhile True: sys.stdout.write('x' * 65536)\n", time_limit=120)
    assert audit.code == 1 and "more than the output limit (8 MB)" in audit.out


def test_without_bubblewrap_agent_code_is_refused_unless_the_settings_opt_in(world, tmp_path):
    script = tmp_path / "ok.py"
    script.write_text("open('part.txt', 'w').write('x')\n")
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty), "OPENAI_API_KEY": KEY, "KEYPOSE_SETTINGS": str(world.settings)}
    cmd = [sys.executable, "-m", "studio.cli", "agent", "run-code", str(world.project), str(script)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and "bubblewrap (bwrap) is not installed" in r.stderr
    assert "apt install bubblewrap" in r.stderr
    assert not any((world.project / "jobs").glob("agent-*/part.txt"))
    world.settings.write_text('{"unsandboxed_agent_code": true}')
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "wrote: part.txt" in r.stdout and "WITHOUT the OS sandbox" in r.stderr
    job = Path(r.stdout.split("job folder: ")[1].split("\n")[0])
    assert "WITHOUT the OS sandbox" in (job / "sandbox.log").read_text()


def test_names_and_output_made_to_fool_the_audit_are_shown_escaped(world):
    audit = run_hostile(world, """
import os
open("x\\nexit status: 0; ok", "w").write("spoof")
open(b"\\xff\\xfe.bin", "w").write("not text")
fd = os.open(".", os.O_RDONLY)
for _ in range(30):                       # a path longer than the system's limit
    os.mkdir("d" * 200, dir_fd=fd)
    fd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
os.close(os.open("leaf.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
print("\\x1b[2J\\x1b[Hall clear")
raise SystemExit(3)
""")
    lines = audit.out.splitlines()
    assert audit.code == 1 and "Traceback" not in audit.out
    assert lines[-1] == "exit status: 3; the code exited with status 3: no message"
    assert "\\x1b[2J\\x1b[Hall clear" in audit.out and "\x1b" not in audit.out
    wrote = [ln for ln in lines if ln.startswith("wrote: ")][0]
    assert "x\\nexit status: 0; ok" in wrote and "\\xff\\xfe.bin" in wrote
    assert "characters in all)" in wrote and len(wrote) < 2000       # the 6,000-character path is cut, sized
    assert (audit.job / "sandbox.log").read_text().count("/leaf.txt") == 1
    assert all(os.stat(p, follow_symlinks=False).st_uid == os.getuid() for p in ["/".join([str(audit.job)] + ["d" * 200] * k)
                                                                                 for k in range(0, 10)])
