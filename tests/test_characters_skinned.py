"""Skinned characters: the shipped person imported from its glTF skin, its bones posable joints
with the rig profile's limits; the verifiers evaluate the deformed skin at every frame (a hand
sunk 2 cm into a table fails NoPenetration at those frames, resting on it passes); and Blender,
building the armature from the same skin, deforms it as the studio does (within 0.1 mm per
vertex) and saves the armature with its action."""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
import trimesh

from studio.checks.glb_skin import read_skin
from studio.checks.run import run_checks
from studio.scene.characters import find_entry
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world, tracks_world
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose, Tracks
from studio.scene.rig_profile import human_profile
from studio.scene.skin import deform
from studio.store.project import Project
from studio.tools.box import ToolBox

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def person(tmp_path_factory):
    from studio.cli import main
    path = tmp_path_factory.mktemp("person") / "hall"
    assert main(["new", str(path)]) == 0
    with Project.open(path) as p:
        box = ToolBox(p, actor="person")
        out = box.call("import_character", {"name": "anna", "character": "person"})
        box.call("create_body", {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0,
                                 "size": [6, 6, 0.1], "offset": [0, 0, -0.05]})
        box.call("add_camera", {"name": "cam_front", "position": [3.5, -1.5, 1.4], "target": [0, 0, 0.9]})
    return path, out.result


def test_the_persons_bones_are_joints_with_the_profiles_limits(person):
    path, result = person
    data = read_skin(find_entry("person", {}).file)
    assert result["bones"] == len(data.bones) == 23 and result["vertices"] == len(data.vertices)
    assert data.joints.shape[1] == 4 and np.allclose(data.weights.sum(axis=1), 1.0)
    with Project.open(path) as p:
        scene = load_scene(p)
    profile = human_profile()
    knee = scene.joint("anna-shin_L-x")
    assert (knee.type, knee.lower, knee.upper) == ("revolute", math.radians(0), math.radians(150))
    hip = [j.name for j in scene.joints if j.name.startswith("anna-thigh_R-")]
    assert hip == ["anna-thigh_R-x", "anna-thigh_R-y", "anna-thigh_R-z"]
    assert scene.joint("anna-thigh_R-z").upper == pytest.approx(math.radians(profile["bones"]["thigh"]["axes"][2][2]))
    bones = [b for b in scene.bodies if b.kind == "bone"]
    assert len(bones) == 23 and sum(b.mass for b in bones) == pytest.approx(profile["mass"], rel=1e-6)
    ch = scene.character("anna")
    assert ch.source == "gltf" and ch.skin["body"] == "anna-skin"
    assert {leg["sole"] for leg in ch.legs} == {"anna-foot_L-sole", "anna-foot_R-sole"}
    world = pose_world(scene, Pose.rest(scene))           # standing on the floor, facing +X
    meshes = scene_meshes(scene, path)
    skin = meshes["anna-skin"].metadata["skin"]
    v = deform(skin, np.stack([world[b] for b in skin.bones]))
    assert abs(v[:, 2].min()) < 1e-6 and 1.7 < v[:, 2].max() < 1.8
    nose = v[v[:, 2] > 1.5]
    assert nose[:, 0].max() > 0.08 > -nose[:, 0].min()      # the face is towards +X


def test_a_hand_sunk_into_a_table_fails_at_those_frames_and_resting_passes(person):
    path, _ = person
    with Project.open(path) as p:
        scene = load_scene(p)
    meshes = scene_meshes(scene, path)
    skin = meshes["anna-skin"].metadata["skin"]
    hand = skin.bones.index("anna-hand_L")
    mine = skin.joints[np.arange(len(skin.vertices)), np.argmax(skin.weights, axis=1)] == hand

    def palm(pose):
        w = pose_world(scene, pose)
        return deform(skin, np.stack([w[b] for b in skin.bones]))[mine]
    rest = Pose.rest(scene)
    under = palm(rest)
    top = float(under[:, 2].min()) - 0.001                    # the table's top 1 mm under the hand
    d = scene.to_dict()
    d["bodies"].append({"name": "table", "kind": "static", "mass": 0,
                        "geometry": {"source": "box", "size": [0.4, 0.4, 0.05], "offset": {"position": [0, 0, -0.025]}}})
    c = under.mean(axis=0)
    d["rest"]["table"] = [float(c[0]), float(c[1]), top, 1.0, 0.0, 0.0, 0.0]
    scene = Scene.from_dict(d)
    meshes["table"] = trimesh.creation.box(extents=[0.4, 0.4, 0.05])
    meshes["table"].apply_translation([0, 0, -0.025])
    rest = Pose.rest(scene)
    sunk = None
    for angle in np.linspace(0.0, 0.2, 81):                  # lower the arm until the hand is 2 cm in
        q = rest.copy()
        q.joints["anna-upper_arm_L-z"] = -float(angle)
        if top - float(palm(q)[:, 2].min()) >= 0.02:
            sunk = q
            break
    assert sunk is not None
    poses = [rest, rest, sunk, sunk, sunk, rest]
    tracks = Tracks.from_poses(1001, poses)
    report = run_checks(scene, meshes, tracks, names=["NoPenetration"])[0]
    assert report.verdict == "fail"
    hits = {(e["frame"], e["a"], e["b"]) for e in report.evidence}
    assert hits == {(f, "anna-skin", "table") for f in (1003, 1004, 1005)}
    assert all(0.02 <= e["depth_m"] < 0.025 for e in report.evidence)
    resting = run_checks(scene, meshes, Tracks.from_poses(1001, [rest, rest, rest]), names=["NoPenetration"])[0]
    assert resting.verdict == "pass"
    support = run_checks(scene, meshes, Tracks.from_poses(1001, [rest, rest]), names=["Supported"])[0]
    assert support.verdict == "pass"                          # the skin stands on the floor


