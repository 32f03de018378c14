"""Verifier failures as the window draws them: one `Failure` per failing frame,
read from the stored reports (the film's, and each state's at its frame).

Each check's evidence is read with that check's own keys (studio/checks/*.py):
NoPenetration {frame, a, b, depth_m, axis, push_m, point; between frames also frames: [k, k+1],
contact_frame, deepest_frame}, Supported {frame, body},
JointLimits {joint, frames: [first, last], value, limit}, EventsSatisfied
{event, kind, window, reason; a hold's also effector, body, frame, drift_m}, AnimationWellFormed {frame(s), body | joint | state,
reason}, ContactSlip {frame, body, support, slip_m, while}, SupportMargin
{frame, group, margin_m}, Continuity {frame, body | joint, what, value, limit}.
The text names the bodies and the figure ("box slips 3.1 mm on floor").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from studio.scene.ir import Scene
from studio.store.project import Project
from studio.store.reports import REQUIRED, Report, load_reports
from studio.timeline.film import film_hash
from studio.timeline.storyboard import State, content_hash

KIND_OF_CHECK = {"NoPenetration": "penetration", "Supported": "floating", "JointLimits": "joint"}


@dataclass(frozen=True)
class Failure:
    frame: int
    check: str
    kind: str                      # penetration | floating | joint | other
    bodies: tuple[str, ...]
    text: str
    point: tuple[float, float, float] | None = None
    required: bool = False
    target: str = "film"
    push: tuple[float, float, float] | None = None     # penetration: the move (m) that separates a from b
    stale: bool = False            # found on an older film or version of the state than the one there now


def _frames(ev: dict, default: int | None) -> list[int]:
    """A run given as frames (or an event's window) [first, last] pins every frame of it."""
    for key in ("frames", "window"):
        run = ev.get(key)
        if isinstance(run, (list, tuple)) and len(run) == 2 and all(isinstance(f, (int, float)) for f in run):
            return list(range(int(run[0]), int(run[1]) + 1))
    f = ev.get("frame", default)
    return [int(f)] if isinstance(f, (int, float)) else []


def _mm(metres) -> str:
    return f"{abs(float(metres)) * 1000:.1f} mm"


def _joint_body(scene: Scene, joint: str) -> tuple[str, ...]:
    try:
        return (scene.joint(joint).child,)
    except KeyError:
        return ()


def _group(scene: Scene, root: str) -> tuple[str, ...]:
    """Every body of the character whose root is `root` (SupportMargin names a group by its root)."""
    names = tuple(b.name for b in scene.bodies if scene.group_root(b.name) == root)
    return names or ((root,) if root else ())


def _continuity(ev: dict, scene: Scene) -> tuple[tuple[str, ...], str]:
    what, value, limit = ev.get("what", "motion"), float(ev.get("value", 0)), float(ev.get("limit", 0))
    if ev.get("joint"):
        joint = str(ev["joint"])
        return _joint_body(scene, joint), (f"joint {joint} jumps {math.degrees(value):.1f}° "
                                           f"(limit {math.degrees(limit):.1f}°)")
    body = str(ev.get("body", ""))
    if what == "rotation":
        return (body,), f"{body} rotation jumps {math.degrees(value):.1f}° (limit {math.degrees(limit):.1f}°)"
    return (body,), f"{body} position jumps {value * 1000:.0f} mm (limit {limit * 1000:.0f} mm)"


def describe(name: str, ev: dict, scene: Scene) -> tuple[tuple[str, ...], str]:
    """(bodies involved, one line naming them and the figure) for one piece of evidence."""
    if name == "NoPenetration":
        bodies = tuple(str(b) for b in (ev.get("a"), ev.get("b")) if b)
        text = f"{' into '.join(bodies)} {_mm(ev.get('depth_m', 0.0))} deep"
        if ev.get("unsettled") and len(ev.get("frames") or []) == 2:
            f0, f1 = ev["frames"]
            bound = ev.get("depth_bound_m")
            um = lambda m: f"{abs(float(m)) * 1000:.3f} mm"       # noqa: E731  (near tau: to the micrometre)
            text = (f"{' and '.join(bodies)} not proven within tau between frames {f0} and {f1}: measured "
                    f"{um(ev.get('depth_m', 0.0))} deep, tau {um(ev.get('tau_m', 0.0))}"
                    + (f", proven no deeper than {um(bound)}" if isinstance(bound, (int, float)) else ""))
        elif ev.get("between") and len(ev.get("frames") or []) == 2:
            f0, f1 = ev["frames"]
            text += f" between frames {f0} and {f1} (first contact at {ev.get('contact_frame', f0)})"
        return bodies, text
    if name == "Supported":
        bodies = (str(ev["body"]),) if ev.get("body") else ()
        return bodies, f"{' '.join(bodies)} floats (nothing holds it up)"
    if name == "JointLimits":
        joint = str(ev.get("joint", ""))
        bound = ev.get("bound", "")
        return _joint_body(scene, joint), (f"joint {joint} at {float(ev.get('value', 0)):.3f} past its "
                                           f"{bound + ' ' if bound else ''}limit {ev.get('limit')}")
    if name == "ContactSlip":
        body, support = str(ev.get("body", "")), str(ev.get("support", ""))
        how = " while carried" if ev.get("while") == "carried" else ""
        return tuple(b for b in (body, support) if b), f"{body} slips {_mm(ev.get('slip_m', 0))} on {support}{how}"
    if name == "SupportMargin":
        group, margin = str(ev.get("group", "")), float(ev.get("margin_m", 0.0))
        side = "outside" if margin < 0 else "inside"
        return _group(scene, group), f"{group}'s centre of mass {_mm(margin)} {side} its feet"
    if name == "Continuity":
        return _continuity(ev, scene)
    if name == "EventsSatisfied" and ev.get("kind") == "hold":
        eff, body = str(ev.get("effector", "")), str(ev.get("body", ""))
        holder = next((f.body for f in scene.frames if f.name == eff), eff)
        return tuple(b for b in dict.fromkeys((body, holder)) if b), f"hold: {ev.get('reason', 'drifts')}"
    if name == "EventsSatisfied":
        what = f"event {ev.get('event', '?')}" + (f" ({ev['kind']})" if ev.get("kind") else "")
        return (), f"{what}: {ev.get('reason', 'not satisfied')}"
    named = ev.get("body") or ev.get("joint") or ev.get("state")
    bodies = tuple(str(b) for b in ev.get("bodies", []) if b) or (
        (str(ev["body"]),) if ev.get("body") else _joint_body(scene, str(ev["joint"])) if ev.get("joint") else ())
    reason = str(ev.get("message") or ev.get("reason") or "fails")
    return bodies, f"{named}: {reason}" if named else reason


def _vec(v) -> tuple[float, float, float] | None:
    if isinstance(v, (list, tuple)) and len(v) >= 3:
        try:
            return tuple(float(x) for x in v[:3])
        except (TypeError, ValueError):
            return None
    return None


def report_failures(report: Report, scene: Scene, target: str, default_frame: int | None,
                    stale: bool = False) -> list[Failure]:
    if report.verdict not in ("fail", "error"):
        return []
    kind = KIND_OF_CHECK.get(report.name, "other")
    required = report.name in REQUIRED
    out: list[Failure] = []
    if report.verdict == "error" and not report.evidence:
        reason = str((report.metrics or {}).get("error") or "the check crashed")
        frames = [default_frame] if default_frame is not None else []
        return [Failure(f, report.name, kind, (), f"{report.name} could not run: {reason}", None, required, target,
                        stale=stale) for f in frames]
    for ev in report.evidence or [{}]:
        ev = ev if isinstance(ev, dict) else {}
        bodies, text = describe(report.name, ev, scene)
        pt, push = _vec(ev.get("point")), None
        axis = _vec(ev.get("axis"))
        if axis is not None and isinstance(ev.get("push_m"), (int, float)):
            push = tuple(a * float(ev["push_m"]) for a in axis)
        for f in _frames(ev, default_frame):
            out.append(Failure(f, report.name, kind, bodies, text, pt, required, target, push, stale))
    return out


def current_failures(project: Project, scene: Scene, states: list[State]) -> list[Failure]:
    """Every failure of the film's report and of each state's report, in frame order; those
    found on an older film (or an older version of the state) are marked `stale`."""
    out: list[Failure] = []
    film, checked = load_reports(project, "film")
    film_now = film_hash(project) if film else None
    for r in film:
        out += report_failures(r, scene, "film", None, stale=checked != film_now)
    for s in states:
        reports, checked = load_reports(project, f"state:{s.id}")
        stale = bool(reports) and checked != content_hash(scene, s.pose, s.frame)
        for r in reports:
            out += report_failures(r, scene, f"state:{s.id}", s.frame, stale=stale)
    out.sort(key=lambda f: (f.frame, not f.required, f.check))
    return out


def by_frame(failures: list[Failure]) -> dict[int, list[Failure]]:
    out: dict[int, list[Failure]] = {}
    for f in failures:
        out.setdefault(f.frame, []).append(f)
    return out


# Pin shades (hex, so the model stays Qt-free): required failures by kind, every advisory one muted amber.
REQUIRED_SHADES = {"penetration": "#e03131", "joint": "#d6336c", "floating": "#e03131", "other": "#e03131"}
ADVISORY_SHADE = "#a8874a"


def pin_shade(f: Failure) -> str:
    """Red-family for a required check (it blocks export), muted amber for an advisory one."""
    return REQUIRED_SHADES.get(f.kind, REQUIRED_SHADES["other"]) if f.required else ADVISORY_SHADE


def failing_frame_counts(failures_at: dict[int, list[Failure]]) -> tuple[int, int]:
    """(frames failing a required check, frames failing an advisory check); a frame may count in both."""
    required = sum(1 for fails in failures_at.values() if any(f.required for f in fails))
    advisory = sum(1 for fails in failures_at.values() if any(not f.required for f in fails))
    return required, advisory


def pins_texts(failures_at: dict[int, list[Failure]], stale_at: dict[int, list[Failure]] | None = None,
               film: str = "current") -> tuple[str, ...]:
    """The scrubber's count in full words and shorter, e.g. '0 required / 306 advisory failing
    frames', '0 req / 306 adv', '0 / 306'. While the film's verdicts are older than the film
    (`film` "stale", or "unverified") it says so first, and counts the old ones as stale."""
    if film in ("stale", "unverified"):
        was = len(stale_at or {})
        head = ("film not verified yet" if film == "unverified" else
                "film changed since verified: verdicts stale" + (f" ({was} frames failed before)" if was else ""))
        return (head, "verdicts stale" if film == "stale" else "not verified", "stale")
    if not failures_at:
        return ("no failures",)
    required, advisory = failing_frame_counts(failures_at)
    plural = "s" if max(required, advisory) != 1 else ""
    return (f"{required} required / {advisory} advisory failing frame{plural}",
            f"{required} req / {advisory} adv", f"{required} / {advisory}")


@dataclass(frozen=True)
class PinFilter:
    """Which failures the pins show: all, required only, one check, or those naming one body."""
    required_only: bool = False
    check: str = ""
    body: str = ""

    def accepts(self, f: Failure) -> bool:
        return ((f.required or not self.required_only) and (not self.check or f.check == self.check)
                and (not self.body or self.body in f.bodies))

    def __str__(self) -> str:
        parts = (["required only"] if self.required_only else []) + ([self.check] if self.check else []) + \
                ([f"on {self.body}"] if self.body else [])
        return ", ".join(parts) or "all failures"


@dataclass(frozen=True)
class Run:
    """Consecutive failing frames of one lane, drawn as one bar with its count."""
    lane: str                      # required | advisory
    first: int
    last: int
    worst: Failure                 # what the bar is shaded and named by
    checks: tuple[str, ...]

    @property
    def count(self) -> int:
        return self.last - self.first + 1

    def describe(self) -> str:
        span = f"frame {self.first}" if self.first == self.last else f"frames {self.first}–{self.last} ({self.count})"
        return f"{span} · {self.lane} · {', '.join(self.checks)} · e.g. {self.worst.text}"


def _weight(f: Failure) -> tuple:
    return (f.required, f.kind == "penetration", f.kind != "other")


def lanes(failures_at: dict[int, list[Failure]], pin_filter: PinFilter = PinFilter()) -> dict[str, list[Run]]:
    """The required and the advisory lane: the filtered failures as runs of consecutive frames."""
    out: dict[str, list[Run]] = {"required": [], "advisory": []}
    for lane, want in (("required", True), ("advisory", False)):
        open_run: list = []                # [first, last, worst, checks]
        for frame in sorted(failures_at):
            fails = [f for f in failures_at[frame] if f.required == want and pin_filter.accepts(f)]
            if not fails:
                continue
            worst = max(fails, key=_weight)
            if open_run and frame == open_run[1] + 1:
                open_run[1] = frame
                if _weight(worst) > _weight(open_run[2]):
                    open_run[2] = worst
                open_run[3].update(f.check for f in fails)
            else:
                if open_run:
                    out[lane].append(Run(lane, open_run[0], open_run[1], open_run[2], tuple(sorted(open_run[3]))))
                open_run = [frame, frame, worst, {f.check for f in fails}]
        if open_run:
            out[lane].append(Run(lane, open_run[0], open_run[1], open_run[2], tuple(sorted(open_run[3]))))
    return out


def filtered_frames(failures_at: dict[int, list[Failure]], pin_filter: PinFilter) -> list[int]:
    """Frames with a failure the filter shows (previous/next failure steps through these)."""
    return sorted(f for f, fails in failures_at.items() if any(pin_filter.accepts(x) for x in fails))


def frame_spans(frames) -> str:
    """'1010–1030, 1040' for a set of frames (at most six spans named)."""
    frames = sorted(set(frames))
    spans: list[list[int]] = []
    for f in frames:
        if spans and f == spans[-1][1] + 1:
            spans[-1][1] = f
        else:
            spans.append([f, f])
    words = [f"{a}–{b}" if a != b else f"{a}" for a, b in spans[:6]]
    return ", ".join(words) + (f" and {len(spans) - 6} more" if len(spans) > 6 else "")


def refusal_text(failures: list[Failure], reasons: list[str] | None = None, next_step: str = "") -> str:
    """Why an export is refused: the gate's reasons first (the real one leads), then the failing
    frames of the current film, then what to do next about the first reason."""
    by_check: dict[str, set[int]] = {}
    for f in failures:
        if f.required and f.target == "film" and not f.stale:
            by_check.setdefault(f.check, set()).add(f.frame)
    lines = [f"• {r}" for r in reasons or [] if not r.split(":")[0] in by_check]
    lines += [f"• {check} fails on frame{'s' if len(frames) != 1 else ''} {frame_spans(frames)} "
              f"({len(frames)} frame{'s' if len(frames) != 1 else ''})" for check, frames in sorted(by_check.items())]
    first = min((min(v) for v in by_check.values()), default=None)
    step = next_step or (f"Next: go to frame {first} (Ctrl+] steps through the failures), fix it in Repair review "
                         f"or by editing the keys either side, then Verify and export again." if first is not None
                         else "Next: Verify the film, then export again.")
    return "\n".join(lines + ["", step])
