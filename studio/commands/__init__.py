"""Sub-commands of `studio`, one module per area. Each module has
`register(sub)` adding its parsers; each parser's `func(args)` returns an exit code."""
from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ENVIRONMENT = 0, 1, 2, 3


class CommandError(Exception):
    """A refusal to show the user, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.code = code


def _registrars():
    from . import agent, audit, bake, board, demo, project, render, selftest, tools, verify
    return [project.register, board.register, verify.register, render.register, bake.register, agent.register,
            tools.register, demo.register, selftest.register, audit.register]


class _Lazy:
    def __iter__(self):
        return iter(_registrars())


REGISTRARS = _Lazy()