@pytest.mark.blender
def test_blender_deforms_the_skin_as_the_studio_does_and_saves_the_armatures_action(person, tmp_path):
    from studio.jobs import queue
    from studio.jobs import spec as specs
    from studio.jobs.dispatch import run_submitted
    from studio.cli import main
    path, _ = person
    with Project.open(path) as p:
        box = ToolBox(p, actor="person")
        box.call("set_state", {"state": "standing", "frame": 1001})
        box.call("set_state", {"state": "reaching", "frame": 1024, "joints": {
            "anna-shin_L-x": 0.9, "anna-thigh_L-x": -0.6, "anna-upper_arm_R-z": -1.1, "anna-upper_arm_R-x": 0.7,
            "anna-forearm_R-x": 1.2, "anna-spine_002-y": 0.25, "anna-spine_006-x": 0.3}})
        for s in ("standing", "reaching"):
            box.call("run_verifiers", {"state": s})
            box.call("review_state", {"state": s, "verdict": "approve"})
        box.call("author_segment", {"segment": "standing..reaching", "tool": "interpolate"})
        job = queue.submit(p, "probe", lambda d: specs.probe_spec(p, d, [1001, 1012, 1024]))
        job = run_submitted(p, job.id)
        assert job.state == "succeeded", job.error
        with np.load(queue.job_dir(p, job.id) / "out" / "skin_probe.npz") as z:
            blender = z["anna-skin"]
        scene = load_scene(p)
        from studio.timeline.film import load_film_tracks
        tracks = load_film_tracks(p)
        skin = scene_meshes(scene, path)["anna-skin"].metadata["skin"]
        world = tracks_world(scene, tracks)
        ours = deform(skin, np.stack([world[b][[0, 11, 23]] for b in skin.bones], axis=1))
    assert blender.shape == ours.shape
    err = np.linalg.norm(blender - ours, axis=2)
    assert err.max() < 1e-4, err.max()
    assert np.linalg.norm(ours[2] - ours[0], axis=1).max() > 0.3          # the pose does move the skin
    blend = tmp_path / "anna.blend"
    assert main(["export", str(path), "--blend", str(blend), "--with-exceptions", "--quiet"]) == 0
    script = ("import bpy, json\nbpy.ops.wm.open_mainfile(filepath=%r)\n"
              "rig = bpy.data.objects['armature:anna-skin']\nskin = bpy.data.objects['skin:anna-skin']\n"
              "print('RESULT', json.dumps({'bones': len(rig.data.bones), 'action': rig.animation_data.action.name,"
              " 'keys': len(rig.animation_data.action.fcurves[0].keyframe_points) if hasattr(rig.animation_data."
              "action, 'fcurves') else -1, 'modifier': [m.type for m in skin.modifiers],"
              " 'groups': len(skin.vertex_groups)}))\n") % str(blend)
    out = subprocess.run([str(ROOT / ".venv-blender" / "bin" / "python"), "-c", script], capture_output=True,
                         text=True, timeout=300)
    got = json.loads([line for line in out.stdout.splitlines() if line.startswith("RESULT ")][0][7:])
    assert got["bones"] == 23 and got["groups"] == 23 and got["modifier"] == ["ARMATURE"]
    assert got["action"] == "anna-skin-pose"


@pytest.mark.blender
def test_studio_verify_reads_a_skinned_gltf_film_with_its_skin_deforming(person, tmp_path):
    """After the film test above baked a motion: the exported glTF holds the skin, and the verifiers
    deform it from its joints as the studio does."""
    from scipy.spatial import cKDTree
    from studio.checks.footage import Footage
    from studio.checks.glb import load_glb_verification
    from studio.cli import main
    from studio.timeline.film import load_film_tracks
    path, _ = person
    glb = tmp_path / "anna.glb"
    assert main(["export", str(path), "--gltf", str(glb), "--with-exceptions", "--quiet"]) == 0
    scene, meshes, tracks, growth, plan, holds = load_glb_verification(glb)
    assert "anna-skin" in scene.body_names and sum(b.kind == "bone" for b in scene.bodies) == 23
    film = Footage.build(scene, meshes, tracks)
    (deformed, bones), = film.skins.values()
    theirs = deformed.at(np.array([tracks.n_frames - 1]), np.swapaxes(film.world[bones], 0, 1))[0]
    with Project.open(path) as p:
        ours_scene, ours_tracks = load_scene(p), load_film_tracks(p)
    skin = scene_meshes(ours_scene, path)["anna-skin"].metadata["skin"]
    w = tracks_world(ours_scene, ours_tracks)
    ours = deform(skin, np.stack([w[b][-1] for b in skin.bones]))
    far, _ = cKDTree(ours).query(theirs)
    assert far.max() < 1e-4                    # every vertex of the read-back skin lies on the studio's
    code = {}
    for what in (path, glb):
        out = tmp_path / f"{what.name}.json"
        main(["verify", str(what), "--json", str(out)])
        code[what.name] = {r["name"]: r["verdict"] for r in json.loads(out.read_text())["reports"]}
    assert code[path.name]["NoPenetration"] == code[glb.name]["NoPenetration"] == "pass"
    assert code[path.name]["JointLimits"] == code[glb.name]["JointLimits"] == "pass"
