"""Running the verifiers: on a film, on one storyboard state, on an edited interval.

Each verifier is a module with NAME and verify(footage) -> Report. `run_checks`
runs them all; a verifier that raises becomes an `error` report (its message
in the evidence) and the others still run. `verify_film` and `verify_state`
store their reports in the project with the hash of what they checked, so a
report about an older film or state is recognisable as stale.
`FilmCheck` keeps a film's prepared assets and measured contacts so that
re-verifying an edited interval costs only that interval.
"""
from __future__ import annotations

import json
import time
import traceback
from typing import TYPE_CHECKING

from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks

from studio.checks import (contact_slip, continuity, events, joint_limits, penetration, support_margin, supported,
               wellformed)
from studio.checks.contacts import ContactCache
from studio.checks.footage import Footage
from studio.checks.report import Report

if TYPE_CHECKING:        # a film from a file needs no project: these load when a project is verified
    import trimesh

    from studio.store.project import Project

VERIFIERS = [wellformed, joint_limits, penetration, events, supported, continuity, support_margin, contact_slip]


def run_on(footage: Footage, names: list[str] | None = None) -> list[Report]:
    """Every verifier (or those named) on prepared footage; a crash is an error report.

    BLAS keeps to one thread meanwhile: the verifiers' products are small (points or poses times a
    few planes), where a second thread costs more in handing over, and in spinning while it waits
    for the next, than it saves (2.5x the CPU seconds on a film of many-faced discs)."""
    from threadpoolctl import ThreadpoolController
    out = []
    with ThreadpoolController().limit(limits=1, user_api="blas"):
        for v in VERIFIERS:
            if names is not None and v.NAME not in names:
                continue
            t0 = time.perf_counter()
            try:
                r = v.verify(footage)
            except Exception as err:   # a broken verifier must not take the run down with it
                r = Report(v.NAME, "error", [{"reason": f"{type(err).__name__}: {err}",
                                               "trace": traceback.format_exc(limit=4)}], {})
            r.seconds = round(time.perf_counter() - t0, 4)
            out.append(r)
    return out


def run_checks(scene: Scene, meshes: dict[str, trimesh.Trimesh], tracks: Tracks, *, plan: dict | None = None,
               states: list | None = None, names: list[str] | None = None,
               cache: ContactCache | None = None, attachments: list[dict] | None = None,
               growth: dict | None = None) -> list[Report]:
    """Verify baked tracks; states: (frame, Pose[, id]) the tracks must hit; attachments: the holds
    the motion tools recorded ({"frame", "body", "start", "end"}), read by Supported and ContactSlip;
    growth: bodies whose size changes during the film (animated glTF scale)."""
    footage = Footage.build(scene, meshes, tracks, plan=plan, states=states, cache=cache, growth=growth)
    if attachments:
        footage.extra["attachments"] = list(attachments)
    return run_on(footage, names)


def tool_attachments(project: Project) -> list[dict]:
    """Every hold the baked segments' motion tools recorded (see `segment_attachments`)."""
    return [a for holds in segment_attachments(project).values() for a in holds]


def segment_attachments(project: Project) -> dict[str, list[dict]]:
    """The holds each baked segment's motion tool recorded, by segment. A hold recorded before holds
    carried their tolerance takes the tolerance its tool was given (the segment's `tolerance`
    parameter), and one on the segment's `on` frame is a ride."""
    from studio.timeline.author import AUTHORED_DOC
    doc = project.get_doc(AUTHORED_DOC) or {}
    out: dict[str, list[dict]] = {}
    for name, seg in doc.items():
        if not isinstance(seg, dict):
            continue
        out[name] = normal_attachments(seg.get("params") or {}, seg.get("attachments", []) or [])
    return out


def normal_attachments(params: dict, attachments: list[dict]) -> list[dict]:
    """A segment's hold records as the hold check reads them (tolerance and ride said)."""
    given = params.get("tolerance")
    hands = {e.get("frame") for e in params.get("effectors", []) or [] if isinstance(e, dict)}
    out = []
    for a in attachments:
        if "tolerance" not in a and isinstance(given, (int, float)):
            a = dict(a, tolerance=given)
        if "ride" not in a and a.get("frame") == params.get("on") and a.get("frame") not in hands:
            a = dict(a, ride=True)      # recorded before rides said so: the body rode `on` that frame
        out.append(a)
    return out


def approved_states(project: Project) -> list[tuple[int, Pose, str]]:
    """Storyboard states whose latest review approves them."""
    from studio.timeline.storyboard import list_states
    from studio.timeline.reviews import latest_review
    out = []
    for s in list_states(project):
        r = latest_review(project, s.id)
        if r is not None and r.verdict == "approve":
            out.append((s.frame, s.pose, s.id))
    return out


def storyboard_states(project: Project) -> list[tuple[int, Pose, str]]:
    """Every storyboard state, whatever its review: the film must hit each one, and a rejection
    is the gate's to report, not a reason to stop checking the tracks against the state."""
    from studio.timeline.storyboard import list_states
    return [(s.frame, s.pose, s.id) for s in list_states(project)]


def film_hash(tracks: Tracks, scene: Scene, plan: dict | None) -> str:
    from studio.scene.meshes import scene_design_id
    from studio.timeline.film import film_binding
    return film_binding(tracks, scene_design_id(scene), plan)


