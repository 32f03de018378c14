"""Robots from their URDF: the installed G1 imported as a character, checked against the
description read independently (the standard library's XML parser, yourdfpy's kinematics),
and bad descriptions refused with the file and element named, exit 2, nothing stored."""
from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import trimesh

from studio.cli import main
from studio.scene.characters import find_entry, library
from studio.scene.io import load_scene
from studio.scene.kinematics import pose_world
from studio.scene.meshes import scene_design_id
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.tools.box import ToolBox
from studio.tools.errors import ToolRefused


@pytest.fixture(scope="module")
def g1(tmp_path_factory):
    """A project holding the G1 from the installed example-robot-data package."""
    path = tmp_path_factory.mktemp("g1") / "lab"
    assert main(["new", str(path)]) == 0
    assert main(["scene", "import-urdf", str(path), "g1", "--name", "g1"]) == 0
    return path, find_entry("g1", {}).file


def test_the_library_lists_the_installed_robots_and_a_users_folder(tmp_path):
    (tmp_path / "bots" / "arm_description" / "urdf").mkdir(parents=True)
    (tmp_path / "bots" / "arm_description" / "urdf" / "arm.urdf").write_text('<robot name="arm"><link name="a"/></robot>')
    names = {e.name: e for e in library({"character_folders": [str(tmp_path / "bots")]})}
    assert {"g1", "go2", "panda", "human"} <= set(names)
    assert names["g1"].file.name == "g1_29dof_rev_1_0.urdf" and names["g1"].file.is_file()
    assert names["arm"].where == str(tmp_path / "bots")


def test_the_g1_has_29_revolute_joints_with_the_urdfs_limits_and_axes(g1):
    path, urdf = g1
    root = ET.parse(urdf).getroot()
    declared = {j.get("name"): j for j in root.findall("joint") if j.get("type") == "revolute"}
    assert len(declared) == 29
    with Project.open(path) as p:
        scene = load_scene(p)
    revolute = {j.name: j for j in scene.joints if j.type == "revolute"}
    assert len(revolute) == 29
    for name, el in declared.items():
        j = revolute[f"g1-{name}"]
        lim = el.find("limit")
        assert j.lower == float(lim.get("lower")) and j.upper == float(lim.get("upper")), name
        axis = np.array([float(v) for v in el.find("axis").get("xyz").split()])
        assert np.allclose(j.axis, axis / np.linalg.norm(axis), atol=1e-12), name
        assert j.parent == f"g1-{el.find('parent').get('link')}" and j.child == f"g1-{el.find('child').get('link')}"
    links = {l.get("name"): l for l in root.findall("link")}
    for name, l in links.items():              # every link a body and a named frame; masses carried over
        body = scene.body(f"g1-{name}")
        m = l.find("inertial/mass")
        assert body.mass == (float(m.get("value")) if m is not None else 0.0)
        assert scene.frame(f"g1-{name}").body == body.name


def test_forward_kinematics_of_the_imported_g1_matches_yourdfpy_at_three_poses(g1):
    yourdfpy = pytest.importorskip("yourdfpy")
    path, urdf = g1
    with Project.open(path) as p:
        scene = load_scene(p)
    robot = yourdfpy.URDF.load(str(urdf), load_meshes=False, build_collision_scene_graph=False,
                               load_collision_meshes=False)
    rng = np.random.default_rng(29)
    names = robot.actuated_joint_names
    for _ in range(3):
        cfg = {n: rng.uniform(robot.joint_map[n].limit.lower, robot.joint_map[n].limit.upper) for n in names}
        robot.update_cfg(cfg)
        pose = Pose.rest(scene)
        pose.roots["g1-pelvis"] = [0.3, -0.2, 0.9, math.cos(0.4), 0.0, 0.0, math.sin(0.4)]
        pose.joints.update({f"g1-{n}": float(v) for n, v in cfg.items()})
        world = pose_world(scene, pose)
        base = np.linalg.inv(world["g1-pelvis"])
        for link in robot.link_map:
            theirs = robot.get_transform(frame_to=link, frame_from="pelvis")
            ours = base @ world[f"g1-{link}"]
            assert np.abs(ours[:3, 3] - theirs[:3, 3]).max() < 1e-6, link
            assert np.abs(ours[:3, :3] - theirs[:3, :3]).max() < 1e-6, link


def test_the_g1s_legs_and_hands_are_found_from_its_structure(g1):
    path, _ = g1
    with Project.open(path) as p:
        scene = load_scene(p)
    ch = scene.character("g1")
    assert ch.source == "urdf" and ch.root == "g1-pelvis" and len(ch.digest) == 64
    legs = {leg["sole"]: leg for leg in ch.legs}
    assert set(legs) == {"g1-left_ankle_roll_link-sole", "g1-right_ankle_roll_link-sole"}
    left = legs["g1-left_ankle_roll_link-sole"]["joints"]
    assert left == [f"g1-left_{j}_joint" for j in ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch",
                                                     "ankle_roll")]
    assert {leg["phase"] for leg in ch.legs} == {0.0, 0.5}
    hands = {h["frame"]: h["joints"] for h in ch.hands}
    assert set(hands) == {"g1-left_rubber_hand-grip", "g1-right_rubber_hand-grip"}
    assert hands["g1-left_rubber_hand-grip"] == [f"g1-left_{j}_joint" for j in (
        "shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")]
    world = pose_world(scene, Pose.rest(scene))
    for sole in legs:                          # standing: soles on the floor, level
        f = scene.frame(sole)
        from studio.scene.transforms import from_7
        m = world[f.body] @ from_7(np.asarray(f.local.as_list()))
        assert abs(m[2, 3]) < 1e-9 and np.allclose(m[:3, :3], np.eye(3), atol=1e-9)


