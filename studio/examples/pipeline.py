"""The whole pipeline on one example film, as a plain function.

An example is its calls file (`resources/examples/<name>/calls.jsonl`),
replayed into a new project through the same tool layer and code path as
`studio agent replay`, stage by stage: the scene → the plan → storyboard
states, verified → render stills → the approvals the file makes (only those
`approve` allows) → motion authored through the gate → every frame verified
→ the film rendered → .blend and .mp4 exported.

`run_pipeline(name, out, approve, state)` reports progress through `state`
(stage, fraction, message) and stops between stages when `state.cancelled`
is set, so the CLI wraps it in a text progress bar and a GUI in a worker.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from studio.tools.calls import Call, CallsFileError, ReplayRefused, read_calls, replay
from studio.checks.report import Report, required_checks_pass
from studio.checks.run import verify_film, verify_state
from studio.checks.score import rates
from studio.jobs import queue, spec as specs
from studio.jobs.dispatch import run_submitted
from studio.jobs.export_gate import film_gate
from studio.scene.io import load_scene
from studio.store.project import Project
from studio.store.reports import load_reports
from studio.store.settings import load_settings
from studio.timeline.film import load_film_tracks
from studio.timeline.gate import board_status
from studio.timeline.storyboard import content_hash, list_states

from studio.examples import calls_file, example_names


class PipelineError(Exception):
    """A stage that could not finish; the message says which and why."""


@dataclass
class Stage:
    name: str
    seconds: float = 0.0
    result: str = ""


@dataclass
class Summary:
    project: Path
    stages: list[Stage] = field(default_factory=list)
    state_verdicts: dict[str, str] = field(default_factory=dict)
    approved: list[str] = field(default_factory=list)
    film_reports: list[Report] = field(default_factory=list)
    outputs: dict[str, Path] = field(default_factory=dict)

    @property
    def required_pass(self) -> bool:
        return bool(self.film_reports) and required_checks_pass(self.film_reports)


class QuietState:
    """A progress sink that records nothing (tests, scripts)."""

    cancelled = False

    def stage(self, name: str) -> None:
        pass

    def progress(self, fraction: float, message: str = "") -> None:
        pass


STAGES = {"scene": ("name_scene", "add_material", "import_character", "create_body", "build_part_code", "add_frame",
                    "add_camera", "allow_overlap"),
          "plan": ("set_plan", "set_segment_tool"),
          "storyboard": ("set_state", "set_joint", "place_relative", "solve_ik", "run_verifiers", "request_render"),
          "review": ("review_state",),
          "motion": ("author_segment",)}
STAGE_OF = {tool: stage for stage, tools in STAGES.items() for tool in tools}


def example_calls(name: str) -> list[Call]:
    """The calls of an example, checked line by line before anything runs."""
    if name not in example_names():
        raise PipelineError(f"no example named {name!r}; there are: {', '.join(example_names()) or 'none'}")
    try:
        return read_calls(calls_file(name))
    except CallsFileError as e:
        raise PipelineError(str(e)) from None


def by_stage(calls: list[Call], where: str) -> dict[str, list[Call]]:
    """The calls of each stage; an example says them in stage order, so nothing is reordered."""
    order = list(STAGES)
    out: dict[str, list[Call]] = {st: [] for st in order}
    at = 0
    for c in calls:
        st = order.index(STAGE_OF.get(c.tool, "storyboard"))
        if st < at:
            raise PipelineError(f"{where} line {c.line}: {c.tool} belongs to the {order[st]} stage, "
                                f"but the {order[at]} stage has begun; an example says its calls in stage order")
        at = st
        out[order[st]].append(c)
    return out


def new_example_project(name: str, out: Path) -> Project:
    """The empty project an example is replayed into (fps 24, frames from 1001)."""
    return Project.create(out, name=name, fps=24, frame_start=1001)


def replay_example(project: Project, calls: list[Call], where: str) -> int:
    """Apply calls as `studio agent replay` does; PipelineError naming the line at a refusal."""
    try:
        return replay(project, calls, where)
    except ReplayRefused as e:
        raise PipelineError(str(e)) from None


def replay_stages(name: str, out: Path, stages: tuple[str, ...] = tuple(STAGES)) -> Project:
    """A new project at `out` holding the example's calls of the given stages, replayed in order
    (the scene alone, the storyboard for review, or the whole baked film); the caller closes it."""
    calls = example_calls(name)
    where = str(calls_file(name))
    part = by_stage(calls, where)
    project = new_example_project(name, out)
    try:
        for st in STAGES:
            if st in stages:
                replay_example(project, part[st], where)
    except BaseException:
        project.close()
        raise
    return project


def example_plan(name: str) -> dict:
    """The plan an example's calls file sets (its last set_plan)."""
    plans = [c.arguments["plan"] for c in example_calls(name) if c.tool == "set_plan"]
    if not plans:
        raise PipelineError(f"{calls_file(name)}: the example sets no plan")
    return plans[-1]


