"""A character's legs and arms as a motion tool's parameters.

A walk (or a carry, or a reach that keeps feet planted) declares a root and its
legs; a segment may instead name an imported character (`{"character": "g1"}`),
whose root and legs were found from its structure at import (see
`studio.scene.robots`). Likewise an effector naming a character's grip frame
without its `joints` gets that arm's chain. The names are filled in when the
parameters are given, so the plan stores, and a person reads, the legs and arms
the tool will use; anything the parameters already declare is kept.
"""
from __future__ import annotations

import copy

from studio.scene.ir import Scene

from studio.timeline.motion import MotionError


def expand_characters(scene: Scene, params):
    """`params` with every object naming a character given that character's root and legs."""
    params = copy.deepcopy(params)
    arms = {h["frame"]: h["joints"] for c in scene.characters for h in c.hands}

    def walk(v, where: str):
        if isinstance(v, dict):
            if isinstance(v.get("frame"), str) and v["frame"] in arms and "joints" not in v:
                v["joints"] = list(arms[v["frame"]])
            if "character" in v and isinstance(v["character"], str):
                name = v.pop("character")
                try:
                    ch = scene.character(name)
                except KeyError:
                    known = ", ".join(c.name for c in scene.characters) or "none"
                    raise MotionError(f"{where}.character: no character {name!r} in the scene (characters: "
                                      f"{known})") from None
                v.setdefault("root", ch.root)
                if ch.legs:
                    v.setdefault("legs", [dict(leg) for leg in ch.legs])
            for k, x in v.items():
                walk(x, f"{where}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{where}[{i}]")
    walk(params, "params")
    return params
