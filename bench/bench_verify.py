"""Benchmark: verifying a one-minute film (1,440 frames) against a naive exact scorer, same run.

Builds a 20-body film (each body ~2,000 triangles: resting, sliding and spinning,
stacked, carried, bouncing, flying, and one body sliding through another) and
a 60-body variant, then prints pair-frames per second, seconds per film, peak
memory, the time to re-verify an edited 48-frame interval, and the speed-up
over a naive exact scorer (per-frame trimesh CollisionManager on python-fcl
plus exact signed distance for depth; run last, on a subset of frames, and
extrapolated). Then `studio verify` as a user runs it on a 38-body glTF film
(bench/glb_bench_film.py): process start, wall time with an empty cache (cold)
and again (warm), each against the baseline, the machine's load, and its agreement with an independent exact scorer
(python-fcl GJK/EPA on the same poses), timed beside it as the baseline.
Run: .venv/bin/python bench/bench_verify.py [--quick] [--glb-only]
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import trimesh  # noqa: E402

from studio.checks.contacts import tau  # noqa: E402
from studio.checks.run import FilmCheck, run_checks  # noqa: E402
from studio.checks.shape import shape_of  # noqa: E402
from studio.scene.ir import Body, Geometry, Scene  # noqa: E402
from studio.scene.pose import Tracks  # noqa: E402
from studio.scene.transforms import quat_from_axis_angle  # noqa: E402

FRAMES = 1440


def mesh_kinds(rng):
    """Meshes of 1,280 to 3,072 triangles (about 2,000 on average)."""
    def capsule():
        return trimesh.creation.capsule(height=rng.uniform(0.1, 0.25), radius=rng.uniform(0.04, 0.08), count=[32, 32])

    def ellipsoid():
        m = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
        m.apply_scale(rng.uniform(0.05, 0.12, 3))
        return m

    def block():
        m = trimesh.creation.box(extents=rng.uniform(0.1, 0.3, 3))
        for _ in range(4):
            m = m.subdivide()
        return m
    return [capsule, ellipsoid, block]


def slab(size):
    """A slab of ~3,000 triangles."""
    m = trimesh.creation.box(extents=size)
    for _ in range(4):
        m = m.subdivide()
    return m


def rest_height(mesh):
    return -mesh.bounds[0, 2]


def film(n_groups=1, seed=5):
    """A scene, its meshes and 1,440 frames of tracks; 19 bodies per group plus one ground."""
    rng = np.random.default_rng(seed)
    kinds = mesh_kinds(rng)
    t = np.arange(FRAMES) / 24.0
    bodies, meshes, roots = [], {}, {}
    ground = slab([12, 12 * n_groups, 0.1])
    bodies.append(Body("ground", kind="ground", geometry=Geometry("mesh", path="ground")))
    meshes["ground"] = ground
    roots["ground"] = track(np.zeros(3) + [0, 0, -0.05])

    def add(name, mesh, positions, quats=None, **kw):
        bodies.append(Body(name, geometry=Geometry("mesh", path=name), **kw))
        meshes[name] = mesh
        roots[name] = track(positions, quats)

    for g in range(n_groups):
        y0 = 12 * g - 6 * (n_groups - 1)
        table = slab([1.2, 0.8, 0.05])
        add(f"table{g}", table, np.array([0, y0, 0.7]), kind="static")
        for k in range(3):                                     # resting on the table
            m = kinds[k % 3]()
            add(f"g{g}_ontable{k}", m, np.array([-0.4 + 0.4 * k, y0, 0.725 + rest_height(m)]))
        for k in range(2):                                     # resting on the ground
            m = kinds[(k + 1) % 3]()
            add(f"g{g}_rest{k}", m, np.array([2 + k, y0 + 2, rest_height(m)]))
        for k in range(4):                                     # sliding and spinning on the ground
            m = kinds[k % 3]()
            x = -3 + k * 1.5 + 0.5 * np.sin(t * (0.3 + 0.1 * k))
            y = y0 - 2 + 0.5 * np.cos(t * (0.2 + 0.05 * k))
            yaw = t * (0.5 + 0.2 * k)
            add(f"g{g}_slide{k}", m, np.c_[x, y, np.full(FRAMES, rest_height(m))], yaw_quat(yaw))
        for k in range(2):                                     # a stack sliding together
            low, top = kinds[2](), kinds[(k + 1) % 3]()
            x = 3 + 0.8 * np.sin(t * 0.25 + k)
            low_z = rest_height(low)
            add(f"g{g}_stacklow{k}", low, np.c_[x, np.full(FRAMES, y0 - 3 - k), np.full(FRAMES, low_z)])
            add(f"g{g}_stacktop{k}", top, np.c_[x, np.full(FRAMES, y0 - 3 - k),
                                                np.full(FRAMES, low.bounds[1, 2] + low_z + rest_height(top))])
        drone = kinds[1]()                                     # a drone carrying a parcel
        parcel = kinds[2]()
        path = np.c_[-2 + np.sin(t * 0.2), y0 + 3 + np.cos(t * 0.2), 1.5 + 0.2 * np.sin(t)]
        add(f"g{g}_drone", drone, path, flags=["self_propelled"])
        add(f"g{g}_parcel", parcel, path - [0, 0, drone.bounds[1, 2] * 0 - drone.bounds[0, 2] + parcel.bounds[1, 2]])
        ball = kinds[0]()                                      # bouncing
        h = np.abs(np.sin(t * 2.0)) * 0.6
        add(f"g{g}_bounce", ball, np.c_[np.full(FRAMES, 4.0), np.full(FRAMES, y0), h + rest_height(ball)])
        through = kinds[1]()                                   # slides through a resting body now and then
        r0 = roots[f"g{g}_rest0"][0, :3]
        x = r0[0] + 1.5 * np.sin(t * 0.4)
        add(f"g{g}_intruder", through, np.c_[x, np.full(FRAMES, r0[1]), np.full(FRAMES, rest_height(through))])
    for k in range(20 * n_groups - len(bodies)):             # fill up with flyers
        m = kinds[k % 3]()
        add(f"flyer{k}", m, np.c_[np.sin(t + k), np.cos(t + k) + k, np.full(FRAMES, 3.0 + k)],
            flags=["self_propelled"])
    return Scene(name="bench", bodies=bodies), meshes, Tracks(1001, roots)


def yaw_quat(yaw):
    return quat_from_axis_angle(np.tile([0.0, 0.0, 1.0], (len(yaw), 1)), yaw)


def track(pos, quats=None):
    pos = np.broadcast_to(np.asarray(pos, float), (FRAMES, 3))
    q = np.tile([1.0, 0, 0, 0], (FRAMES, 1)) if quats is None else quats
    return np.c_[pos, q]


def naive(scene, meshes, tracks, frames):
    """Per frame: a CollisionManager over all bodies, then exact signed distance of each colliding pair."""
    from studio.scene.kinematics import tracks_world
    world = tracks_world(scene, tracks)
    static = {b.name for b in scene.bodies if b.is_static}
    thick = {n: float(np.min(m.bounding_box_oriented.primitive.extents)) for n, m in meshes.items()}
    manager = trimesh.collision.CollisionManager()
    for n, m in meshes.items():
        manager.add_object(n, m)
    counted = 0
    for f in frames:
        for n in meshes:
            manager.set_transform(n, world[n][f])
        hit, names = manager.in_collision_internal(return_names=True)
        bad = False
        for a, b in names:
            if a in static and b in static:
                continue
            rel = np.linalg.inv(world[b][f]) @ world[a][f]
            pa = trimesh.transform_points(meshes[a].vertices, rel)
            rel2 = np.linalg.inv(world[a][f]) @ world[b][f]
            pb = trimesh.transform_points(meshes[b].vertices, rel2)
            depth = max(trimesh.proximity.signed_distance(meshes[b], pa).max(),
                        trimesh.proximity.signed_distance(meshes[a], pb).max())
            bad |= depth > tau(thick[a], thick[b])
        counted += bad
    return counted


def timed(fn):
    """(wall seconds, cpu seconds of this process, result): cpu is what one core spent."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(n_groups, label):
    scene, meshes, tracks = film(n_groups)
    n = len(scene.bodies)
    tris = np.mean([len(m.faces) for m in meshes.values()])
    prep_wall, prep, _ = timed(lambda: [shape_of(m) for m in meshes.values()])
    pairs = n * (n - 1) // 2
    w_pen, t_pen, pen_only = timed(lambda: run_checks(scene, meshes, tracks, names=["NoPenetration"]))
    w_all, t_all, reports = timed(lambda: run_checks(scene, meshes, tracks))
    by = {r.name: r for r in reports}
    mem = peak_mb()
    print(f"\n== {label}: {n} bodies x {tris:.0f} triangles (mean), {FRAMES} frames, {pairs} pairs ==")
    print(f"{'':48} {'cpu s':>8} {'wall s':>8} {'pair-frames/s (cpu)':>20}")
    print(f"{'asset preparation (cold cache, once per mesh)':48} {prep:8.2f} {prep_wall:8.2f}")
    print(f"{'penetration scoring, all frames':48} {t_pen:8.3f} {w_pen:8.3f} {pairs * FRAMES / t_pen:20,.0f}")
    print(f"{'all eight verifiers, all frames':48} {t_all:8.3f} {w_all:8.3f} {pairs * FRAMES / t_all:20,.0f}")
    print(f"  measured pair-frames after broadphase: {pen_only[0].metrics.get('pair_frames_measured')}, "
          f"penetration rate {by['NoPenetration'].metrics['penetration_rate']:.3f}, "
          f"floating rate {by['Supported'].metrics.get('floating_rate', 0):.3f}")
    print(f"  peak memory so far (max RSS, asset preparation included): {mem:.0f} MB")
    return scene, meshes, tracks, t_pen


