"""The rig profile: how a skinned character's bones may move, and what they weigh.

A glTF skin says where bones are, not how far they may turn, so the limits come from a profile
the user can edit (`studio characters profile` prints the human one; `--profile FILE` on import
uses another). A profile is JSON:

    {"mass": 70.0,                                  # the whole body, kg
     "bones": {"thigh": {"axes": [["x", -120, 30], ["y", -40, 40], ["z", -40, 40]], "mass": 0.1416},
               ...},
     "other": "fixed"}                              # bones it does not name: fixed, or "free" (+-180)

A bone is named by its name without a side suffix (`thigh` covers `thigh.L` and `thigh.R`,
`thigh_l`, `LeftThigh` is not matched: name it exactly); each axis of its own frame it may turn
about is a revolute joint with those limits in degrees, applied in the order given; `mass` is a
share of the body's mass (the human's from de Leva's segment tables: head and neck 6.9%, trunk
43.5%, upper arm 2.7%, forearm 1.6%, hand 0.6%, thigh 14.2%, shank 4.3%, foot 1.4%). The root
bone moves freely with the character and takes no axes.

The human defaults are for Blender/Rigify bone frames (Y along the bone, X the hinge of the knee
and elbow): a positive X turn bends a knee or an elbow, swings a thigh or an upper arm back or
forward as Rigify rolls them, and points a foot down.
"""
from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

HUMAN = {
    "mass": 70.0,
    "other": "fixed",
    "bones": {
        "spine": {"axes": [], "mass": 0.142},                       # the hips: the character's root
        "spine.001": {"axes": [["x", -20, 35], ["y", -20, 20], ["z", -15, 15]], "mass": 0.10},
        "spine.002": {"axes": [["x", -15, 30], ["y", -20, 20], ["z", -15, 15]], "mass": 0.10},
        "spine.003": {"axes": [["x", -15, 25], ["y", -20, 20], ["z", -15, 15]], "mass": 0.083},
        "spine.004": {"axes": [["x", -30, 30], ["y", -35, 35], ["z", -20, 20]], "mass": 0.012},
        "spine.005": {"axes": [["x", -30, 30], ["y", -35, 35], ["z", -20, 20]], "mass": 0.012},
        "spine.006": {"axes": [["x", -30, 30], ["y", -30, 30], ["z", -15, 15]], "mass": 0.045},
        "shoulder": {"axes": [["x", -10, 15], ["z", -15, 20]], "mass": 0.005},
        "upper_arm": {"axes": [["x", -70, 170], ["y", -80, 80], ["z", -100, 90]], "mass": 0.027},
        "forearm": {"axes": [["x", 0, 150], ["y", -80, 80]], "mass": 0.016},
        "hand": {"axes": [["x", -70, 80], ["z", -30, 30]], "mass": 0.006},
        "thigh": {"axes": [["x", -120, 30], ["y", -40, 40], ["z", -40, 40]], "mass": 0.142},
        "shin": {"axes": [["x", 0, 150]], "mass": 0.043},
        "foot": {"axes": [["x", -30, 50], ["z", -20, 20]], "mass": 0.011},
        "toe": {"axes": [["x", -40, 60]], "mass": 0.003},
    },
}
SIDE = re.compile(r"[._-](L|R|l|r|left|right)$")
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


class ProfileError(ValueError):
    """A rig profile that does not hold; the message names the field."""


def human_profile() -> dict:
    return copy.deepcopy(HUMAN)


def base_name(bone: str) -> str:
    return SIDE.sub("", bone)


def read_profile(path: str | Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProfileError(f"{path}: not a readable rig profile ({e})") from None
    return check_profile(data, str(path))


def check_profile(p, where: str = "profile") -> dict:
    if not isinstance(p, dict) or not isinstance(p.get("bones"), dict):
        raise ProfileError(f"{where}: expected an object with bones")
    mass = p.get("mass", 70.0)
    if not isinstance(mass, (int, float)) or not 0 < mass < 10_000:
        raise ProfileError(f"{where}.mass: expected kilograms above 0, got {mass!r}")
    if p.get("other", "fixed") not in ("fixed", "free"):
        raise ProfileError(f"{where}.other: expected 'fixed' or 'free', got {p.get('other')!r}")
    for name, b in p["bones"].items():
        at = f"{where}.bones.{name}"
        if not isinstance(b, dict):
            raise ProfileError(f"{at}: expected an object with axes and mass")
        for k, ax in enumerate(b.get("axes", [])):
            if not (isinstance(ax, list) and len(ax) == 3 and ax[0] in AXES
                    and all(isinstance(v, (int, float)) and math.isfinite(v) for v in ax[1:])):
                raise ProfileError(f"{at}.axes[{k}]: expected [axis x|y|z, lower degrees, upper degrees]")
            if ax[1] > ax[2]:
                raise ProfileError(f"{at}.axes[{k}]: lower {ax[1]} is above upper {ax[2]}")
        share = b.get("mass", 0.0)
        if not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ProfileError(f"{at}.mass: expected a share of the body's mass (0..1), got {share!r}")
    return p


def bone_axes(profile: dict, bone: str) -> list[tuple[str, tuple, float, float]]:
    """(axis name, unit axis, lower rad, upper rad) for each joint of a bone."""
    b = profile["bones"].get(bone) or profile["bones"].get(base_name(bone))
    if b is None:
        if profile.get("other", "fixed") == "free":
            return [(a, AXES[a], -math.pi, math.pi) for a in "xyz"]
        return []
    return [(a, AXES[a], math.radians(lo), math.radians(hi)) for a, lo, hi in b.get("axes", [])]


def bone_mass(profile: dict, bone: str) -> float:
    b = profile["bones"].get(bone) or profile["bones"].get(base_name(bone)) or {}
    return float(b.get("mass", 0.0)) * float(profile.get("mass", 70.0))
