"""Nothing is written outside the project: ids that become file names, output paths, mesh paths."""
from __future__ import annotations

import json
import re
import sys
import uuid
from pathlib import Path

import pytest

from jobs_scenes import film_project, hinge_scene
from studio.cli import main
from studio.jobs import queue, spec as specs
from studio.scene.io import save_scene
from studio.scene.ir import Body, Geometry, IRError, Scene
from studio.scene.meshes import MeshError, build_body_mesh
from studio.store.names import NameProblem, check_id
from studio.store.project import Project
from studio.timeline.plan import PlanError, save_plan
from studio.timeline.storyboard import State, get_state, list_states, put_state

CLIMB = f"../../../../tmp/x{uuid.uuid4().hex[:8]}"    # a name of this run alone


def _outside_files(root: Path) -> set[Path]:
    return set(root.rglob("*")) if root.exists() else set()


@pytest.mark.parametrize("bad", [CLIMB, "a/b", "a..b", "", ".hidden", "x" * 65, "sp ace", "/abs"])
def test_one_pattern_refuses_ids_that_are_no_plain_file_names(bad):
    with pytest.raises(NameProblem, match="state.id: .* is not a valid id"):
        check_id(bad, "state.id")


def test_a_state_id_that_climbs_is_refused_when_stored(tmp_project):
    scene, _ = film_project(tmp_project)
    with pytest.raises(NameProblem, match=re.escape(f"state.id: '{CLIMB}' is not a valid id")):
        put_state(tmp_project, scene, State(CLIMB, 1002, get_state(tmp_project, "a").pose, shot="main"))
    with pytest.raises(NameProblem, match=r"state s1.shot: '\.\./w' is not a valid id"):
        put_state(tmp_project, scene, State("s1", 1002, get_state(tmp_project, "a").pose, shot="../w"))
    assert [s.id for s in list_states(tmp_project)] == ["a", "b"]


def test_a_stored_climbing_state_id_is_refused_again_when_a_still_is_made(tmp_path, capsys):
    """A database edited behind the studio's back: the stills render refuses before any file is written."""
    path = tmp_path / "p"
    with Project.create(path) as p:
        film_project(p)
        p.db.execute("UPDATE states SET id = ? WHERE id = 'a'", [CLIMB])
        p.db.conn.commit()
    before = _outside_files(tmp_path)
    assert main(["render", str(path), "--stills"]) == 2
    err = capsys.readouterr().err
    assert f"state '{CLIMB}'.id" in err and "is not a valid id" in err
    assert _outside_files(tmp_path) == before
    assert not Path(f"/tmp/{Path(CLIMB).name}_main.png").exists()
    with Project.open(path) as p:
        assert queue.list_jobs(p) == []


def test_plan_and_scene_refuse_ids_that_would_become_paths(tmp_project):
    from timeline_scenes import arm_plan, arm_scene
    scene = arm_scene()
    save_scene(tmp_project, scene)
    plan = arm_plan()
    plan["states"][1]["id"] = CLIMB
    with pytest.raises(PlanError, match=re.escape(f"plan.states[1].id: '{CLIMB}' is not a valid id")):
        save_plan(tmp_project, plan, scene)
    plan = arm_plan()
    plan["shots"][0]["id"] = "../close"
    with pytest.raises(PlanError, match=r"plan.shots\[0\].id"):
        save_plan(tmp_project, plan, scene)
    d = hinge_scene().to_dict()
    d["cameras"][0]["name"] = "../../cam"
    with pytest.raises(IRError, match=r"scene.cameras\[0\].name: '\.\./\.\./cam' is not a valid id"):
        Scene.from_dict(d)
    d = hinge_scene().to_dict()
    d["bodies"][1]["name"] = "base/../../x"
    with pytest.raises(IRError, match=r"scene.bodies\[1\].name"):
        Scene.from_dict(d)


@pytest.mark.parametrize("path", ["/etc/passwd.stl", "../outside.stl", "assets/../../outside.stl", "props/box.stl"])
def test_mesh_paths_stay_inside_assets(tmp_path, path):
    d = hinge_scene().to_dict()
    d["bodies"][1]["geometry"] = {"source": "mesh", "path": path}
    with pytest.raises(IRError, match=r"scene.bodies\[1\].geometry.path: .* not a path inside the project's assets/"):
        Scene.from_dict(d)
    (tmp_path / "outside.stl").write_text("solid x\nendsolid x\n")
    with pytest.raises(MeshError, match="body prop: geometry.path: .*assets/"):
        build_body_mesh(Body("prop", "rigid", Geometry("mesh", path=path)), tmp_path / "proj")