def _package(tmp_path: Path, name: str = "toy") -> Path:
    """A small description laid out as ROS packages are: <name>_description/{urdf,meshes}."""
    d = tmp_path / f"{name}_description"
    (d / "urdf").mkdir(parents=True)
    (d / "meshes").mkdir()
    (d / "meshes" / "arm.stl").write_bytes(trimesh.exchange.stl.export_stl(trimesh.creation.box((0.1, 0.1, 0.4))))
    return d


TOY = """<robot name="toy">
  <link name="base"><visual><geometry><box size="0.3 0.3 0.1"/></geometry></visual></link>
  <link name="arm"><visual><geometry><mesh filename="{mesh}"/></geometry></visual>
    <inertial><mass value="1.5"/></inertial></link>
  <joint name="lift" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="{xyz}" rpy="0 0 0"/><axis xyz="0 1 0"/><limit lower="{lower}" upper="1.2"/></joint>
  {extra}
</robot>"""


def _toy(tmp_path, mesh="package://toy_description/meshes/arm.stl", xyz="0 0 0.3", lower="-1.2", extra="") -> Path:
    d = _package(tmp_path)
    f = d / "urdf" / "toy.urdf"
    f.write_text(TOY.format(mesh=mesh, xyz=xyz, lower=lower, extra=extra))
    return f


def _stored(path: Path) -> tuple:
    with Project.open(path) as p:
        scene = load_scene(p)
        assets = sorted(str(x.relative_to(path)) for x in (path / "assets").rglob("*") if x.is_file())
        return scene.to_json(), assets


@pytest.mark.parametrize("case, kw, element, said", [
    ("outside", {"mesh": "package://toy_description/../secret.stl"}, "<link name='arm'> <visual> #1 <mesh>",
     "outside the description folder"),
    ("missing", {"mesh": "package://toy_description/meshes/gone.stl"}, "<link name='arm'> <visual> #1 <mesh>",
     "is missing"),
    ("cycle", {"extra": '<joint name="back" type="fixed"><parent link="arm"/><child link="base"/></joint>'},
     "<joint name='back'>", "cycle"),
    ("limits", {"lower": "1.5"}, "<joint name='lift'> <limit>", "lower 1.5 is above upper 1.2"),
    ("nan", {"xyz": "0 nan 0.3"}, "<joint name='lift'> <origin>", "not finite"),
])
def test_a_bad_description_is_refused_naming_file_and_element_and_nothing_is_stored(tmp_path, capsys, case, kw,
                                                                                    element, said):
    (tmp_path / "secret.stl").write_bytes(trimesh.exchange.stl.export_stl(trimesh.creation.icosphere()))
    f = _toy(tmp_path, **kw)
    proj = tmp_path / "proj"
    assert main(["new", str(proj)]) == 0
    before = _stored(proj)
    capsys.readouterr()
    assert main(["scene", "import-urdf", str(proj), str(f), "--name", "toy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(f) in err[0] and element in err[0] and said in err[0], err
    assert _stored(proj) == before


def test_a_changed_mesh_imported_again_changes_the_design_so_reviews_go_stale(tmp_path):
    f = _toy(tmp_path)
    proj = tmp_path / "proj"
    assert main(["new", str(proj)]) == 0
    assert main(["scene", "import-urdf", str(proj), str(f), "--name", "toy"]) == 0
    with Project.open(proj) as p:
        box = ToolBox(p, actor="person")
        box.call("set_state", {"state": "rest", "frame": 1001})
        box.call("run_verifiers", {"state": "rest"})
        box.call("review_state", {"state": "rest", "verdict": "approve"})
        from studio.timeline.gate import state_status
        assert state_status(p, "rest").status == "approved"
        first = scene_design_id(load_scene(p))
    mesh = f.parent.parent / "meshes" / "arm.stl"
    mesh.write_bytes(trimesh.exchange.stl.export_stl(trimesh.creation.box((0.1, 0.1, 0.45))))
    assert main(["scene", "import-urdf", str(proj), str(f), "--name", "toy"]) == 0
    with Project.open(proj) as p:
        scene = load_scene(p)
        assert scene_design_id(scene) != first
        assert [b.name for b in scene.bodies] == ["toy-base", "toy-arm"]      # replaced, not added twice
        st = state_status(p, "rest")
        assert st.status == "stale" and "design changed" in st.reasons[0]


def test_the_agent_imports_library_characters_but_not_files_from_elsewhere(tmp_path, tmp_project):
    f = _toy(tmp_path)
    with pytest.raises(ToolRefused, match="outside the project and the character library"):
        ToolBox(tmp_project, actor="agent").call("import_character", {"name": "toy", "file": str(f)})
    assert load_scene(tmp_project).bodies == []
    out = ToolBox(tmp_project, actor="agent").call("import_character", {"name": "arm", "character": "panda"})
    assert out.result["hands"] == ["arm-panda_hand_tcp-grip"] and out.result["movable_joints"] == 9
    scene = load_scene(tmp_project)
    assert scene.character("arm").root == "arm-panda_link0"
    assert json.loads(out.as_text())["ok"] is True
