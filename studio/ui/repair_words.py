"""A repair proposal in words, for the Repair review dock (Qt-free): each change
as a person reads it ("panel up 16.0 mm", "shoulder 0.300 → 0.250 rad"), a
segment's tool and parameters as "carry: tolerance 0.005, via 0, 0, 0.1", and
what the trial found ("fixes NoPenetration; no new required failure") instead
of the stored JSON."""
from __future__ import annotations

import math

import numpy as np

AXES = "xyz"


def _num(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return ", ".join(_num(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k} {_num(x)}" for k, x in v.items())
    return str(v)


def params_words(tool: str | None, params: dict | None) -> str:
    if not tool:
        return "(the plan's default)"
    if not params:
        return f"{tool} (its defaults)"
    return f"{tool}: " + ", ".join(f"{k} {_num(v)}" for k, v in params.items())


def _angle(q0, q1) -> float:
    d = abs(float(np.dot(np.asarray(q0, float), np.asarray(q1, float))))
    return math.degrees(2 * math.acos(min(1.0, d)))


def root_words(was: list, now: list) -> tuple[str, str]:
    """(from, to) of a moved root: its position, and how far and which way it moves."""
    d = np.asarray(now[:3], float) - np.asarray(was[:3], float)
    moves = [f"{AXES[i]} {'+' if d[i] > 0 else '−'}{abs(d[i]) * 1000:.1f} mm" for i in range(3) if abs(d[i]) > 5e-5]
    turn = _angle(was[3:], now[3:]) if len(was) == 7 and len(now) == 7 else 0.0
    if turn > 0.05:
        moves.append(f"turned {turn:.1f}°")
    at = lambda p: ", ".join(f"{v:.3f}" for v in p[:3])     # noqa: E731
    return f"at {at(was)}", f"to {at(now)} ({'; '.join(moves) or 'unchanged'})"


def joint_words(was, now) -> tuple[str, str]:
    if isinstance(was, list) or isinstance(now, list):
        return _num(was), _num(now)
    d = math.degrees(float(now) - float(was))
    return f"{float(was):.3f}", f"{float(now):.3f} ({'+' if d >= 0 else '−'}{abs(d):.1f}°)"


def change_rows(changes: list[dict]) -> list[tuple[str, str, str, str]]:
    """(change, what, from, to) for the changes table."""
    rows = []
    for c in changes:
        kind = c.get("kind")
        if kind == "root":
            rows.append(("move", c["name"], *root_words(c.get("from", []), c.get("to", []))))
        elif kind == "joint":
            rows.append(("joint", c["name"], *joint_words(c.get("from"), c.get("to"))))
        elif kind == "insert_state":
            rows.append(("new key", f"{c['state']} @ {c['frame']}", "", c.get("description", "")))
        elif kind == "segment":
            was = c.get("from", {}) or {}
            rows.append(("segment", c["segment"], params_words(was.get("tool"), was.get("params")),
                         params_words(c.get("tool"), c.get("params"))))
        else:
            rows.append((str(kind), str(c.get("name", "")), _num(c.get("from", "")), _num(c.get("to", ""))))
    return rows


def verified_words(v: dict | None, check: str = "") -> str:
    """What the trial found, in a sentence or two."""
    v = v or {}
    if "effect" in v:
        return str(v["effect"])
    before, after = v.get("before", {}) or {}, v.get("after", {}) or {}
    fixed = sorted(k for k, x in before.items() if x in ("fail", "error") and after.get(k) in ("pass", "not_applicable"))
    broke = sorted(k for k, x in after.items() if x in ("fail", "error") and before.get(k) not in ("fail", "error"))
    still = sorted(k for k, x in after.items() if x in ("fail", "error") and before.get(k) in ("fail", "error"))
    target = f"fixes its {check} failure" if v.get("fixes_target") else f"does not fix its {check} failure"
    parts = [target.replace("  ", " ")]
    if fixed and fixed != [check]:
        parts.append("fixes " + ", ".join(fixed))
    new = v.get("new_required_failures") or broke
    parts.append("adds no required failure" if not new else "adds " + ", ".join(map(str, new)))
    if still:
        parts.append("still failing: " + ", ".join(still))
    return "; ".join(parts)
