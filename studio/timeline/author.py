"""One generic bake: a segment's motion tool (named in the plan, interpolate
when none) authors tracks from the scene and the two approved states, then
`bake_segment` gates, completes, pins and stores them.

The gate is asked before the tool runs, so a refused segment costs nothing
and a tool never sees unapproved states. Parameters are checked against the
tool's JSON schema first; an error names the field
(`plan.motion[3].params.path[1]: ...`). What the tool reports (attachments,
notes, an end state of its own) is kept beside the tracks, never dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project

from studio.timeline.bake import MAX_RESIDUAL, bake_segment, residual_limit
from studio.timeline.gate import parse_segment, require_storyboards
from studio.timeline.motion import Authored, EndStateOffered, MotionError, Segment, check_params, motion_tool
from studio.timeline.plan import load_plan, segment_entry
from studio.timeline.storyboard import State, get_state, list_states

DEFAULT_TOOL = "interpolate"
AUTHORED_DOC = "authored"          # per segment: tool, params, attachments, notes


@dataclass
class Baked:
    """What one generic bake stored."""
    segment: str
    tool: str
    params: dict
    tracks: Tracks
    attachments: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    end_pose: dict | None = None
    max_residual: float = MAX_RESIDUAL

    def record(self) -> dict:
        return {"tool": self.tool, "params": self.params, "attachments": self.attachments,
                "notes": self.notes, **({"end_pose": self.end_pose} if self.end_pose else {})}


def segment_tool(plan: dict | None, segment: str) -> tuple[str, dict]:
    """The tool and params the plan names for a segment; interpolate when it names none."""
    entry = segment_entry(plan, segment)
    return entry.get("tool") or DEFAULT_TOOL, dict(entry.get("params") or {})


def segment_of(project: Project, segment: str, scene: Scene, plan: dict | None) -> Segment:
    """What a motion tool may read for `segment`: both states (and the others, for a run that
    starts earlier) with their poses completed."""
    done = {s.id: State(s.id, s.frame, s.pose.completed(scene), s.shot, s.description, s.still, s.visible)
            for s in list_states(project)}
    a, b = (done.get(sid) or get_state(project, sid) for sid in parse_segment(segment))
    return Segment(segment, scene, a, b, plan or {}, project.fps, project.path, done)


def author(project: Project, segment: str, tool: str | None = None, params: dict | None = None,
           scene: Scene | None = None) -> Baked:
    """Run the segment's motion tool (gate first); returns the unstored result."""
    scene = scene or load_scene(project)
    plan = load_plan(project)
    planned_tool, planned_params = segment_tool(plan, segment)
    if tool is None:
        tool, params = planned_tool, planned_params if params is None else params
    params = check_params(tool, dict(params or {}), f"{segment} {tool} params", scene)
    require_storyboards(project, segment, scene)
    seg = segment_of(project, segment, scene, plan)
    out: Authored = motion_tool(tool).author(seg, params)
    return Baked(segment, tool, params, out.tracks, list(out.attachments), list(out.notes),
                 out.end_pose.to_dict() if out.end_pose is not None else None,
                 residual_limit(motion_tool(tool).schema, params))


def offered_end(project: Project, segment: str, scene: Scene | None = None) -> tuple[Pose, dict]:
    """The pose the segment's tool offers as its second state (a simulation's own end), and the offer
    (per body, how far that end lies from the state as it stands). The gate asks only for the first
    state: the run starts there, and the second is what the offer would replace."""
    scene = scene or load_scene(project)
    plan = load_plan(project)
    tool, params = segment_tool(plan, segment)
    params = check_params(tool, params, f"{segment} {tool} params")
    if not motion_tool(tool).offers_end:
        raise MotionError(f"{segment}: its motion tool {tool!r} offers no end state of its own "
                          f"(only a simulation does: simulate, planar)")
    require_storyboards(project, segment, scene, first_only=True)
    seg = segment_of(project, segment, scene, plan)
    try:
        out = motion_tool(tool).author(seg, params)
    except EndStateOffered as e:
        return e.end_pose, e.offer()
    return out.end_pose, out.offer


def store(project: Project, baked: Baked, actor: str, scene: Scene | None = None) -> Tracks:
    """Bake the authored tracks (gate, complete, pin) and keep what the tool reported."""
    with project.transaction():
        stored = bake_segment(project, baked.segment, baked.tracks, baked.tool, actor=actor, scene=scene,
                              max_residual=baked.max_residual)
        put_authored(project, baked.segment, baked.record(), actor)
    baked.tracks = stored
    return stored


def put_authored(project: Project, segment: str, record: dict | None, actor: str) -> None:
    doc = dict(project.get_doc(AUTHORED_DOC) or {})
    if record is None:
        doc.pop(segment, None)
    else:
        doc[segment] = record
    project.put_doc(AUTHORED_DOC, doc, actor=actor, action=f"authored {segment}")


def authored(project: Project, segment: str) -> dict | None:
    """What the tool reported when the segment was last baked (attachments, notes)."""
    return (project.get_doc(AUTHORED_DOC) or {}).get(segment)


def author_and_bake(project: Project, segment: str, actor: str, tool: str | None = None,
                    params: dict | None = None, scene: Scene | None = None) -> Baked:
    baked = author(project, segment, tool, params, scene)
    store(project, baked, actor, scene)
    return baked
