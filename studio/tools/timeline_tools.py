"""Timeline tools: the plan, a segment's motion tool, reviews, the bake, the
verifiers and stills. A review is recorded as made by whoever called the tool
(a person, the agent, a replay), never as someone else."""
from __future__ import annotations


from studio.scene.io import load_scene
from studio.store.reports import load_reports
from studio.timeline.motion import check_params
from studio.timeline.commands import DeleteState, ReviewState, SetState
from studio.timeline.gate import check_status
from studio.timeline.motion import MotionError
from studio.timeline.plan import load_plan, validate_plan
from studio.timeline.segment_commands import AuthorSegment, DropSegment, SetPlan, with_segment_tool
from studio.timeline.storyboard import State, content_hash, put_state

from studio.tools.context import ToolContext, ToolOutcome
from studio.tools.errors import ToolRefused


def set_plan(box: ToolContext, a: dict) -> ToolOutcome:
    plan = a["plan"]
    validate_plan(plan, load_scene(box.project))       # PlanError names the field
    return box.run("set_plan", a, SetPlan(box.project, plan, box.actor),
                   {"states": len(plan.get("states", [])), "segments": len(plan.get("motion", []))})


def set_segment_tool(box: ToolContext, a: dict) -> ToolOutcome:
    params = a.get("params", {})
    scene = load_scene(box.project)
    try:
        check_params(a["tool"], params, "set_segment_tool.params", scene)
    except MotionError as e:
        raise ToolRefused(str(e)) from None
    plan = with_segment_tool(load_plan(box.project), a["segment"], a["tool"], params)
    validate_plan(plan, scene)
    cmd = SetPlan(box.project, plan, box.actor, label=f"{a['segment']} by {a['tool']}")
    return box.run("set_segment_tool", a, cmd, {"segment": a["segment"], "tool": a["tool"]})


def review_state(box: ToolContext, a: dict) -> ToolOutcome:
    st = box.state(a["state"])
    if a["verdict"] == "approve":
        scene = load_scene(box.project)
        chash = content_hash(scene, st.pose, st.frame)
        _, checked = load_reports(box.project, f"state:{st.id}")
        failing = check_status(box.project, st.id, chash)
        if failing:
            hint = "; run_verifiers first" if checked != chash else ""
            raise ToolRefused(f"review_state: not approved: state {st.id} {'; '.join(failing)}{hint}")
    cmd = ReviewState(box.project, st.id, a["verdict"], a.get("note", ""), box.actor)
    return box.run("review_state", a, cmd, {"state": st.id, "verdict": a["verdict"], "reviewer": box.actor})


def author_segment(box: ToolContext, a: dict) -> ToolOutcome:
    tool, params = a.get("tool"), a.get("params")
    if params is not None and tool is None:
        raise ToolRefused("author_segment.params: parameters given but no tool named")
    if tool is not None:
        try:
            check_params(tool, params or {}, "author_segment.params", load_scene(box.project))
        except MotionError as e:
            raise ToolRefused(str(e)) from None
    cmd = AuthorSegment(box.project, a["segment"], box.actor, tool, params)
    out = box.run("author_segment", a, cmd, {"segment": a["segment"]})
    baked = cmd.baked
    out.result.update(tool=baked.tool, frames=[baked.tracks.frame_start, baked.tracks.frame_end],
                      **({"notes": baked.notes} if baked.notes else {}))
    return out


def drop_segment(box: ToolContext, a: dict) -> ToolOutcome:
    from studio.timeline.film import list_segments
    if not any(r["segment"] == a["segment"] for r in list_segments(box.project)):
        raise ToolRefused(f"drop_segment.segment: {a['segment']!r} is not baked; nothing to drop")
    return box.run("drop_segment", a, DropSegment(box.project, a["segment"], box.actor), {"segment": a["segment"]})


def run_verifiers(box: ToolContext, a: dict) -> ToolOutcome:
    from studio.tools.verify import verify_and_store
    st = box.state(a["state"])
    scene = load_scene(box.project)
    row = box.project.db.execute("SELECT content_hash FROM states WHERE id = ?", [st.id]).fetchone()
    if row[0] != content_hash(scene, st.pose, st.frame):     # the scene changed under the state: rebind it first
        put_state(box.project, scene, st, actor=box.actor, action="rebind state to scene")
    reports = verify_and_store(box.project, a["state"])
    summary = {r.name: r.verdict for r in reports}
    evidence = {r.name: r.evidence[:3] for r in reports if r.verdict == "fail"}
    return ToolOutcome("run_verifiers", a, {"done": verdict_words(st.id, reports), "verdicts": summary,
                                            "evidence": evidence})


def verdict_words(state: str, reports) -> str:
    """What the checks said of a state, required failures first: never a bare 'ok' for a failing state."""
    from studio.checks.report import REQUIRED
    failing = [r for r in reports if r.name in REQUIRED and r.verdict not in ("pass", "not_applicable")]
    if failing:
        return f"{state} fails " + ", ".join(f"{r.name} ({len(r.evidence) or r.verdict} finding"
                                             f"{'' if len(r.evidence) == 1 else 's'})" if r.evidence
                                             else f"{r.name} ({r.verdict})" for r in failing)
    advisory = [r.name for r in reports if r.name not in REQUIRED and r.verdict == "fail"]
    return f"{state}: required checks pass" + (f"; advisory: {', '.join(advisory)} fail" if advisory else "")


def request_render(box: ToolContext, a: dict) -> ToolOutcome:
    from studio.tools.verify import queue_still
    box.state(a["state"])
    job = queue_still(box.project, a["state"])
    return ToolOutcome("request_render", a, {"queued": job})


def adopt_end_state(box: ToolContext, a: dict) -> ToolOutcome:
    """The segment's second state becomes the run's own end, as its simulation offers it; the state's
    pose changes, so its review is stale and it needs checks and a review like any other."""
    from studio.scene.pose import Pose
    from studio.timeline.author import offered_end
    from studio.timeline.gate import parse_segment
    scene = load_scene(box.project)
    pose, offer = offered_end(box.project, a["segment"], scene)     # gate, tool and MotionError name the cause
    st = box.state(parse_segment(a["segment"])[1])
    new = State(st.id, st.frame, Pose.from_dict(pose.to_dict(), scene, where="adopt_end_state"), st.shot,
                st.description, st.still, st.visible)
    cmd = SetState(box.project, new, box.actor)
    cmd.label = f"adopt the end of {a['segment']} as {st.id}"
    worst = offer["differences"][offer["worst"]]
    return box.run("adopt_end_state", a, cmd, {
        "state": st.id, "worst": offer["worst"], "metres": round(worst["metres"], 6),
        "radians": round(worst["radians"], 6), "next": f"review {st.id}: its pose changed, so its review is stale"})


def delete_state(box: ToolContext, a: dict) -> ToolOutcome:
    box.state(a["state"])
    return box.run("delete_state", a, DeleteState(box.project, a["state"], box.actor), {"state": a["state"]})


TOOLS = {"delete_state": delete_state, "set_plan": set_plan, "set_segment_tool": set_segment_tool, "review_state": review_state,
         "author_segment": author_segment, "drop_segment": drop_segment, "run_verifiers": run_verifiers,
         "request_render": request_render, "adopt_end_state": adopt_end_state}
