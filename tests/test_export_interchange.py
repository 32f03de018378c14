"""`studio export --usd --gltf`: the doorway film as OpenUSD (read here with Pixar's usd-core: a
prim per body, the film's time codes, each body where the studio has it at frames 1001 and 1300)
and as an animated glTF binary that `studio verify` reads back with the project's verdicts; both
behind the export gate. The person_door film's USD holds the person's skeleton, its animation at
every frame and the skin bound to it, which usd-core deforms where the studio does."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from studio.cli import main
from studio.scene.io import load_scene
from studio.scene.kinematics import tracks_world
from studio.store.project import Project
from studio.timeline.film import load_film_tracks

pytestmark = pytest.mark.blender
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    base = tmp_path_factory.mktemp("export")
    film = base / "doorway"
    shutil.copytree(ROOT / "projects" / "doorway", film, ignore=shutil.ignore_patterns("jobs", "renders"))
    usd, glb = base / "out" / "doorway.usdc", base / "out" / "doorway.glb"
    assert main(["export", str(film), "--usd", str(usd), "--gltf", str(glb), "--quiet"]) == 0
    return film, usd, glb


def test_the_usd_has_a_prim_per_body_the_films_time_codes_and_its_transforms(exported):
    from pxr import Usd, UsdGeom
    film, usd, _ = exported
    with Project.open(film) as p:
        scene, tracks, fps = load_scene(p), load_film_tracks(p), p.fps
    stage = Usd.Stage.Open(str(usd))
    assert stage.GetStartTimeCode() == tracks.frame_start == 1001
    assert stage.GetEndTimeCode() == tracks.frame_end
    assert stage.GetTimeCodesPerSecond() == fps
    assert UsdGeom.GetStageUpAxis(stage) == "Z" and UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    prims = {}
    for prim in stage.Traverse():               # a body: an Xform holding the body's mesh of its name
        child = prim.GetChild(prim.GetName())
        if prim.GetTypeName() == "Xform" and child.IsValid() and child.IsA(UsdGeom.Mesh):
            prims.setdefault(prim.GetName(), []).append(prim)
    assert set(prims) == set(scene.body_names) and all(len(v) == 1 for v in prims.values())
    world = tracks_world(scene, tracks)
    moving = 0
    for frame in (1001, 1300):
        cache = UsdGeom.XformCache(Usd.TimeCode(frame))
        for name, (prim,) in prims.items():
            m = np.array(cache.GetLocalToWorldTransform(prim)).T       # USD rows are row vectors
            ours = world[name][frame - tracks.frame_start]
            assert np.abs(m[:3, 3] - ours[:3, 3]).max() < 1e-5, (name, frame)
            assert np.abs(m[:3, :3] - ours[:3, :3]).max() < 1e-5, (name, frame)
    for name, (prim,) in prims.items():
        a = np.array(UsdGeom.XformCache(Usd.TimeCode(1001)).GetLocalToWorldTransform(prim))
        b = np.array(UsdGeom.XformCache(Usd.TimeCode(1300)).GetLocalToWorldTransform(prim))
        moving += bool(np.abs(a - b).max() > 1e-3)
    assert moving >= 10                          # the robot and the panel move between the two frames


def test_studio_verify_reads_the_exported_gltf_with_the_projects_verdicts(exported, tmp_path):
    film, _, glb = exported
    verdicts = {}
    for what in (film, glb):
        out = tmp_path / f"{what.name}.json"
        code = main(["verify", str(what), "--json", str(out)])
        reports = json.loads(out.read_text())["reports"]
        verdicts[what.name] = (code, {r["name"]: r["verdict"] for r in reports})
    assert verdicts["doorway"] == verdicts["doorway.glb"]
    code, by = verdicts["doorway"]
    assert code == 0 and by["NoPenetration"] == by["JointLimits"] == by["EventsSatisfied"] == "pass"


def test_the_export_gate_holds_usd_and_gltf_back_while_a_state_is_rejected(exported, tmp_path, capsys):
    film, _, _ = exported
    copy = tmp_path / "doorway"
    shutil.copytree(film, copy, ignore=shutil.ignore_patterns("jobs", "renders"))
    assert main(["board", "reject", str(copy), "tilt", "--note", "the panel meets the jamb"]) == 0
    usd, glb = tmp_path / "out.usd", tmp_path / "out.glb"
    capsys.readouterr()
    assert main(["export", str(copy), "--usd", str(usd), "--gltf", str(glb)]) == 1
    assert "export refused" in capsys.readouterr().err
    assert not usd.exists() and not glb.exists()
    assert main(["export", str(copy), "--gltf", str(tmp_path / "film.gltf")]) == 2


@pytest.fixture(scope="module")
def skinned_usd(tmp_path_factory):
    base = tmp_path_factory.mktemp("export_skin")
    film = base / "person_door"
    shutil.copytree(ROOT / "projects" / "person_door", film, ignore=shutil.ignore_patterns("jobs", "renders"))
    usd = base / "out" / "person_door.usdc"
    assert main(["export", str(film), "--usd", str(usd), "--quiet"]) == 0
    return film, usd


def test_a_skinned_films_usd_has_its_skeleton_animation_and_skin_deforming_as_the_studios(skinned_usd):
    """The person's film as USD, read with usd-core's UsdSkel: a skeleton of the skin's 23 bones with
    an animation sampled at every frame of the film, the skin mesh bound to it, and at frames 1001
    and 1300 each joint where the studio has its bone and the skin as usd-core deforms it where the
    studio's linear blend skinning puts it, within 1e-5 m."""
    from pxr import Usd, UsdGeom, UsdSkel, Vt
    from studio.scene.meshes import scene_meshes
    from studio.scene.skin import deform
    film, usd = skinned_usd
    with Project.open(film) as p:
        scene, tracks = load_scene(p), load_film_tracks(p)
        skin = scene_meshes(scene, p.path)["anna-skin"].metadata["skin"]
    world = tracks_world(scene, tracks)
    stage = Usd.Stage.Open(str(usd))
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (tracks.frame_start, tracks.frame_end)
    roots = [x for x in stage.Traverse() if x.IsA(UsdSkel.Root)]
    skels = [x for x in stage.Traverse() if x.IsA(UsdSkel.Skeleton)]
    anims = [x for x in stage.Traverse() if x.IsA(UsdSkel.Animation)]
    bound = [x for x in stage.Traverse() if x.IsA(UsdGeom.Mesh) and x.HasAPI(UsdSkel.BindingAPI)]
    assert len(roots) == len(skels) == len(anims) == len(bound) == 1
    anim = UsdSkel.Animation(anims[0])
    assert len(anim.GetJointsAttr().Get()) == len(skin.bones) == 23
    frames = list(range(tracks.frame_start, tracks.frame_end + 1))
    assert anim.GetRotationsAttr().GetTimeSamples() == frames
    cache = UsdSkel.Cache()
    cache.Populate(UsdSkel.Root(roots[0]), Usd.TraverseInstanceProxies())
    query = cache.GetSkelQuery(UsdSkel.Skeleton(skels[0]))
    names = ["anna-" + str(j).rsplit("/", 1)[-1][len("anna_"):] for j in query.GetJointOrder()]
    assert sorted(names) == sorted(skin.bones)
    skinning = cache.GetSkinningQuery(bound[0])
    for frame in (1001, 1300):
        t = Usd.TimeCode(frame)
        skel_world = np.array(UsdGeom.XformCache(t).GetLocalToWorldTransform(skels[0])).T
        for name, m in zip(names, query.ComputeJointSkelTransforms(t)):
            at = skel_world @ np.array(m).T
            assert np.abs(at[:3, 3] - world[name][frame - tracks.frame_start][:3, 3]).max() < 1e-5, (name, frame)
        points = Vt.Vec3fArray(UsdGeom.Mesh(bound[0]).GetPointsAttr().Get())
        assert skinning.ComputeSkinnedPoints(query.ComputeSkinningTransforms(t), points, t)
        theirs = np.array(points) @ skel_world[:3, :3].T + skel_world[:3, 3]
        ours = deform(skin, np.stack([world[b][frame - tracks.frame_start] for b in skin.bones]))
        assert np.abs(theirs - ours).max() < 1e-5, frame
    a, b = (np.array(UsdGeom.XformCache(Usd.TimeCode(f)).GetLocalToWorldTransform(skels[0])) for f in (1001, 1300))
    first, later = (np.array(query.ComputeJointSkelTransforms(Usd.TimeCode(f))) for f in (1001, 1300))
    assert np.abs(first - later).max() > 1.0 or np.abs(a - b).max() > 1.0      # she has walked on by 1300
