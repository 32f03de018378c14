"""Job specs: everything the Blender worker needs, written into the job's folder.

A spec is JSON plus binary files beside it: one `meshes/<n>.npz` per body
(vertices and faces in the body frame, readable by Blender's numpy 1.26) and
`tracks.npz` with the film's baked tracks, completed so every root and joint
has a value at every frame. A camera that follows a body is placed here, per
state (`states[].cameras`) or per baked frame (`camera_paths`), so the worker
only keys what it is given. Paths in a spec are relative to its folder. The
spec also lists the outputs the done contract expects (`expected`) and where
the studio delivers them after success (`deliver`); the worker ignores both.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from studio.scene.cameras import camera_path, placed
from studio.scene.io import load_scene
from studio.scene.kinematics import pose_world, tracks_world
from studio.scene.ir import Scene
from studio.scene.meshes import body_mesh
from studio.scene.pose import Pose, Tracks
from studio.store.names import NameProblem, check_id
from studio.store.project import Project, write_atomic
from studio.timeline.film import load_film_tracks
from studio.timeline.plan import load_plan
from studio.timeline.shots import ShotProblem, cuts, state_camera
from studio.timeline.storyboard import content_hash, list_states


SPEC_VERSION = 1
ENGINES = ("BLENDER_WORKBENCH", "CYCLES")


class SpecProblem(ValueError):
    """The project cannot make this job yet; the message says what is missing."""


def frame_file(frame: int) -> str:
    return f"frames/{frame:06d}.png"


def write_meshes(project: Project, scene: Scene, job_dir: Path) -> dict[str, str]:
    """Each body's mesh as meshes/<n>.npz; return {body: relative path}."""
    out = {}
    for i, body in enumerate(scene.bodies):
        mesh = body_mesh(body, project.path)
        rel = f"meshes/{i:04d}.npz"
        buf = _npz(vertices=np.asarray(mesh.vertices, np.float64), faces=np.asarray(mesh.faces, np.int64))
        write_atomic(job_dir / rel, buf)
        out[body.name] = rel
    return out


def _npz(**arrays) -> bytes:
    import io
    b = io.BytesIO()
    np.savez(b, **arrays)
    return b.getvalue()


def completed_tracks(scene: Scene, tracks: Tracks) -> Tracks:
    """The tracks with every root and joint of the scene present (rest values fill gaps)."""
    rest, n = Pose.rest(scene), tracks.n_frames
    roots = {r: np.asarray(tracks.roots.get(r, np.tile(rest.roots[r], (n, 1))), float) for r in scene.roots}
    joints = {}
    for name, v in rest.joints.items():
        joints[name] = np.asarray(tracks.joints[name], float) if name in tracks.joints else \
            np.tile(np.asarray(v, float), (n, 1)) if isinstance(v, list) else np.full(n, float(v))
    return Tracks(tracks.frame_start, roots, joints)


def resolution_of(scene: Scene, camera: str | None, resolution: tuple[int, int] | None) -> list[int]:
    if resolution:
        w, h = int(resolution[0]), int(resolution[1])
        if w < 16 or h < 16 or w % 2 or h % 2:
            raise SpecProblem(f"resolution {w}x{h}: expected even numbers of at least 16 pixels (H.264 needs even sizes)")
        return [w, h]
    return list(scene.camera(camera).resolution) if camera else list(scene.cameras[0].resolution)


def shots_of(project: Project, scene: Scene, first: int, last: int) -> list[dict]:
    """The film's cuts over first..last, each a timeline marker named for its shot and bound
    to the shot's camera (the plan says which camera sees which shot)."""
    try:
        found = cuts(scene, load_plan(project), list_states(project), first, last)
    except ShotProblem as e:
        raise SpecProblem(f"{project.path}: {e}") from None
    return [{"frame": c.frame, "camera": c.camera, "name": c.shot or c.camera} for c in found]


def base_spec(project: Project, kind: str, job_dir: Path, scene: Scene, engine: str) -> dict:
    if engine not in ENGINES:
        raise SpecProblem(f"engine: expected one of {ENGINES}, got {engine!r}")
    if not scene.cameras:
        raise SpecProblem(f"{project.path}: the scene has no camera; add one before rendering")
    return {"version": SPEC_VERSION, "kind": kind, "scene": scene.to_dict(),
            "meshes": write_meshes(project, scene, job_dir), "fps": project.fps,
            "frame_start": project.frame_start, "frame_end": project.frame_start,
            "engine": engine, "samples": 16, "expected": [], "deliver": {}, "look": "studio"}


