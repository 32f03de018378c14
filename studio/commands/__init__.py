"""Sub-commands of `studio`, one module per area. Each module has
`register(sub)` adding its parsers; each parser's `func(args)` returns an exit code.
COMMANDS lists every sub-command with its module and help, so `studio` can show
them all while importing only the module of the one that runs."""
from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ENVIRONMENT = 0, 1, 2, 3

# (sub-command, module under studio.commands, help): in the order `studio --help` lists them;
# tests/test_cli_lazy.py checks each row against what the module registers.
COMMANDS = [
    ("new", "project", "create an empty project folder"),
    ("info", "project", "a readable summary of a project"),
    ("open", "project", "open the project in the studio window"),
    ("scene", "project", "the scene: meshes and CAD parts"),
    ("characters", "project", "the character library: robots and characters that can be imported"),
    ("board", "board", "the storyboard: state status, reviews, plan, progress"),
    ("verify", "verify", "run the verifiers on a project's film, one state, or an animated .glb"),
    ("score", "verify", "penetration, floating and joint violation rates, per film and mean"),
    ("render", "render", "render stills, a preview or the film through the Blender worker"),
    ("export", "render", "export the film (.blend, .mp4); refused while required checks fail"),
    ("jobs", "render", "list, show, resume or cancel render jobs"),
    ("bake", "bake", "bake motion between approved states as a job (refused by the gate)"),
    ("agent", "agent", "the agent: plan, repair, log, revert, replay"),
    ("tools", "tools", "the tool catalogue: every edit a person, the agent or a calls file can make"),
    ("demo", "demo", "make an example film end to end, headless, and print a summary"),
    ("selftest", "selftest", "check this installation: open a project copy, verify a state, render a still"),
    ("audit", "audit", "the project's audit log: verify its chain and review signatures"),
]


class CommandError(Exception):
    """A refusal to show the user, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.code = code


def register_all(sub, only: str | None = None, everything: bool = True) -> None:
    """Add every sub-command to `sub`: the real parser of `only` (of all when `everything`),
    the others by name and help alone, their modules left unimported."""
    import importlib
    done = set()
    for name, module, help_ in COMMANDS:
        if everything or name == only:
            if module not in done:
                done.add(module)
                importlib.import_module(f"{__name__}.{module}").register(
                    sub if everything else _Only(sub, only))
        else:
            sub.add_parser(name, help=help_)


class _Only:
    """The sub-parsers action seen by a module's `register`, keeping only one sub-command."""

    def __init__(self, sub, name: str):
        self.sub, self.name = sub, name

    def add_parser(self, name: str, **kw):
        import argparse
        return self.sub.add_parser(name, **kw) if name == self.name else argparse.ArgumentParser(add_help=False)
