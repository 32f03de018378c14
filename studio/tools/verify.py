"""The agent's reach into checks and renders: verify a pose or a state, queue a still.

`check_pose` runs the verifiers on a pose that is not stored (a repair
candidate) exactly as `studio.checks.run.verify_state` runs them on a stored
state, so a verified proposal gives the same verdicts once applied."""
from __future__ import annotations

from studio.checks.footage import Footage
from studio.checks.report import Report
from studio.checks.run import run_on, verify_state
from studio.scene.ir import Scene
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project
from studio.timeline.storyboard import get_state

from studio.tools.errors import ToolRefused


def check_pose(project: Project, scene: Scene, pose: Pose, frame: int, state_id: str = "") -> list[Report]:
    """The verifiers' reports for one static pose (nothing is stored)."""
    footage = Footage.build(scene, scene_meshes(scene, project.path), Tracks.from_poses(frame, [pose]),
                            plan=project.get_doc("plan"), states=[(frame, pose, state_id)])
    footage.extra["whole_windows"] = True       # as verify_state does for a stored state
    return run_on(footage)


def verify_and_store(project: Project, state_id: str) -> list[Report]:
    """Run the verifiers on a stored state and save the reports the gate reads."""
    if get_state(project, state_id) is None:
        raise ToolRefused(f"there is no state {state_id!r}")
    return verify_state(project, state_id)


def queue_still(project: Project, state_id: str) -> int:
    """Submit a storyboard still of the state to the job queue; returns the job id."""
    from studio.jobs.queue import submit
    from studio.jobs.spec import still_spec
    job = submit(project, "still", lambda folder: still_spec(project, folder, [state_id]), actor="agent")
    return job.id
