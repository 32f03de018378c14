"""Why a project cannot be opened or written. Each kind carries the exit code
the `studio` command gives it: 2 for what the person can fix in what they
asked (a read-only project, a bad file), 3 for what the machine lacks (disk
space, a write lock another process keeps)."""
from __future__ import annotations


class ProjectError(Exception):
    """A project that cannot be opened or written; the message says why."""

    exit_code = 2


class ReadOnlyProject(ProjectError):
    """The project's folder or studio.db cannot be written: it is open for reading only."""

    exit_code = 2


class ProjectLocked(ProjectError):
    """Another process kept the project's write lock longer than the studio waits."""

    exit_code = 3


class ForeignTrigger(ProjectError):
    """studio.db holds a trigger the studio did not make: the studio writes nothing until it is removed."""

    exit_code = 2


class DiskFull(ProjectError):
    """No room on the disk for a write; the message says how much is needed, and where."""

    exit_code = 3


class Refused(Exception):
    """A request the studio will not carry out, whichever layer refused it; nothing was changed
    and the message says why. Each layer's refusal (a tool call, agent code, a repair, the model)
    is one of these, so a front end can catch them all without importing every layer."""