def still_spec(project: Project, job_dir: Path, state_ids: list[str] | None = None,
               cameras: list[str] | None = None, engine: str = "BLENDER_WORKBENCH",
               resolution=None) -> dict:
    """Storyboard stills: each state through its shot's camera, or through each camera named."""
    scene = load_scene(project)
    states = list_states(project)
    if state_ids:
        unknown = sorted(set(state_ids) - {s.id for s in states})
        if unknown:
            raise SpecProblem(f"{project.path}: no storyboard state named {unknown[0]!r}")
        states = [s for s in states if s.id in state_ids]
    if not states:
        raise SpecProblem(f"{project.path}: the storyboard has no states to render")
    plan = load_plan(project)
    try:                                  # by default each state through its own shot's camera
        own = {s.id: state_camera(scene, plan, s) for s in states}
    except ShotProblem as e:
        raise SpecProblem(f"{project.path}: {e}") from None
    cams = list(cameras) if cameras else sorted(set(own.values()), key=[c.name for c in scene.cameras].index)
    for c in cams:
        scene.camera(c)
    try:                                  # ids become file names: checked again where they are used
        for s in states:
            check_id(s.id, f"state {s.id!r}.id")
        for c in cams:
            check_id(c, f"camera {c!r}.name")
    except NameProblem as e:
        raise SpecProblem(f"{project.path}: {e}") from None
    spec = base_spec(project, "still", job_dir, scene, engine)
    res = resolution_of(scene, None, resolution) if resolution else None
    through = {s.id: list(cameras) if cameras else [own[s.id]] for s in states}
    spec.update(steps=["stills"], cameras=cams, resolution=res or list(scene.cameras[0].resolution),
                states=[{"id": s.id, "frame": s.frame, "shot": s.shot, "resolution": res, "through": through[s.id],
                         "pose": s.pose.completed(scene).to_dict(), "cameras": _placed(scene, s.pose)}
                        for s in states])
    spec["expected"] = [f"out/stills/{s.id}_{c}.png" for s in states for c in through[s.id]]
    spec["deliver"] = {rel: f"renders/stills/{Path(rel).name}" for rel in spec["expected"]}
    spec["record_stills"] = {s.id: f"out/stills/{s.id}_{own[s.id] if own[s.id] in through[s.id] else through[s.id][0]}.png"
                             for s in states}
    spec["state_hashes"] = {s.id: content_hash(scene, s.pose, s.frame) for s in states}
    return spec


def _placed(scene: Scene, pose: Pose) -> dict[str, dict]:
    """Following cameras where they stand for one pose."""
    if not any(c.follow for c in scene.cameras):
        return {}
    world = pose_world(scene, pose.completed(scene))
    return {c.name: {"position": p.position, "target": p.target}
            for c in scene.cameras if c.follow for p in [placed(c, world)]}


def camera_paths(scene: Scene, tracks: Tracks) -> dict[str, dict]:
    """Following cameras' position and target at every baked frame."""
    follow = [c for c in scene.cameras if c.follow]
    if not follow:
        return {}
    world = tracks_world(scene, tracks)
    return {c.name: camera_path(c, world) for c in follow}


def film_tracks(project: Project, scene: Scene) -> Tracks:
    tracks = load_film_tracks(project)
    if tracks is None or tracks.n_frames == 0:
        raise SpecProblem(f"{project.path}: no baked tracks yet; bake the motion between approved states first")
    return completed_tracks(scene, tracks)


def video_spec(project: Project, job_dir: Path, kind: str = "preview", camera: str | None = None,
               engine: str = "BLENDER_WORKBENCH", resolution=None, samples: int = 16,
               deliver_to: str | None = None, frame_range: tuple[int, int] | None = None) -> dict:
    """A preview (Workbench) or film render: every frame (of the in/out range, if given)
    as PNG, then an H.264 MP4."""
    scene = load_scene(project)
    tracks = film_tracks(project, scene)
    frames = [int(f) for f in tracks.frames]
    if frame_range is not None:
        first, last = (int(f) for f in frame_range)
        if not (frames[0] <= first <= last <= frames[-1]):
            raise SpecProblem(f"{project.path}: frames {first}..{last} are outside the baked film; "
                              f"expected an in/out range within {frames[0]}..{frames[-1]}")
        frames = list(range(first, last + 1))
    spec = base_spec(project, kind, job_dir, scene, engine)
    write_atomic(job_dir / "tracks.npz", tracks.to_bytes())
    if camera:
        scene.camera(camera)
    video = f"out/{kind}.mp4"
    spec.update(steps=["frames", "encode"], tracks="tracks.npz", tracks_hash=tracks.hash(),
                frame_start=frames[0], frame_end=frames[-1], camera=camera or scene.cameras[0].name,
                shots=[] if camera else shots_of(project, scene, frames[0], frames[-1]),
                resolution=resolution_of(scene, camera, resolution), samples=int(samples),
                camera_paths=camera_paths(scene, tracks),
                video=video, quality="HIGH" if kind == "film" else "MEDIUM",
                antialias=_antialias(kind, engine))
    spec["expected"] = [frame_file(f) for f in frames] + [video]
    spec["deliver"] = {video: deliver_to or f"renders/{kind}.mp4"}
    return spec


def _antialias(kind: str, engine: str) -> str:
    """Previews trade edges for frame rate; a Workbench film takes FXAA, since on a
    software GL each of 8 samples costs a whole render of the frame."""
    if kind == "preview":
        return "OFF"
    return "FXAA" if engine == "BLENDER_WORKBENCH" else "8"


def blend_spec(project: Project, job_dir: Path, deliver_to: str, camera: str | None = None,
               resolution=None) -> dict:
    """The .blend with the scene, the joint hierarchy and the animation in place."""
    scene = load_scene(project)
    tracks = film_tracks(project, scene)
    spec = base_spec(project, "export_blend", job_dir, scene, "BLENDER_WORKBENCH")
    write_atomic(job_dir / "tracks.npz", tracks.to_bytes())
    spec.update(steps=["blend"], tracks="tracks.npz", tracks_hash=tracks.hash(),
                frame_start=tracks.frame_start, frame_end=tracks.frame_end,
                camera=camera or scene.cameras[0].name,
                shots=[] if camera else shots_of(project, scene, tracks.frame_start, tracks.frame_end),
                resolution=resolution_of(scene, camera, resolution), blend="out/film.blend",
                camera_paths=camera_paths(scene, tracks))
    spec["expected"] = ["out/film.blend"]
    spec["deliver"] = {"out/film.blend": deliver_to}
    return spec


def verify_spec(blend_path: Path, frames: list[int]) -> dict:
    """Reopen a .blend in a fresh worker and describe it at `frames`."""
    return {"version": SPEC_VERSION, "kind": "verify", "blend_in": str(Path(blend_path).resolve()),
            "frames": [int(f) for f in frames], "expected": ["out/inspect.json"], "deliver": {}}