def baseline(scene, meshes, tracks, t_pen, n_frames, label):
    """The naive exact scorer on n_frames spread over the film, extrapolated to all of it."""
    frames = np.linspace(0, FRAMES - 1, n_frames).astype(int)
    w_naive, t_naive, _ = timed(lambda: naive(scene, meshes, tracks, frames))
    scale = FRAMES / len(frames)
    t_naive, w_naive = t_naive * scale, w_naive * scale
    n = len(scene.bodies)
    pairs = n * (n - 1) // 2
    print(f"{label}: naive exact scorer on {len(frames)} of {FRAMES} frames, extrapolated to the film")
    print(f"{'  naive exact scorer':48} {t_naive:8.1f} {w_naive:8.1f} {pairs * FRAMES / t_naive:20,.1f}")
    print(f"{'  speed-up (penetration scoring, cpu)':48} {t_naive / t_pen:8.0f}x")


def interval(scene, meshes, tracks, _t_pen):
    check = FilmCheck(scene, meshes)
    check.verify(tracks)
    edited = Tracks(tracks.frame_start, {k: v.copy() for k, v in tracks.roots.items()}, dict(tracks.joints))
    name = next(b.name for b in scene.bodies if "slide0" in b.name)
    edited.roots[name][600:648, 0] += 0.3
    wall, cpu, _ = timed(lambda: check.verify_interval(edited, 1601, 1648))
    print(f"{'re-verify an edited 48-frame interval':48} {cpu:8.3f} {wall:8.3f}")