def test_a_mesh_symlinked_out_of_assets_is_not_read(tmp_path):
    (tmp_path / "proj" / "assets").mkdir(parents=True)
    (tmp_path / "secret.stl").write_text("solid x\nendsolid x\n")
    (tmp_path / "proj" / "assets" / "link.stl").symlink_to(tmp_path / "secret.stl")
    with pytest.raises(MeshError, match="body prop: geometry.path: 'link.stl' leads outside"):
        build_body_mesh(Body("prop", "rigid", Geometry("mesh", path="assets/link.stl")), tmp_path / "proj")


def _tamper(p: Project, job_id: int, **changes) -> None:
    """Edit a job's stored spec behind the studio's back and mark the job failed (so it can be resumed)."""
    folder = queue.job_dir(p, job_id)
    spec = json.loads((folder / "spec.json").read_text())
    spec.update(changes)
    (folder / "spec.json").write_text(json.dumps(spec))
    p.db.execute("UPDATE jobs SET spec = ?, state = 'failed' WHERE id = ?", [json.dumps(spec), job_id])
    p.db.conn.commit()


@pytest.mark.parametrize("field, changes", [
    ("spec.deliver", lambda t: {"deliver": {"out/preview.mp4": str(t / "elsewhere" / "film.mp4")}}),
    ("spec.deliver", lambda t: {"deliver": {"out/preview.mp4": "../../elsewhere/film.mp4"}}),
    ("spec.expected", lambda t: {"expected": ["../../elsewhere/frame.png"]}),
    ("spec.video", lambda t: {"video": "../../../elsewhere/film.mp4"}),
])
def test_jobs_resume_does_not_trust_a_stored_spec(tmp_path, capsys, field, changes):
    path = tmp_path / "p"
    with Project.create(path) as p:
        film_project(p, n_frames=3)
        job = queue.submit(p, "preview", lambda d: specs.video_spec(p, d))
        _tamper(p, job.id, **changes(tmp_path))
    assert main(["jobs", str(path), "resume", str(job.id)]) == 2
    err = capsys.readouterr().err
    assert f"job {job.id}: {field}" in err and ("outside" in err), err
    assert not (tmp_path / "elsewhere").exists()
    with Project.open(path) as p:
        assert queue.get_job(p, job.id).state == "failed"         # not requeued, not run


def test_jobs_resume_does_not_bake_into_another_project_named_by_a_stored_spec(tmp_path, capsys):
    from studio.jobs.bake_spec import bake_spec
    from timeline_scenes import author_arm
    with Project.create(tmp_path / "other") as other:
        author_arm(other)
    path = tmp_path / "p"
    with Project.create(path) as p:
        author_arm(p)
        job = queue.submit(p, "bake", lambda d: bake_spec(p, d, ["rest..bent"]))
        _tamper(p, job.id, project=str(tmp_path / "other"))
    assert main(["jobs", str(path), "resume", str(job.id)]) == 2
    assert f"job {job.id}: spec.project: " in capsys.readouterr().err
    with Project.open(tmp_path / "other") as other:
        assert other.db.execute("SELECT count(*) FROM tracks").fetchone()[0] == 0


def test_delivery_outside_the_project_needs_the_user_to_name_it(tmp_project, tmp_path):
    from studio.jobs.deliver import DeliveryError, deliver, name_destination
    film_project(tmp_project, n_frames=3)
    folder = tmp_path / "job"
    (folder / "out").mkdir(parents=True)
    (folder / "out" / "film.blend").write_bytes(b"BLENDER")
    dest = tmp_path / "delivered" / "film.blend"
    spec = {"expected": ["out/film.blend"], "deliver": {"out/film.blend": str(dest)}}
    with pytest.raises(DeliveryError, match=r"spec.deliver.*outside the project and was not named by you"):
        deliver(tmp_project, folder, spec)
    assert not dest.exists()
    name_destination(dest)
    deliver(tmp_project, folder, spec)
    assert dest.read_bytes() == b"BLENDER"


def test_the_worker_refuses_a_spec_path_out_of_its_job_folder(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studio" / "blender"))
    try:
        from outputs import SpecError, inside_folder
    finally:
        sys.path.pop(0)
    assert inside_folder(str(tmp_path), "out/film.mp4", "video") == str(tmp_path / "out/film.mp4")
    for rel in ("../film.mp4", "/tmp/film.mp4", "out/../../film.mp4", f"{CLIMB}_main.png"):
        with pytest.raises(SpecError, match="leads outside the job folder"):
            inside_folder(str(tmp_path), rel, "video")
