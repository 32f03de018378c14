"""Names that become file names, and paths that must stay inside the project.

A state, camera, body, shot or job id ends up in a file name (a still is
`<state>_<camera>.png`, a job lives in `jobs/<id>/`), so every such id matches
one pattern: a letter or digit, then letters, digits, `_` or `-`, at most 64
characters. No dot (so no `..` and no `A..B` segment confusion), no slash, no
space. Ids are checked when they are stored and again when a path is made from
them; a path made for output is resolved and must lie inside the folder it was
meant for. Either failure is a `NameProblem` naming the field, which the CLI
turns into exit 2.
"""
from __future__ import annotations

import re
from pathlib import Path

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
ID_RULE = "a letter or digit, then letters, digits, '_' or '-' (at most 64)"


class NameProblem(ValueError):
    """An id or path that would reach outside the project; the message names the field."""


def check_id(value, field: str) -> str:
    """`value` if it is a valid id, else NameProblem naming `field`."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise NameProblem(f"{field}: {value!r} is not a valid id; expected {ID_RULE}")
    return value


def inside(folder: Path, rel: str | Path, field: str) -> Path:
    """`folder / rel` resolved, refused unless it lies inside `folder` (no absolute or climbing path)."""
    p = Path(rel)
    root = Path(folder).resolve()
    full = (root / p).resolve()
    if p.is_absolute() or ".." in p.parts or not full.is_relative_to(root):
        raise NameProblem(f"{field}: {str(rel)!r} leads outside {root}; expected a path inside it")
    return full


def relative_inside(rel: str, under: str, field: str) -> str:
    """A stored relative path, refused unless it stays inside the subfolder `under` (e.g. 'assets')."""
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or p.parts[0] != under:
        raise NameProblem(f"{field}: {rel!r} is not a path inside the project's {under}/ folder")
    return rel