def verify_film(project: Project, cache: ContactCache | None = None) -> list[Report]:
    """Verify the project's baked film and store the reports as target 'film' (unless read-only)."""
    from studio.checks.report import save_reports
    from studio.scene.io import load_scene
    from studio.scene.meshes import scene_meshes
    from studio.timeline.film import load_film_tracks
    scene = load_scene(project)
    tracks = load_film_tracks(project)
    if tracks is None:
        raise ValueError(f"{project.path}: nothing is baked yet (no segments in the tracks table)")
    plan = project.get_doc("plan")
    states = [(f, p.completed(scene), i) for f, p, i in storyboard_states(project)]
    reports = run_checks(scene, scene_meshes(scene, project.path), tracks, plan=plan, states=states, cache=cache,
                         attachments=tool_attachments(project))
    if not project.readonly:        # a read-only project is verified, and told so, but keeps its reports
        save_reports(project, "film", reports, checked_hash=film_hash(tracks, scene, plan), actor="verifier")
    return reports


def verify_state(project: Project, state_id: str) -> list[Report]:
    """One-frame checks of a storyboard state, stored as target 'state:<id>' (unless read-only)."""
    from studio.checks.report import save_reports
    from studio.scene.io import load_scene
    from studio.scene.meshes import scene_meshes
    from studio.timeline.storyboard import content_hash, get_state
    scene = load_scene(project)
    state = get_state(project, state_id)
    if state is None:
        raise KeyError(f"{project.path}: no storyboard state {state_id!r}")
    pose = state.pose.completed(scene, where=f"state {state_id}.pose")
    tracks = Tracks.from_poses(state.frame, [pose])
    footage = Footage.build(scene, scene_meshes(scene, project.path), tracks, plan=project.get_doc("plan"),
                            states=[(state.frame, pose, state.id)])
    footage.extra["whole_windows"] = True
    reports = run_on(footage)
    # bound to the hash of the state as verified now (the stored column dates from its last edit,
    # so a scene edit since would leave these reports looking stale forever)
    if not project.readonly:        # a read-only project is verified, and told so, but keeps its reports
        save_reports(project, f"state:{state_id}", reports, checked_hash=content_hash(scene, pose, state.frame),
                     actor="verifier")
    return reports


class FilmCheck:
    """A film's prepared meshes and measured contacts, for re-verifying edited intervals."""

    def __init__(self, scene: Scene, meshes: dict[str, trimesh.Trimesh], *, plan: dict | None = None,
                 states: list | None = None, attachments: list[dict] | None = None):
        self.scene, self.meshes, self.plan, self.states = scene, meshes, plan, list(states or [])
        self.attachments = list(attachments or [])      # the holds the motion tools recorded
        self.cache = ContactCache()
        self.tracks: Tracks | None = None
        self.reports: list[Report] = []

    def verify(self, tracks: Tracks) -> list[Report]:
        self.tracks = tracks
        self.reports = run_checks(self.scene, self.meshes, tracks, plan=self.plan, states=self.states,
                                  cache=self.cache, attachments=self.attachments)
        return self.reports

    def verify_interval(self, tracks: Tracks, start: int, end: int) -> list[Report]:
        """Re-verify edited tracks whose changes lie in frames start..end.

        Checks that need contacts (penetration, support, margin, slip) run on the
        interval only and keep their findings elsewhere; the cheap whole-film
        checks (well-formed, joint limits, events, continuity) run on all frames."""
        if self.tracks is None or not self.reports:
            return self.verify(tracks)
        # a frame either side, so that the frame pairs into and out of the interval are swept again
        lo, hi = max(start - 1, tracks.frame_start), min(end + 1, tracks.frame_end)
        part = tracks.slice(lo, hi)
        local = [penetration.NAME, supported.NAME, support_margin.NAME, contact_slip.NAME]
        fresh = {r.name: r for r in run_checks(self.scene, self.meshes, part, plan=self.plan, cache=self.cache,
                                               names=local, attachments=self.attachments)}
        whole = {r.name: r for r in run_checks(self.scene, self.meshes, tracks, plan=self.plan,
                                               states=self.states, cache=self.cache, attachments=self.attachments,
                                               names=[v.NAME for v in VERIFIERS if v.NAME not in local])}
        merged = []
        for old in self.reports:
            if old.name in whole:
                merged.append(whole[old.name])
            elif old.name in fresh:
                merged.append(_merge(old, fresh[old.name], lo, min(end, hi), tracks.n_frames))
            else:
                merged.append(old)
        self.tracks, self.reports = tracks, merged
        return merged


def _merge(old: Report, new: Report, start: int, end: int, n_frames: int) -> Report:
    """Old evidence outside start..end plus the new evidence inside it (a frame pair by its first
    frame); rates recomputed."""
    def inside(e: dict) -> bool:
        return start <= e.get("frame", start - 1) <= end
    keep = [e for e in old.evidence if not inside(e)]
    ev = sorted(keep + [e for e in new.evidence if inside(e)], key=lambda e: (e.get("frame", 0), "between" in e))
    metrics = dict(old.metrics)
    if old.name == penetration.NAME:
        frames = {e["frame"] for e in ev if not e.get("between")}
        pairs = {e["frame"] for e in ev if e.get("between") and not e.get("unsettled")}
        unsettled = {e["frame"] for e in ev if e.get("unsettled")}
        metrics.update(penetration_rate=len(frames) / max(n_frames, 1), frames_with_penetration=len(frames),
                       frame_pairs_with_penetration=len(pairs), between_rate=len(pairs) / max(n_frames - 1, 1),
                       frame_pairs_unsettled=len(unsettled))
    if old.name == supported.NAME and metrics.get("body_frames"):
        metrics.update(floating_rate=len(ev) / metrics["body_frames"], floating_body_frames=len(ev))
    verdict = "fail" if ev else ("pass" if "pass" in (old.verdict, new.verdict) else old.verdict)
    if "error" in (old.verdict, new.verdict):
        verdict = "error"
    return Report(old.name, verdict, ev, metrics, new.seconds)


def reports_json(reports: list[Report]) -> str:
    return json.dumps([r.to_dict() for r in reports], indent=1)