def run_pipeline(name: str, out: Path, approve: str = "all", state=None, render: bool = True,
                 resolution: tuple[int, int] | None = None) -> Summary:
    """Make the example film `name` in the new project folder `out`."""
    state = state or QuietState()
    summary = Summary(Path(out))
    settings = load_settings()

    def stage(label: str):
        if state.cancelled:
            raise PipelineError(f"cancelled before {label}")
        state.stage(label)
        s = Stage(label)
        summary.stages.append(s)
        return s

    calls = example_calls(name)
    where = str(calls_file(name))
    part = by_stage(calls, where)

    t = time.perf_counter()
    s = stage("scene")
    project = new_example_project(name, out)
    try:
        replay_example(project, part["scene"], where)
        s.result = f"{project.path}"
        s.seconds = time.perf_counter() - t

        t = time.perf_counter()
        s = stage("plan")
        replay_example(project, part["plan"], where)
        plan = project.get_doc("plan") or {}
        s.result = f"{len(plan.get('states', []))} key states, {len(plan.get('events', []))} events"
        s.seconds = time.perf_counter() - t

        t = time.perf_counter()
        s = stage("storyboard")
        replay_example(project, part["storyboard"], where)
        states = list_states(project)
        scene = load_scene(project)
        for i, st in enumerate(states):
            reports, checked = load_reports(project, f"state:{st.id}")
            if checked != content_hash(scene, st.pose, st.frame):     # the file did not verify this version
                reports = verify_state(project, st.id)
            summary.state_verdicts[st.id] = "pass" if required_checks_pass(reports) else "fail"
            state.progress((i + 1) / len(states), f"verified {st.id}")
        s.result = f"{len(states)} states, {sum(v == 'pass' for v in summary.state_verdicts.values())} passing"
        s.seconds = time.perf_counter() - t

        if render:
            t = time.perf_counter()
            s = stage("stills")
            job = _run_job(project, "still", lambda d: specs.still_spec(project, d, None, None,
                                                                           "BLENDER_WORKBENCH", resolution),
                           settings, state)
            s.result = f"{len(job.outputs)} stills"
            s.seconds = time.perf_counter() - t

        t = time.perf_counter()
        s = stage("review")
        wanted = _approvals(approve, [st.id for st in states])
        reviews = [c for c in part["review"] if c.arguments["state"] in wanted]
        replay_example(project, reviews, where)
        summary.approved = [c.arguments["state"] for c in reviews if c.arguments["verdict"] == "approve"]
        pending = [f"{b.state_id}: {'; '.join(b.reasons)}" for b in board_status(project) if not b.ok]
        s.result = f"{len(summary.approved)} approved" + (f"; not approved: {'; '.join(pending)}" if pending else "")
        s.seconds = time.perf_counter() - t
        if pending:
            raise PipelineError("motion needs every key state approved and passing: " + "; ".join(pending))

        t = time.perf_counter()
        s = stage("motion")
        replay_example(project, part["motion"], where)
        tracks = load_film_tracks(project)
        s.result = f"frames {tracks.frame_start}..{tracks.frame_end}" if tracks else "nothing baked"
        s.seconds = time.perf_counter() - t

        t = time.perf_counter()
        s = stage("verify film")
        summary.film_reports = verify_film(project)
        r = rates(summary.film_reports)
        s.result = (f"required {'pass' if summary.required_pass else 'FAIL'}, penetration "
                    f"{_pct(r['penetration_rate'])}, floating {_pct(r['floating_rate'])}")
        s.seconds = time.perf_counter() - t

        if render:
            t = time.perf_counter()
            s = stage("render film")
            video = project.path / "renders" / f"{name}.mp4"
            _run_job(project, "film", lambda d: specs.video_spec(project, d, "film", None, "BLENDER_WORKBENCH",
                                                                  resolution, 16, deliver_to=str(video)),
                     settings, state)
            summary.outputs["film"] = video
            s.result = str(video)
            s.seconds = time.perf_counter() - t

            t = time.perf_counter()
            s = stage("export")
            gate = film_gate(project)           # the same gate as `studio export` and File › Export
            if not gate.ok:
                raise PipelineError("export refused: " + "; ".join(gate.reasons))
            blend = project.path / "exports" / f"{name}.blend"
            _run_job(project, "export_blend", lambda d: specs.blend_spec(project, d, str(blend), None, resolution),
                     settings, state)
            summary.outputs["blend"] = blend
            s.result = str(blend)
            s.seconds = time.perf_counter() - t
    finally:
        project.close()
    return summary


def _approvals(approve: str, ids: list[str]) -> set[str]:
    if approve == "all":
        return set(ids)
    if approve in ("", "none"):
        return set()
    wanted = {a.strip() for a in approve.split(",") if a.strip()}
    unknown = wanted - set(ids)
    if unknown:
        raise PipelineError(f"--approve names states that are not in the storyboard: {', '.join(sorted(unknown))}")
    return wanted


def _run_job(project: Project, kind: str, build, settings: dict, state) -> queue.Job:
    job = queue.submit(project, kind, build, actor="demo")

    done = [0]

    def on_event(job_id: int, e: dict) -> None:
        of = e.get("of") or 0
        if e.get("stage") in ("frame", "still") and of:
            done[0] += 1
            state.progress(min(1.0, done[0] / of), f"{kind} {done[0]}/{of}")
    job = run_submitted(project, job.id, settings, None, on_event)
    if job.state != "succeeded":
        raise PipelineError(f"the {kind} job {job.id} {job.state}: {job.error} "
                            f"(log: {queue.job_dir(project, job.id) / 'log.txt'})")
    return job


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"
