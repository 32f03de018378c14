"""Holds: what a hand holds stays in the hand, at every frame and between frames.

A hold is recorded by the motion tool that makes it (`Authored.attachments`,
kept per segment in the project's "authored" document): the effector (a named
frame or a body), the body it holds, the frames it holds it over and,
optionally, the hold's tolerance and the named grip frame on the body. Grasp
records a hold at its last frame, carry, place and operate over their whole
segment, release at its first frame (and says so, with the frame the hand is
clear by). Records of one effector on one body are one hold from the first
record's start until a release ends it: a grasp holds until its release, also
through segments between them authored by other tools. A ride (a carried
body riding on a frame, `ride` in its record) is one hold while its records
meet; where it stops and starts again the body is seated afresh.

At a hold's first frame the effector's origin is taken in the held body's
frame: the grip. Until the hold's last frame the effector's origin must stay
within the tolerance of the grip as the body moves; the distance between the
two is the drift. Between two frames the motion is the one the renderer
interpolates (root positions linearly, rotations by slerp, joints linearly):
a frame pair whose drift at its middle is off the straight line between its
ends by more than `REFINE` is halved, and the halves likewise (at most
`DEPTH` times), so a drift that peaks between frames is found where it peaks
(e.g. at frame 1036.5) and the refinement stops where the drift is straight.

Tolerance: the hold's own (the `tolerance` of the tool that made it, the same
number the tool refuses its IK to miss by), `TOLERANCE` (1 cm) when it names
none; where two records meet, the larger. EventsSatisfied reports the
findings, naming the effector, the body, the frames beyond tolerance and the
largest drift.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import forward
from studio.scene.transforms import from_7, invert, quat_normalize, slerp

from studio.checks.footage import Footage

TOLERANCE = 0.01       # metres an effector may drift from its grip when the hold names no tolerance
REFINE = 1e-4          # metres a frame pair's mid-point drift may depart from the chord before it is halved
DEPTH = 10             # halvings at most (a 1/1024 frame)


@dataclass
class Hold:
    """One effector holding one body over frames first..last."""
    effector: str              # named frame or body
    body: str
    first: int
    last: int
    tolerance: dict[int, float]   # per frame held
    grip: str | None = None       # the named frame on the body the hold is measured against, if the tool said
    ride: bool = False            # the body rides on the frame (rather than a hand holding it)

    @property
    def id(self) -> str:
        return f"{'ride' if self.ride else 'hold'}_{self.effector}_{self.body}_{self.first}"

    def label(self) -> str:
        return f"{self.effector} on {self.grip or self.body}"


@dataclass
class Drift:
    """How far a hold's effector got from its grip."""
    hold: Hold
    worst: float               # metres
    at: float                  # frame (fractional when between frames)
    frames: np.ndarray         # frames (and sub-frames) beyond tolerance, as evaluated
    checked: int               # frames and sub-frames evaluated

    @property
    def ok(self) -> bool:
        return len(self.frames) == 0


def holds_of(records: list[dict]) -> list[Hold]:
    """The holds the motion tools recorded: one per effector and body from a grasp to its release,
    one per unbroken ride."""
    runs: dict[tuple[str, str, bool], list[dict]] = {}
    for a in sorted(records or [], key=lambda a: (str(a.get("frame")), str(a.get("body")), int(a.get("start", 0)))):
        if a.get("body") is None or a.get("frame") is None:
            continue
        runs.setdefault((str(a["frame"]), str(a["body"]), bool(a.get("ride"))), []).append(a)
    out = []
    for (eff, body, ride), items in runs.items():
        cur: Hold | None = None
        for a in items:
            start, end = int(a["start"]), int(a["end"])
            tol = float(a.get("tolerance") or TOLERANCE)
            if cur is not None and ride and start > cur.last + 1:
                cur = None                                # a ride is seated afresh each time it begins
            if cur is None:
                cur = Hold(eff, body, start, end, {}, a.get("grip"), ride)
                out.append(cur)
            for f in range(cur.last + 1, start):          # segments between, by other tools: still held
                cur.tolerance[f] = TOLERANCE
            cur.last = max(cur.last, end)
            cur.grip = cur.grip or a.get("grip")
            for f in range(start, end + 1):
                cur.tolerance[f] = max(cur.tolerance.get(f, 0.0), tol)
            if "clear" in a:                              # a release ends the hold
                cur = None
    return sorted(out, key=lambda h: (h.first, h.effector, h.body))


def _local(scene: Scene, name: str) -> tuple[str, np.ndarray]:
    for f in scene.frames:
        if f.name == name:
            return f.body, from_7(np.asarray(f.local.as_list(), float))
    if name in scene.body_names:
        return name, np.eye(4)
    raise KeyError(name)


def _chain_scene(scene: Scene, bodies: list[str]) -> Scene:
    """The bodies and their ancestors, for forward kinematics of just what a hold needs."""
    keep = set()
    for b in bodies:
        while b is not None and b not in keep:
            keep.add(b)
            j = scene.joint_of_child(b)
            b = j.parent if j is not None else None
    return Scene(name=scene.name, bodies=[b for b in scene.bodies if b.name in keep],
                 joints=[j for j in scene.joints if j.child in keep])