def glb_film():
    """`studio verify FILM.glb` in its own process on the 38-body film: start, cold, warm, cross-check."""
    import json
    import subprocess

    from glb_bench_film import fcl_scorer
    from glb_bench_film import film as glb_film_38
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        g, bodies = glb_film_38()
        path = Path(tmp) / "film38.glb"
        g.write(path)
        env = dict(os.environ, KEYPOSE_CACHE=str(Path(tmp) / "cache"))

        def run(*args, one_core=False):
            """(wall, cpu of the child, process) of one `studio verify` (one_core: held to the first core)."""
            w0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            pin = (lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})) if one_core else None
            proc = subprocess.run([sys.executable, "-m", "studio.cli", "verify", *args], capture_output=True,
                                  text=True, env=env, preexec_fn=pin)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            return time.perf_counter() - w0, c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime, proc
        start = min(run(str(Path(tmp) / "absent.glb"))[:2] for _ in range(3))
        out = Path(tmp) / "report.json"
        cold = run(str(path), "--json", str(out))
        warm = run(str(path), "--json", str(out))
        warm1 = run(str(path), one_core=True)
        proc = cold[2]
        if not out.exists():
            print(f"studio verify failed: {proc.stderr.strip()}")
            return
        doc = json.loads(out.read_text())
        pen = next(r for r in doc["reports"] if r["name"] == "NoPenetration")
        studio = {(e["frame"] - 1, frozenset((e["a"], e["b"]))) for e in pen["evidence"]}
        w_fcl, c_fcl, truth = timed(lambda: fcl_scorer(bodies))
        truth = {(f, frozenset((a, b))) for f, a, b in truth}
    moving = sum(1 for b in bodies.values() if b[3])
    tris = np.mean([len(b[0].faces) for b in bodies.values()])
    print(f"\n== studio verify on a glTF film: {len(bodies)} bodies x {tris:.0f} triangles (mean), {moving} moving, "
          f"{FRAMES} frames ==")
    print(f"{'':48} {'cpu s':>8} {'wall s':>8}")
    print(f"{'process start (before reading the film)':48} {start[1]:8.2f} {start[0]:8.2f}")
    print(f"{'studio verify, empty cache (cold)':48} {cold[1]:8.2f} {cold[0]:8.2f}")
    print(f"{'studio verify, warm cache':48} {warm[1]:8.2f} {warm[0]:8.2f}")
    print(f"{'studio verify, warm cache, one core':48} {warm1[1]:8.2f} {warm1[0]:8.2f}")
    print(f"{'independent exact scorer (python-fcl), in-process':48} {c_fcl:8.2f} {w_fcl:8.2f}")
    print(f"{'  start / fcl (cpu, wall)':48} {start[1] / c_fcl:7.2f}x {start[0] / w_fcl:7.2f}x")
    print(f"{'  cold / fcl (cpu, wall)':48} {cold[1] / c_fcl:7.2f}x {cold[0] / w_fcl:7.2f}x")
    print(f"{'  warm / fcl (cpu, wall)':48} {warm[1] / c_fcl:7.2f}x {warm[0] / w_fcl:7.2f}x")
    print(f"  machine load (1, 5, 15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"  cross-check: {len(studio & truth)} penetrating pair-frames agree, {len(studio - truth)} only in "
          f"studio verify, {len(truth - studio)} only in fcl; penetration rate "
          f"{doc['metrics']['penetration_rate']:.3f}")
    print("targets: warm <= 2 s, cold no slower than the exact scorer, start <= 0.3 s")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer baseline frames")
    ap.add_argument("--glb-only", action="store_true", help="only studio verify on the 38-body glTF film")
    args = ap.parse_args(argv)
    if args.glb_only:
        glb_film()
        return 0
    with tempfile.TemporaryDirectory() as cache:
        os.environ["KEYPOSE_CACHE"] = cache                    # a cold asset cache: preparation is measured
        s20 = bench(1, "20-body film")
        interval(*s20)
        s60 = bench(3, "60-body variant")
        print(f"\npeak memory of the studio's checks (max RSS so far)  {peak_mb():8.0f} MB\n")
        baseline(*s20, 2 if args.quick else 8, "20-body film")
        if not args.quick:
            baseline(*s60, 2, "60-body variant")
    glb_film()
    print("cpu = time.process_time() of this single-threaded process (other work on the machine does not count);"
          " wall includes waiting for a shared CPU")
    print("targets: >= 100,000 pair-frames/s, <= 3 s per 20-body film, >= 100x naive, <= 2 GB, interval <= 0.2 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
