"""Project progress: one figure in [0, 1] and what is still missing.

A weighted sum of stage scores, each counting only as far as its prerequisites
do: plan -> scene -> each state (authored, passing its checks, approved) ->
each segment (baked for the current states, verified passing) -> the film verified and rendered. An
edit that stales a review or a segment, or a rejection, lowers the figure again. A project
whose every storyboard state is approved and current, whose film is verified
(stored "film" reports pass for the current tracks) and rendered (a succeeded
film job, or a video in renders/, newer than the last bake) scores exactly 1;
every other project scores below 1.
"""
from __future__ import annotations

from studio.scene.io import load_scene
from studio.scene.ir import IRError
from studio.store.project import Project
from studio.store.reports import load_reports, required_checks_pass

from studio.timeline import film
from studio.timeline.bake import bounds_hash
from studio.timeline.gate import board_status, parse_segment
from studio.timeline.plan import PlanError, load_plan, plan_segments, validate_plan
from studio.timeline.split import cut_from

WEIGHTS = {"plan": 0.1, "scene": 0.1, "states": 0.3, "segments": 0.3, "render": 0.2}
VIDEO = (".mp4", ".mov", ".mkv")


def film_verified(project: Project) -> tuple[bool, str]:
    """Stored film reports pass, for the current tracks, baked against the current states."""
    current = film.film_hash(project)
    if current is None:
        return False, "film: no baked tracks"
    stale = [r for r in film.list_segments(project) if r["bounds_hash"] != bounds_hash(project, r["segment"])]
    if stale:
        cut = [r["segment"] for r in stale if cut_from(r["bounds_hash"])]
        if cut:
            return False, f"film: {', '.join(cut)} cut by a new key; bake {'them' if len(cut) > 1 else 'it'} again"
        return False, f"film: {', '.join(r['segment'] for r in stale)} baked against states that have changed since"
    reports, checked = load_reports(project, "film")
    if not reports:
        return False, "film: not verified"
    if checked != current:
        return False, "film: verified for older tracks; verify again"
    if not required_checks_pass(reports):
        return False, "film: required checks fail"
    return True, ""


def film_rendered(project: Project) -> bool:
    """A succeeded film job or a video in renders/, no older than the latest bake."""
    segs = film.list_segments(project)
    last_bake = max((s["at"] or "" for s in segs), default="")
    for r in project.db.query("SELECT updated, created FROM jobs WHERE kind = 'film' AND state = 'succeeded'"):
        if (r["updated"] or r["created"] or "") >= last_bake:
            return True
    renders = project.path / "renders"
    if renders.exists():
        import datetime as dt
        for p in renders.rglob("*"):
            if p.suffix.lower() in VIDEO:
                at = dt.datetime.fromtimestamp(p.stat().st_mtime, dt.timezone.utc).isoformat(timespec="milliseconds")
                if at >= last_bake:
                    return True
    return False


def progress(project: Project) -> tuple[float, list[str]]:
    """(value in [0, 1], what is missing in words)."""
    missing: list[str] = []
    verified, why = film_verified(project)
    rendered = film_rendered(project)
    if verified and rendered and _board_ok(project):
        return 1.0, []
    score = dict.fromkeys(WEIGHTS, 0.0)
    plan = load_plan(project)
    try:
        validate_plan(plan)
        score["plan"] = 1.0
    except PlanError as e:
        missing.append("plan: none stored" if plan is None else f"plan: {e}")
    try:
        scene = load_scene(project)
    except IRError as e:
        scene = None
        missing.append(f"scene: {e}")
    if score["plan"] and scene is not None and scene.bodies:
        try:
            validate_plan(plan, scene)
            score["scene"] = 1.0
        except PlanError as e:
            missing.append(f"scene: does not match the plan ({e})")
    elif scene is not None and not scene.bodies:
        missing.append("scene: no bodies")
    statuses = {}
    if score["scene"]:
        statuses = {s.state_id: s for s in board_status(project, scene)}
        planned = [s["id"] for s in plan.get("states", [])] or list(statuses)
        score["states"] = sum(_state_score(statuses.get(sid)) for sid in planned) / len(planned) if planned else 0.0
        missing += [f"state {sid}: {statuses[sid].reasons[0]}" for sid in planned
                    if sid in statuses and not statuses[sid].ok]
        if not planned:
            missing.append("states: the plan has none")
        segs = plan_segments(plan)
        baked = {r["segment"]: r for r in film.list_segments(project)}
        good = 0
        for seg in segs:
            a, b = parse_segment(seg)
            if not (statuses.get(a) and statuses[a].ok and statuses.get(b) and statuses[b].ok):
                missing.append(f"segment {seg}: waiting for its states")
            elif seg not in baked:
                missing.append(f"segment {seg}: not baked")
            elif baked[seg]["bounds_hash"] != bounds_hash(project, seg, scene):
                missing.append(f"segment {seg}: " + ("cut by a new key; bake it again" if cut_from(
                    baked[seg]["bounds_hash"]) else "its states changed since it was baked"))
            elif not (verified or _segment_passes(project, seg, baked[seg]["hash"])):
                missing.append(f"segment {seg}: baked, not verified passing")
                good += 0.5
            else:
                good += 1
        score["segments"] = good / len(segs) if segs else 0.0
    if not verified:
        missing.append(why)
    elif not rendered:
        missing.append("film: not rendered since the last bake")
    value = sum(WEIGHTS[k] * score[k] for k in WEIGHTS)
    return min(value, 0.999), missing


def _board_ok(project: Project) -> bool:
    try:
        return all(s.ok for s in board_status(project))
    except IRError:
        return False


def _state_score(status) -> float:
    """Authored 0.25, its checks passing +0.25, approved and current +0.5."""
    if status is None or status.status == "missing":
        return 0.0
    failing = any(r.startswith("failing") for r in status.reasons)
    return 0.25 + (0.0 if failing else 0.25) + (0.5 if status.ok else 0.0)


def _segment_passes(project: Project, segment: str, tracks_hash: str) -> bool:
    reports, checked = load_reports(project, f"segment:{segment}")
    return bool(reports) and checked == tracks_hash and required_checks_pass(reports)