def _world_between(scene: Scene, film: Footage, k: np.ndarray, s: np.ndarray) -> dict[str, np.ndarray]:
    """World matrices of `scene`'s bodies at fractional frames index k + s (0 <= s <= 1), the motion
    interpolated as a renderer does: positions and joints linearly, rotations by slerp."""
    tr = film.tracks
    k1 = np.minimum(k + 1, tr.n_frames - 1)
    roots, joints = {}, {}
    for b in scene.roots:
        v = tr.roots.get(b)
        if v is None:
            continue
        a, c = v[k], v[k1]
        pos = a[:, :3] + s[:, None] * (c[:, :3] - a[:, :3])
        roots[b] = np.concatenate([pos, quat_normalize(slerp(a[:, 3:], c[:, 3:], s))], axis=1)
    for j in scene.joints:
        v = tr.joints.get(j.name)
        if v is None:
            continue
        a, c = v[k], v[k1]
        joints[j.name] = a + (s[:, None] if a.ndim == 2 else s) * (c - a)
    return forward(scene, roots, joints, len(k))


def drift_of(film: Footage, hold: Hold) -> Drift:
    """The hold's drift over the film's frames (the hold must start inside them)."""
    scene = film.scene
    eb, el = _local(scene, hold.effector)
    if hold.body not in scene.body_names:
        raise KeyError(hold.body)
    frames = film.frames
    i0 = int(np.searchsorted(frames, hold.first))
    i1 = int(np.searchsorted(frames, min(hold.last, int(frames[-1])), side="right")) - 1
    eff = film.world[film.index(eb), i0:i1 + 1] @ el
    held = film.world[film.index(hold.body), i0:i1 + 1]
    grip = invert(held[0]) @ eff[0, :, 3]
    vec = eff[:, :3, 3] - (held @ grip)[:, :3]
    tol_at = np.array([hold.tolerance.get(int(f), TOLERANCE) for f in frames[i0:i1 + 1]])
    times = [frames[i0:i1 + 1].astype(float)]
    drifts = [np.linalg.norm(vec, axis=1)]
    tols = [tol_at]
    if i1 > i0:                           # between frames: halve the pairs whose drift bends
        sub = _chain_scene(scene, [eb, hold.body])
        k = np.arange(i0, i1)
        s0, s1 = np.zeros(len(k)), np.ones(len(k))
        v0, v1 = vec[:-1], vec[1:]
        pair_tol = np.maximum(tol_at[:-1], tol_at[1:])
        for _ in range(DEPTH):
            if len(k) == 0:
                break
            sm = (s0 + s1) / 2
            w = _world_between(sub, film, k, sm)
            vm = (w[eb] @ el)[:, :3, 3] - (w[hold.body] @ grip)[:, :3]
            times.append(frames[k] + sm)
            drifts.append(np.linalg.norm(vm, axis=1))
            tols.append(pair_tol)
            bend = np.linalg.norm(vm - (v0 + v1) / 2, axis=1) > REFINE
            k, pair_tol = np.r_[k[bend], k[bend]], np.r_[pair_tol[bend], pair_tol[bend]]
            s0, s1 = np.r_[s0[bend], sm[bend]], np.r_[sm[bend], s1[bend]]
            v0, v1 = np.r_[v0[bend], vm[bend]], np.r_[vm[bend], v1[bend]]
    t, d, tol = np.concatenate(times), np.concatenate(drifts), np.concatenate(tols)
    worst = int(np.argmax(d))
    beyond = np.sort(t[d > tol + 1e-12])
    return Drift(hold, float(d[worst]), float(t[worst]), beyond, len(t))


def check_holds(film: Footage) -> tuple[list[dict], dict]:
    """(evidence of every hold that drifts or cannot be checked, metrics), for EventsSatisfied."""
    if "holds" in film.extra:
        return film.extra["holds"]
    evidence, worst = [], {}
    checked = 0
    for h in holds_of(film.extra.get("attachments") or []):
        if film.n_frames == 0 or not film.frames[0] <= h.first <= film.frames[-1]:
            continue                              # the hold starts outside these frames: its grip is not here
        base = {"event": h.id, "kind": "hold", "effector": h.effector, "body": h.body,
                "window": [h.first, h.last]}
        try:
            d = drift_of(film, h)
        except KeyError as e:
            evidence.append(dict(base, reason=f"cannot check the hold of {h.body} by {h.effector}: "
                                             f"the scene has no frame or body {e.args[0]!r}"))
            continue
        checked += 1
        worst[h.id] = round(d.worst, 6)
        if d.ok:
            continue
        first, last = float(d.frames[0]), float(d.frames[-1])
        tol = max(h.tolerance.values())
        evidence.append(dict(base, window=[int(np.floor(first)), int(np.ceil(last))], frame=_frame(d.at),
                             drift_m=round(d.worst, 6), tolerance_m=tol,
                             reason=f"{h.effector} drifts {d.worst * 1000:.1f} mm from its grip on "
                                    f"{h.grip or h.body} at frame {_frame(d.at)} (beyond {tol * 1000:.1f} mm "
                                    f"from frame {_frame(first)} to {_frame(last)})"))
    out = (evidence, {"holds": checked, "hold_drift_m": worst})
    film.extra["holds"] = out
    return out


def _frame(t: float):
    """A frame number as a person reads it: whole frames whole, others to a tenth."""
    return int(round(t)) if abs(t - round(t)) < 1e-9 else round(t, 1)
