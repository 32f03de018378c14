"""The agent's reach into checks and renders: verify a state, queue a still."""
from __future__ import annotations

from studio.checks.report import Report, save_reports
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.storyboard import content_hash, get_state

from .errors import ToolRefused


def check_pose(project: Project, scene: Scene, pose: Pose, frame: int, state_id: str = "") -> list[Report]:
    """The verifiers' reports for one static pose (nothing is stored)."""
    try:
        from studio.checks.run import verify_pose
    except ImportError:
        raise ToolRefused("the verifiers (studio.checks.run) are not installed in this studio") from None
    return verify_pose(project, scene, pose, frame=frame, state_id=state_id)


def verify_and_store(project: Project, state_id: str, actor: str = "agent") -> list[Report]:
    """Run the verifiers on a stored state and save the reports the gate reads."""
    scene = load_scene(project)
    st = get_state(project, state_id)
    if st is None:
        raise ToolRefused(f"there is no state {state_id!r}")
    pose = st.pose.completed(scene)
    reports = check_pose(project, scene, pose, st.frame, state_id)
    save_reports(project, f"state:{state_id}", reports, content_hash(scene, pose), actor=actor)
    return reports


def queue_still(project: Project, state_id: str) -> int:
    """Submit a storyboard still of the state to the job queue; returns the job id."""
    from studio.jobs.queue import submit
    from studio.jobs.spec import still_spec
    job = submit(project, "still", lambda folder: still_spec(project, folder, [state_id]), actor="agent")
    return job.id
