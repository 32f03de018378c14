"""A cgroup around one run of agent code: a cap on its process count and memory.

Rlimits cap each process; a cgroup caps the whole tree, and it is the only
process-count limit that holds for root (the kernel exempts root from
RLIMIT_NPROC). A group is made below the studio's own cgroup when the studio
may (root, or a delegated cgroup v2), in the v1 `pids` and `memory`
hierarchies or in the v2 one; otherwise there is none and the run relies on
its rlimits, which the job log says.
"""
from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


def _own_cgroups() -> dict[str, str]:
    """{controller or '' for v2: path} of the studio's own process."""
    out = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            for name in names.split(",") if names else [""]:
                out[name] = path
    except (OSError, ValueError):
        pass
    return out


class TaskGroup:
    """The folders of one run's cgroup(s); `join` from the child before exec."""

    def __init__(self, dirs: dict[str, Path], v2: bool):
        self.dirs, self.v2 = dirs, v2

    @classmethod
    def make(cls, max_processes: int, memory_bytes: int) -> "TaskGroup | None":
        own = _own_cgroups()
        name = f"keypose-sandbox-{uuid.uuid4().hex[:10]}"
        made: dict[str, Path] = {}
        try:
            if (ROOT / "cgroup.controllers").exists() and "" in own:
                d = ROOT / own[""].lstrip("/") / name
                d.mkdir()
                made[""] = d
                (d / "pids.max").write_text(str(max_processes))
                (d / "memory.max").write_text(str(memory_bytes))
                (d / "memory.swap.max").write_text("0")
                return cls(made, v2=True)
            for ctl, limit_file, value in (("pids", "pids.max", max_processes),
                                           ("memory", "memory.limit_in_bytes", memory_bytes)):
                if ctl not in own or not (ROOT / ctl).is_dir():
                    raise OSError(f"no {ctl} cgroup")
                d = ROOT / ctl / own[ctl].lstrip("/") / name
                d.mkdir()
                made[ctl] = d
                (d / limit_file).write_text(str(value))
            return cls(made, v2=False)
        except OSError:
            cls(made, v2=False).remove()
            return None

    def join(self) -> None:
        """Move the calling process into the group (its children follow)."""
        for d in self.dirs.values():
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs.values():
            try:
                out.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return out

    def kill(self) -> None:
        """SIGKILL everything left in the group."""
        for _ in range(20):
            left = self.pids()
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _read(self, ctl: str, name: str) -> str:
        d = self.dirs.get("" if self.v2 else ctl)
        try:
            return (d / name).read_text() if d else ""
        except OSError:
            return ""

    def hit_process_limit(self) -> bool:
        events = self._read("pids", "pids.events")
        return any(ln.split()[0] == "max" and int(ln.split()[1]) > 0 for ln in events.splitlines() if ln.strip())

    def hit_memory_limit(self) -> bool:
        if self.v2:
            events = dict(ln.split() for ln in self._read("memory", "memory.events").splitlines() if ln.strip())
            return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0
        control = dict(ln.split() for ln in self._read("memory", "memory.oom_control").splitlines() if ln.strip())
        return int(control.get("oom_kill", 0)) > 0

    def remove(self) -> None:
        """Kill what is left and remove the group, waiting up to a second for killed processes to go."""
        left = dict(self.dirs)
        for _ in range(100):
            self.kill()
            for ctl, d in list(left.items()):
                try:
                    d.rmdir()
                    del left[ctl]
                except FileNotFoundError:
                    del left[ctl]
                except OSError:          # busy: a killed process is not gone yet
                    pass
            if not left:
                return
            time.sleep(0.01)
