"""The system calls agent code may not make: a seccomp filter for bubblewrap's `--seccomp FD`.

The filter is built with libseccomp (through `pyseccomp`, a ctypes binding to
the system's libseccomp2 with the API of libseccomp's own Python bindings),
which knows every architecture's call numbers and writes the BPF program. It
is a deny list, as Flatpak's is: everything a Python program, build123d or
Blender uses is allowed, and the calls below, which such code has no use for
and which reach the kernel's keyrings, its tracing and mounting machinery or
other processes, answer EPERM. Three rules beyond plain names:

* `clone` with any new-namespace flag is refused, and `clone3` (whose flags
  sit in memory a filter cannot read) answers ENOSYS, so the C library falls
  back to `clone`, as it does on older kernels;
* `socket` and `socketpair` open only local, IPv4 and IPv6 sockets (the
  network namespace has no network; other families, vsock among them, are not
  namespaced the same way);
* a call made through another architecture's entry (32-bit `int 0x80`, x32)
  kills the process: the filter speaks only the native one.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys
import tempfile

# (names, why): answered with EPERM. Names this kernel's architecture lacks are skipped.
DENIED = [
    (("keyctl", "add_key", "request_key"), "the kernel's keyrings, where a desktop keeps its secrets"),
    (("io_uring_setup", "io_uring_enter", "io_uring_register"), "io_uring, which bypasses system-call filtering"),
    (("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise"),
     "reading, writing or stealing from other processes"),
    (("bpf", "perf_event_open", "userfaultfd", "lookup_dcookie"), "kernel tracing, BPF programs, fault handling"),
    (("mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
      "open_tree", "mount_setattr", "name_to_handle_at", "open_by_handle_at"), "mounting and file handles"),
    (("unshare", "setns"), "entering or making namespaces"),
    (("kexec_load", "kexec_file_load", "reboot", "init_module", "finit_module", "delete_module", "create_module",
      "query_module", "get_kernel_syms"), "loading kernels and modules"),
    (("swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "iopl", "ioperm", "uselib",
      "ustat", "sysfs", "_sysctl", "nfsservctl", "fanotify_init", "settimeofday", "clock_settime",
      "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "personality"), "the machine's own settings"),
]
CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
             "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
             "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080}
SOCKET_FAMILIES = (1, 2, 10)          # AF_UNIX, AF_INET, AF_INET6
TIOCSTI, TIOCLINUX = 0x5412, 0x541C   # typing into, or reprogramming, a terminal
PERSONALITY_QUERY = 0xFFFFFFFF        # personality(0xffffffff) only reads it: Python's platform module asks


def denied_names() -> list[str]:
    return [name for names, _ in DENIED for name in names]


SONAMES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}


def _lib():
    """pyseccomp, imported with the libraries' usual names tried first: its import looks them up
    with ctypes.util.find_library, which runs ldconfig (a tenth of a second on a busy machine)."""
    if "pyseccomp" in sys.modules:
        return sys.modules["pyseccomp"]
    import ctypes.util
    real = ctypes.util.find_library

    def quick(name: str):
        soname = SONAMES.get(name)
        if soname:
            try:
                ctypes.CDLL(soname)
                return soname
            except OSError:
                pass
        return real(name)
    ctypes.util.find_library = quick
    try:
        import pyseccomp
    finally:
        ctypes.util.find_library = real
    return pyseccomp


def syscall_number(name: str) -> int:
    """The native number of a system call (negative when this architecture has none)."""
    return int(_lib().resolve_syscall(_lib().Arch.NATIVE, name))


def build() -> "object":
    """The filter (a pyseccomp.SyscallFilter), ready to export or load."""
    sc = _lib()
    f = sc.SyscallFilter(sc.ALLOW)
    f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    eperm = sc.ERRNO(errno.EPERM)
    for name in denied_names():
        if syscall_number(name) < 0:
            continue
        if name == "personality":      # reading the personality is harmless; setting one is refused
            f.add_rule(eperm, name, sc.Arg(0, sc.NE, PERSONALITY_QUERY))
        else:
            f.add_rule(eperm, name)
    for flag in CLONE_NEW.values():
        f.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    if syscall_number("clone3") >= 0:
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    nosupport = sc.ERRNO(errno.EAFNOSUPPORT)
    for call in ("socket", "socketpair"):
        for family in [0, *range(3, max(SOCKET_FAMILIES))]:
            if family not in SOCKET_FAMILIES:
                f.add_rule(nosupport, call, sc.Arg(0, sc.EQ, family))
        f.add_rule(nosupport, call, sc.Arg(0, sc.GT, max(SOCKET_FAMILIES)))
    for request in (TIOCSTI, TIOCLINUX):
        f.add_rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    return f


@functools.lru_cache(maxsize=1)
def program() -> bytes:
    """The filter as the BPF program bubblewrap loads (the same bytes every run)."""
    with tempfile.TemporaryFile() as f:
        build().export_bpf(f)
        f.seek(0)
        return f.read()


def program_fd() -> int:
    """A file descriptor holding the program, positioned at its start, for `--seccomp FD`.
    The caller closes it once bubblewrap has started."""
    fd = os.memfd_create("keypose-seccomp", os.MFD_CLOEXEC) if hasattr(os, "memfd_create") else None
    if fd is None:
        f = tempfile.TemporaryFile()
        fd = os.dup(f.fileno())
        f.close()
    os.write(fd, program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def problem() -> str:
    """Why the filter cannot be built here ('' when it can)."""
    try:
        program()
    except (ImportError, RuntimeError, OSError) as e:
        return f"the seccomp filter cannot be built ({e}); install libseccomp2 (Debian: apt install libseccomp2)"
    return ""


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def loader():
    """A function that loads the filter into the calling process (no new privileges first), for a
    child between fork and exec when bubblewrap cannot run; everything is prepared beforehand."""
    code = program()
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

    def load() -> None:
        keep = (buf, prog)        # the program must outlive the call  # noqa: F841
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
                libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "cannot load the seccomp filter")
    return load
