"""Timeline tools: the plan, a segment's motion tool, reviews, the bake, the
verifiers and stills. A review is recorded as made by whoever called the tool
(a person, the agent, a replay), never as someone else."""
from __future__ import annotations


from studio.scene.io import load_scene
from studio.store.reports import load_reports
from studio.timeline.motion import check_params
from studio.timeline.commands import DeleteState, ReviewState
from studio.timeline.gate import check_status
from studio.timeline.motion import MotionError
from studio.timeline.plan import load_plan, validate_plan
from studio.timeline.segment_commands import AuthorSegment, DropSegment, SetPlan, with_segment_tool
from studio.timeline.storyboard import content_hash, put_state

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
    return ToolOutcome("run_verifiers", a, {"verdicts": summary, "evidence": evidence})


def request_render(box: ToolContext, a: dict) -> ToolOutcome:
    from studio.tools.verify import queue_still
    box.state(a["state"])
    job = queue_still(box.project, a["state"])
    return ToolOutcome("request_render", a, {"queued": job})


def delete_state(box: ToolContext, a: dict) -> ToolOutcome:
    box.state(a["state"])
    return box.run("delete_state", a, DeleteState(box.project, a["state"], box.actor), {"state": a["state"]})


TOOLS = {"delete_state": delete_state, "set_plan": set_plan, "set_segment_tool": set_segment_tool, "review_state": review_state,
         "author_segment": author_segment, "drop_segment": drop_segment, "run_verifiers": run_verifiers,
         "request_render": request_render}
