"""The done contract: a job succeeded only if its worker exited 0, wrote its
finish marker, and every expected output (every frame) exists with a hash
that matches what the worker reported. Anything less is a failure that says
which outputs are missing, and resuming renders only those.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from studio.store.project import sha256_file, write_atomic

MARKER = "done.json"


def emit(**event) -> None:
    """One progress event of a job process, a JSON line on stdout (as the Blender worker writes them)."""
    print(json.dumps(event), flush=True)


def finish(folder: Path, output: str, result: dict, marker: dict) -> int:
    """The done contract from a job process of the studio's own Python: the one output, its
    hash reported, then the finish marker."""
    out = folder / output
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(result, indent=1, sort_keys=True).encode())
    emit(stage="output", output=output, sha256=sha256_file(out))
    write_atomic(folder / MARKER, json.dumps(marker).encode())
    emit(stage="done")
    return 0


@dataclass
class Verdict:
    ok: bool
    problems: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)   # every expected output present, with its hash
    missing: list[str] = field(default_factory=list)

    def message(self) -> str:
        return "; ".join(self.problems)


def present_outputs(folder: Path, expected: list[str], reported: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Expected outputs that exist (and match the reported hash, when one was reported), and the rest."""
    have, missing = {}, []
    for rel in expected:
        path = folder / rel
        if not path.is_file():
            missing.append(rel)
            continue
        digest = sha256_file(path)
        if rel in reported and reported[rel] != digest:
            missing.append(rel)
            continue
        have[rel] = digest
    return have, missing


def check_done(folder: Path, spec: dict, exit_code: int | None, reported: dict[str, str],
               marker: str = MARKER) -> Verdict:
    problems = []
    if exit_code != 0:
        problems.append(f"the worker exited with code {exit_code}" if exit_code is not None and exit_code >= 0
                        else f"the worker was killed (signal {-exit_code if exit_code else '?'})")
    if not (folder / marker).is_file():
        problems.append(f"no finish marker ({marker})")
    else:
        try:
            json.loads((folder / marker).read_text())
        except (OSError, json.JSONDecodeError):
            problems.append(f"the finish marker {marker} is unreadable")
    have, missing = present_outputs(folder, spec.get("expected", []), reported)
    if missing:
        problems.append(f"{len(missing)} of {len(spec.get('expected', []))} expected outputs missing "
                        f"or altered (first: {missing[0]})")
    return Verdict(not problems, problems, have, missing)


def missing_frames(spec: dict, missing: list[str]) -> list[int]:
    """Frame numbers of missing frame outputs (frames/<n>.png)."""
    return sorted(int(Path(rel).stem) for rel in missing if rel.startswith("frames/"))
