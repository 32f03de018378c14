"""A fresh, empty session keyring for agent code, joined before bubblewrap starts.

A process inherits its parent's session keyring, and on a desktop that
keyring often links the user's: whatever a login, an SSH agent or a secret
service put there would be one `keyctl` away from agent code. The child that
becomes bubblewrap joins a new anonymous session keyring first
(KEYCTL_JOIN_SESSION_KEYRING with no name), so the code starts with an empty
one; the seccomp filter then refuses the keyring calls altogether.
"""
from __future__ import annotations

import ctypes
import functools
import os

KEYCTL_JOIN_SESSION_KEYRING = 1


@functools.lru_cache(maxsize=1)
def _call():
    """(libc's syscall function, the keyctl number), resolved once in the parent (not after fork)."""
    from studio.sandbox.seccomp import syscall_number
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall, syscall_number("keyctl")


def prepare() -> None:
    """Resolve what `join_fresh` needs, so that the child after fork only makes the call."""
    _call()


def join_fresh() -> int:
    """Join a new, empty session keyring; returns its serial. OSError when the kernel refuses
    (a kernel without keyrings, ENOSYS, has none to leak and is not an error)."""
    syscall, nr = _call()
    serial = syscall(ctypes.c_long(nr), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_void_p(None))
    if serial < 0:
        err = ctypes.get_errno()
        if err == 38:        # ENOSYS
            return 0
        raise OSError(err, f"cannot join a fresh session keyring ({os.strerror(err)})")
    return serial
