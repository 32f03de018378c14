"""Scene IR: JSON round trips, and validation errors that name the field."""
from __future__ import annotations

import json

import numpy as np
import pytest

from studio.scene.ir import IRError, Scene
from studio.scene.pose import Pose, Tracks

from example_films import example_scene


@pytest.fixture(scope="module")
def doorway_scene(tmp_path_factory) -> Scene:
    return example_scene("doorway", tmp_path_factory.mktemp("doorway") / "scene")


def _tiny() -> dict:
    return {"name": "tiny",
            "materials": [{"name": "red", "color": [1, 0, 0, 1]}],
            "bodies": [{"name": "base", "kind": "static", "geometry": {"source": "box", "size": [1, 1, 0.1]}},
                       {"name": "arm", "kind": "link", "material": "red",
                        "geometry": {"source": "cad", "part": "capsule", "params": {"length": 0.3, "radius": 0.02}}},
                       {"name": "tip", "kind": "link"}],
            "joints": [{"name": "j1", "type": "revolute", "parent": "base", "child": "arm",
                        "axis": [0, 1, 0], "lower": -1, "upper": 1},
                       {"name": "j2", "type": "prismatic", "parent": "arm", "child": "tip", "lower": 0, "upper": 0.2}],
            "frames": [{"name": "grip", "body": "tip", "local": {"position": [0, 0, 0.1]}}],
            "cameras": [{"name": "cam", "position": [3, 0, 1]}],
            "rest": {"base": [0, 0, 0, 1, 0, 0, 0]}}


def test_doorway_scene_json_round_trip_is_equal(doorway_scene):
    scene = doorway_scene
    again = Scene.from_json(scene.to_json())
    assert again == scene
    assert again.to_json() == scene.to_json()
    assert len(again.bodies) == 23 and len(again.joints) == 18


def test_pose_and_tracks_bytes_round_trip(doorway_scene):
    scene = doorway_scene
    pose = Pose.rest(scene)
    pose.joints["elbow_l"] = -1.25
    again = Pose.from_dict(json.loads(json.dumps(pose.to_dict())), scene)
    assert again.joints["elbow_l"] == -1.25 and again.hash() == pose.hash()
    poses = []
    for i in range(10):
        p = pose.copy()
        p.joints["knee_r"] = 0.1 * i
        p.roots["pelvis"][0] = -3.0 + 0.05 * i
        poses.append(p)
    tracks = Tracks.from_poses(1001, poses)
    back = Tracks.from_bytes(tracks.to_bytes())
    assert back.frame_start == 1001 and back.frame_end == 1010
    np.testing.assert_array_equal(back.joints["knee_r"], tracks.joints["knee_r"])
    np.testing.assert_array_equal(back.roots["pelvis"], tracks.roots["pelvis"])
    assert back.pose_at(1005).joints["knee_r"] == pytest.approx(0.4)
    assert back.hash() == tracks.hash()


def _refused(mutate, *fragments):
    d = _tiny()
    mutate(d)
    with pytest.raises(IRError) as e:
        Scene.from_dict(d)
    for f in fragments:
        assert f in str(e.value), str(e.value)


def test_unknown_joint_type_names_the_field():
    _refused(lambda d: d["joints"][0].update(type="hinge"), "scene.joints[0].type", "'hinge'")


def test_joint_naming_a_missing_body_names_the_field():
    _refused(lambda d: d["joints"][1].update(parent="ghost"), "scene.joints[1].parent", "'ghost'")


def test_lower_above_upper_is_refused():
    _refused(lambda d: d["joints"][0].update(lower=2, upper=1), "scene.joints[0]", "lower limit 2.0", "upper limit 1.0")


def test_non_unit_quaternion_is_refused():
    _refused(lambda d: d["frames"][0]["local"].update(rotation=[1, 1, 0, 0]),
             "scene.frames[0].local.rotation", "unit length")
    _refused(lambda d: d["rest"].update(base=[0, 0, 0, 2, 0, 0, 0]), "scene.rest.base", "unit length")


def test_duplicate_names_are_refused():
    _refused(lambda d: d["bodies"][2].update(name="arm"), "scene.bodies", "'arm' is used twice")
    _refused(lambda d: d["joints"][1].update(name="j1"), "scene.joints", "'j1' is used twice")
    _refused(lambda d: d["cameras"].append({"name": "cam"}), "scene.cameras", "'cam' is used twice")


def test_joint_cycle_is_refused():
    def cycle(d):
        d["joints"][0].update(parent="tip", child="arm")    # arm -> tip -> arm
    _refused(cycle, "cycle")


def test_cad_geometry_without_part_and_bad_material_are_refused():
    _refused(lambda d: d["bodies"][1]["geometry"].update(part=""), "scene.bodies[1].geometry.part")
    _refused(lambda d: d["bodies"][1].update(material="gold"), "scene.bodies[1].material", "'gold'")
    _refused(lambda d: d["rest"].update(arm=[0, 0, 0, 1, 0, 0, 0]), "scene.rest.arm", "not a root")


def test_bad_json_names_the_line():
    with pytest.raises(IRError, match="line 2"):
        Scene.from_json('{"name": "x",\n "bodies": [}')
