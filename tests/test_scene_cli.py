"""`studio scene build` and `studio info` on a doorway project, as an animator would run them."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trimesh

from studio.cli import main
from studio.scene.io import load_scene, save_scene
from studio.scene.ir import Body, Geometry, Scene
from studio.scene.meshes import clear_memo
from studio.store.project import Project

from example_films import scene_only

ROW = re.compile(r"^  (\S+)\s+(\d+)\s+(yes|NO)\s+(hit|miss|memo|box)\s+([\d.]+)$")


@pytest.fixture(scope="module")
def project_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("films") / "doorway"
    scene_only("doorway", path).close()          # the doorway scene, replayed from its calls file
    return path


def _rows(out: str) -> dict[str, tuple[int, str, str]]:
    return {m[1]: (int(m[2]), m[3], m[4]) for m in map(ROW.match, out.splitlines()) if m}


def test_the_replayed_doorway_scene_is_the_doorway_project(project_dir):
    with Project.open(project_dir) as p:
        assert (p.name, p.fps, p.frame_start) == ("doorway", 24, 1001)
        scene = load_scene(p)
    assert scene.name == "doorway" and len(scene.bodies) == 23 and len(scene.joints) == 18
    assert [m.name for m in scene.materials] == ["concrete", "plaster", "plywood", "steel", "robot_shell",
                                                 "robot_joint", "robot_visor"]


def test_scene_build_misses_then_hits_the_cache(project_dir, capsys):
    shutil.rmtree(project_dir / "assets" / "meshes", ignore_errors=True)     # a replay builds none yet
    clear_memo()
    assert main(["scene", "build", str(project_dir)]) == 0
    first = _rows(capsys.readouterr().out)
    assert len(first) == 23
    assert {c for _, _, c in first.values()} == {"miss", "memo"}      # right side reuses left side
    assert first["panel"][2] == "miss" and first["hand_r"][2] == "memo"
    assert all(w == "yes" for _, w, _ in first.values())
    assert first["wall"][0] == 28 and first["floor"][0] == 12

    clear_memo()    # as a new process would start
    assert main(["scene", "build", str(project_dir)]) == 0
    out = capsys.readouterr().out
    second = _rows(out)
    assert {c for _, _, c in second.values()} == {"hit", "memo"}
    assert second["panel"][2] == "hit"
    assert {k: v[0] for k, v in second.items()} == {k: v[0] for k, v in first.items()}
    assert "23 of 23 watertight; cache 23 hit, 0 miss" in out


def test_scene_build_from_the_command_line(project_dir):
    exe = Path(sys.executable).with_name("studio")
    run = subprocess.run([str(exe), "scene", "build", str(project_dir)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "cache 23 hit, 0 miss" in run.stdout


def test_info_lists_bodies_joints_frames_and_cameras(project_dir, capsys):
    assert main(["info", str(project_dir)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^bodies\s+23$", out, re.M)
    assert re.search(r"^  panel\s+rigid\s+cad:panel$", out, re.M)
    assert re.search(r"^  floor\s+ground\s+cad:floor_slab \[static\]$", out, re.M)
    assert re.search(r"^joints\s+18$", out, re.M)
    assert re.search(r"^  knee_l\s+revolute\s+thigh_l -> shin_l  limits \[\+0\.000, \+2\.400\]$", out, re.M)
    assert re.search(r"^  elbow_r\s+revolute\s+upper_arm_r -> forearm_r  limits \[-2\.500, \+0\.000\]$", out, re.M)
    for frame, body in (("handle_left", "panel"), ("handle_right", "panel"), ("gripper_l", "hand_l"),
                        ("sole_r", "foot_r")):
        assert re.search(rf"^  {frame}\s+on {body}$", out, re.M)
    assert re.search(r"^  cam_main\s+28 mm  640x360$", out, re.M)
    assert "fps 24, frame_start 1001" in out


def _project_with(tmp_path, body: Body) -> Path:
    path = tmp_path / "props"
    with Project.create(path) as p:
        save_scene(p, Scene(name="props", bodies=[body]))
    return path


def test_a_mesh_that_is_not_watertight_fails_the_build(tmp_path, capsys):
    open_box = trimesh.creation.box(extents=[0.3, 0.3, 0.3])
    open_box.update_faces(list(range(10)))                     # lid removed
    path = _project_with(tmp_path, Body("crate", "rigid", Geometry("mesh", path="assets/crate.stl")))
    (path / "assets" / "crate.stl").write_bytes(open_box.export(file_type="stl"))
    assert main(["scene", "build", str(path)]) == 1
    out = capsys.readouterr().out
    assert _rows(out)["crate"][:2] == (10, "NO") and "not watertight: crate" in out


def test_bad_input_exits_2_naming_the_body_and_file(tmp_path, capsys):
    path = _project_with(tmp_path, Body("crate", "rigid", Geometry("mesh", path="assets/nowhere/crate.glb")))
    assert main(["scene", "build", str(path)]) == 2
    err = capsys.readouterr().err
    assert "body crate" in err and "assets/nowhere/crate.glb: no such mesh file" in err
    assert main(["scene", "build", str(tmp_path / "not-a-project")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_scene_import_copies_the_file_and_adds_a_body(tmp_path, capsys):
    path = tmp_path / "set"
    Project.create(path).close()
    chair = tmp_path / "downloads" / "chair.glb"
    chair.parent.mkdir()
    chair.write_bytes(trimesh.creation.box(extents=[0.5, 0.9, 0.4]).export(file_type="glb"))
    assert main(["scene", "import", str(path), str(chair), "--name", "chair", "--at", "1", "0", "0.45"]) == 0
    assert "12 triangles, watertight yes, size 0.500 x 0.400 x 0.900 m" in capsys.readouterr().out
    chair.unlink()                                     # the project keeps its own copy
    with Project.open(path) as p:
        scene = load_scene(p)
        body = scene.body("chair")
        assert body.geometry.source == "mesh" and body.geometry.path.startswith("assets/")
        assert scene.rest["chair"][:3] == [1.0, 0.0, 0.45] and scene.name == "set"
        before = p.db.execute("SELECT count(*) FROM scene_objects").fetchone()[0]
    assert main(["scene", "build", str(path)]) == 0
    assert _rows(capsys.readouterr().out)["chair"][:2] == (12, "yes")
    assert main(["scene", "import", str(path), str(chair), "--name", "stool"]) == 2
    assert "chair.glb: no such mesh file" in capsys.readouterr().err
    with Project.open(path) as p:
        assert p.db.execute("SELECT count(*) FROM scene_objects").fetchone()[0] == before


def test_scene_parts_lists_every_part_with_its_parameters(capsys):
    assert main(["scene", "parts"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^spur_gear\s+A spur gear", out, re.M)
    assert "teeth=20, module=0.002, thickness=0.005, bore=0" in out
    assert "length=?, radius=?" in out          # capsule: no defaults, both required
