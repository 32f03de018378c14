"""Characters: importing the G1, verifying a G1 film, and skinning, each with its baseline in the same run.

1. Import: the Unitree G1 from the installed example-robot-data into a new project (the
   `import_character` tool call: read the URDF, join and write 40 links' meshes, find legs and
   hands, measure overlaps at rest), cold (an empty character and shape cache) against cached (the
   same description into another new project with the caches the first left). Figures: seconds and
   the ratio cold / cached.
2. Verify: the G1 film's motion (replayed from resources/examples/g1_delivery, baked, not rendered)
   verified as the studio verifies it (each link's collision geometry as its convex hull), against
   the same tracks verified on the links' collision geometry as the URDF declares it (the concave,
   often open meshes), each after its one-time preparation, which is timed on its own. Figures:
   seconds to prepare, seconds to verify, pair-frames, and the ratio.
3. Skinning: the shipped person's skin deformed at F frames of a baked motion by the studio
   (vectorised linear blend skinning, all frames at once) against Blender's own evaluation of the
   same frames (frame_set + evaluated mesh, timed inside the worker). Figures: milliseconds a frame
   and the ratio.
Run: .venv/bin/python bench/bench_characters.py [--skip-collision] [FRAMES]
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def import_g1(tmp: Path) -> None:
    from studio.store.project import Project
    from studio.tools.box import ToolBox
    os.environ["KEYPOSE_CACHE"] = str(tmp / "cache")
    times = []
    for k in range(2):
        from studio.scene import meshes
        from studio.checks import shape
        meshes.clear_memo()
        shape._MEMORY.clear()
        p = Project.create(tmp / f"lab{k}")
        t0 = time.perf_counter()
        ToolBox(p, actor="person").call("import_character", {"name": "g1", "character": "g1"})
        times.append(time.perf_counter() - t0)
        p.close()
    print(f"import G1: cold {times[0]:.2f} s, cached {times[1]:.2f} s, cold/cached {times[0] / times[1]:.1f}x")


def g1_film(tmp: Path):
    from studio.store.project import Project
    from studio.tools.calls import read_calls, replay
    from studio.tools.box import ToolBox
    p = Project.create(tmp / "film")
    replay(p, read_calls(ROOT / "resources/examples/g1_delivery/calls.jsonl"))
    return p


def verify_g1(tmp: Path, with_collision: bool) -> None:
    from studio.checks.run import run_checks, tool_attachments
    from studio.scene.characters import find_entry, import_robot
    from studio.scene.io import load_scene
    from studio.scene.ir import Scene
    from studio.scene.meshes import scene_meshes
    from studio.checks.footage import Footage
    from studio.checks.shape import shape_of
    from studio.timeline.film import load_film_tracks
    p = g1_film(tmp)
    scene, tracks, plan = load_scene(p), load_film_tracks(p), p.get_doc("plan")
    holds = tool_attachments(p)
    variants = [("hulls (the studio's)", scene)]
    if with_collision:
        imp = import_robot(p, find_entry("g1").file, "g1", "collision")
        d = scene.to_dict()
        mine = {b["name"]: b for b in imp.scene.to_dict()["bodies"] if b["name"].startswith("g1-")}
        d["bodies"] = [mine.get(b["name"], b) for b in d["bodies"]]
        variants.append(("declared collision meshes", Scene.from_dict(d)))
    results = []
    for label, sc in variants:
        t0 = time.perf_counter()
        meshes = scene_meshes(sc, p.path)
        film = Footage.build(sc, meshes, tracks, plan=plan)
        for s in film.shapes:           # the one-time preparation: samples, and grids for non-convex bodies
            if s.planes is None:
                s._need_grid()
        prep = time.perf_counter() - t0
        t0 = time.perf_counter()
        reports = run_checks(sc, meshes, tracks, plan=plan, attachments=holds)
        took = time.perf_counter() - t0
        pen = {r.name: r for r in reports}["NoPenetration"]
        results.append((label, prep, took, pen.metrics.get("pair_frames", 0), pen.verdict))
        print(f"verify G1 film on {label}: prepare {prep:.1f} s, verify {took:.2f} s, "
              f"{pen.metrics.get('pair_frames', 0)} pair-frames, NoPenetration {pen.verdict}")
    if len(results) == 2:
        print(f"collision meshes / hulls: prepare {results[1][1] / results[0][1]:.1f}x, "
              f"verify {results[1][2] / results[0][2]:.1f}x")
    del shape_of


def skinning(tmp: Path, frames: int) -> None:
    from studio.jobs import queue
    from studio.jobs import spec as specs
    from studio.jobs.dispatch import run_submitted
    from studio.scene.io import load_scene
    from studio.scene.kinematics import tracks_world
    from studio.scene.meshes import scene_meshes
    from studio.scene.skin import deform
    from studio.store.project import Project
    from studio.timeline.film import load_film_tracks
    from studio.tools.box import ToolBox
    p = Project.create(tmp / "person")
    box = ToolBox(p, actor="person")
    box.call("import_character", {"name": "anna", "character": "person"})
    box.call("create_body", {"name": "floor", "kind": "ground", "flags": ["static"], "mass": 0, "size": [6, 6, 0.1],
                             "offset": [0, 0, -0.05]})
    box.call("add_camera", {"name": "cam", "position": [3, -2, 1.4], "target": [0, 0, 0.9]})
    box.call("set_state", {"state": "a", "frame": 1001})
    box.call("set_state", {"state": "b", "frame": 1000 + frames, "joints": {
        "anna-shin_L-x": 0.9, "anna-thigh_L-x": -0.6, "anna-upper_arm_R-z": -1.1, "anna-forearm_R-x": 1.2}})
    for s in ("a", "b"):
        box.call("run_verifiers", {"state": s})
        box.call("review_state", {"state": s, "verdict": "approve"})
    box.call("author_segment", {"segment": "a..b", "tool": "interpolate"})
    scene, tracks = load_scene(p), load_film_tracks(p)
    skin = scene_meshes(scene, p.path)["anna-skin"].metadata["skin"]
    world = tracks_world(scene, tracks)
    bones = np.stack([world[b] for b in skin.bones], axis=1)
    best = min(_time(lambda: deform(skin, bones)) for _ in range(3))
    job = queue.submit(p, "probe", lambda d: specs.probe_spec(p, d, list(range(1001, 1001 + frames))))
    job = run_submitted(p, job.id)
    with np.load(queue.job_dir(p, job.id) / "out" / "skin_probe.npz") as z:
        blender = float(np.median(z["anna-skin.seconds"]))
        err = float(np.abs(z["anna-skin"] - deform(skin, bones)).max())
    ours = best / frames
    print(f"skinning {len(skin.vertices)} vertices x {frames} frames: studio {ours * 1000:.2f} ms/frame, "
          f"Blender {blender * 1000:.2f} ms/frame, Blender/studio {blender / ours:.1f}x, max difference "
          f"{err * 1000:.4f} mm")


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    with_collision = "--skip-collision" not in argv
    frames = int(next((a for a in argv if a.isdigit()), "48"))
    tmp = Path(tempfile.mkdtemp(prefix="bench-characters-"))
    print("load average at start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    try:
        import_g1(tmp)
        verify_g1(tmp, with_collision)
        skinning(tmp, frames)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
