"""`studio new`, `studio info`, `studio open`, `studio scene ...`: the project itself."""
from __future__ import annotations

import os
import time
from pathlib import Path

from studio.scene.io import load_scene
from studio.scene.importers import MeshFileError, import_mesh
from studio.scene.meshes import MeshError, build_body_mesh, build_scene_meshes, scene_design_id
from studio.scene.parts import catalogue
from studio.store.project import Project

from studio.commands import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED, CommandError


def register(sub) -> None:
    p = sub.add_parser("new", help="create an empty project folder")
    p.add_argument("path", type=Path)
    p.add_argument("--name")
    p.add_argument("--fps", type=int, default=24)
    p.add_argument("--frame-start", type=int, default=1001)
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("info", help="a readable summary of a project")
    p.add_argument("path", type=Path)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("open", help="open the project in the studio window")
    p.add_argument("path", type=Path, nargs="?")
    p.set_defaults(func=cmd_open)

    scene = sub.add_parser("scene", help="the scene: meshes and CAD parts")
    scene_sub = scene.add_subparsers(dest="scene_command", metavar="SCENE_COMMAND", required=True)
    p = scene_sub.add_parser("build", help="tessellate and cache every body's mesh, and report each")
    p.add_argument("path", type=Path)
    p.set_defaults(func=cmd_scene_build)
    p = scene_sub.add_parser("import", help="add a glTF/OBJ/STL mesh file to the scene as a new body")
    p.add_argument("path", type=Path, help="the project folder")
    p.add_argument("file", type=Path, help="a .glb, .gltf, .obj or .stl file (metres; glTF is +Y up)")
    p.add_argument("--name", required=True, help="the new body's name")
    p.add_argument("--kind", default="rigid", choices=("rigid", "static", "ground", "effect"))
    p.add_argument("--at", type=float, nargs=3, default=(0.0, 0.0, 0.0), metavar=("X", "Y", "Z"))
    p.set_defaults(func=cmd_scene_import)
    p = scene_sub.add_parser("parts", help="list the CAD parts a scene can use, with their parameters")
    p.set_defaults(func=cmd_scene_parts)
    p = scene_sub.add_parser("import-urdf", help="add a robot from its URDF (or a library character) as a character")
    p.add_argument("path", type=Path, help="the project folder")
    p.add_argument("file", help="a .urdf file, or a name from `studio characters`")
    p.add_argument("--name", required=True, help="the character's name (its bodies are named <name>-<link>)")
    p.add_argument("--at", type=float, nargs=3, default=(0.0, 0.0, 0.0), metavar=("X", "Y", "Z"),
                   help="where it stands: its root over (X, Y), its lowest point at height Z")
    p.add_argument("--yaw", type=float, default=0.0, help="the way it faces, radians from +X")
    p.add_argument("--geometry", choices=("hull", "collision", "visual"), default="hull",
                   help="which geometry the checks use: each link's collision geometry as its convex hull "
                        "(default), as declared, or what is shown")
    p.set_defaults(func=cmd_scene_import_urdf)

    p = sub.add_parser("characters", help="the character library: robots and characters that can be imported")
    p.add_argument("--json", action="store_true", help="one JSON object per character")
    p.set_defaults(func=cmd_characters)
    ch = p.add_subparsers(dest="characters_command", metavar="CHARACTERS_COMMAND")
    q = ch.add_parser("make-human", help="make a skinned human (.glb) with the Blender worker: Rigify's metarig, "
                                         "a generated body, automatic weights")
    q.add_argument("out", type=Path, help="the .glb to write")
    q.add_argument("--height", type=float, default=1.75, help="metres (default 1.75)")
    q.set_defaults(func=cmd_make_human)
    q = ch.add_parser("profile", help="print the human rig profile (JSON) that skinned characters' limits "
                                      "come from, to copy and edit")
    q.set_defaults(func=cmd_profile)


def cmd_new(args) -> int:
    with Project.create(args.path, name=args.name, fps=args.fps, frame_start=args.frame_start) as p:
        print(f"created {p.path} (fps {p.fps}, frame_start {p.frame_start})")
    return 0


def cmd_info(args) -> int:
    with Project.open(args.path) as p:
        scene = load_scene(p)
        print(f"project  {p.name}  ({p.path})")
        print(f"frames   fps {p.fps}, frame_start {p.frame_start}, units {p.meta('units')}")
        print(f"bodies   {len(scene.bodies)}")
        for b in scene.bodies:
            g = b.geometry
            src = {"cad": f"cad:{g.part}", "mesh": g.path, "skin": f"skin {g.path}", "none": "no surface"}.get(
                g.source, f"box {g.size}")
            flags = f" [{', '.join(b.flags)}]" if b.flags else ""
            print(f"  {b.name:<22} {b.kind:<7} {src}{flags}")
        print(f"joints   {len(scene.joints)}")
        for j in scene.joints:
            print(f"  {j.name:<22} {j.type:<9} {j.parent} -> {j.child}  limits [{j.lower:+.3f}, {j.upper:+.3f}]")
        print(f"frames   {len(scene.frames)} named")
        for f in scene.frames:
            print(f"  {f.name:<22} on {f.body}")
        print(f"cameras  {len(scene.cameras)}")
        for c in scene.cameras:
            print(f"  {c.name:<22} {c.lens_mm:g} mm  {c.resolution[0]}x{c.resolution[1]}"
                  + (f"  follows {c.follow}" if c.follow else ""))
        from studio.checks.signals import signals
        sig = signals(p)
        value, missing = sig.progress, sig.missing
        print(f"completion {'yes' if sig.complete else 'no'}: {sig.completion}")
        print(f"coverage {sig.coverage.text()}")
        for u in sig.coverage.uncertified:
            print(f"  not certified: {u}")
        print(f"progress {100 * value:.0f}%")
        for m in missing[:12]:
            print(f"  missing: {m}")
        if len(missing) > 12:
            print(f"  ... and {len(missing) - 12} more")
    return 0


def cmd_open(args) -> int:
    if args.path is not None and not Path(args.path).is_dir():
        raise CommandError(f"{args.path}: no such project folder", EXIT_BAD_INPUT)
    if not any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        raise CommandError("no display to open a window on (DISPLAY is not set); run it under xvfb-run, "
                           "or make the film headless with `studio demo`", EXIT_ENVIRONMENT)
    from studio.ui.app import run
    return run(args.path)


def cmd_scene_build(args) -> int:
    """Exit 1 if a mesh is not watertight: the verifiers' inside/outside tests need closed meshes."""
    t0 = time.perf_counter()
    with Project.open(args.path) as p:
        scene = load_scene(p)
        print(f"scene {scene.name}: {len(scene.bodies)} bodies, design {scene_design_id(scene)}")
        print(f"  {'body':<22} {'triangles':>9}  watertight  cache  {'seconds':>7}")

        def show(i, n, b):
            print(f"  {b.body:<22} {len(b.mesh.faces):>9}  {'yes' if b.mesh.is_watertight else 'NO':<10}  "
                  f"{b.cache:<5}  {b.seconds:>7.3f}", flush=True)
        try:
            builds = build_scene_meshes(scene, p.path, show)
        except MeshError as e:
            raise CommandError(str(e), EXIT_BAD_INPUT) from None
    leaky = [b.body for b in builds if not b.mesh.is_watertight]
    hits = sum(b.cache in ("hit", "memo") for b in builds)
    misses = sum(b.cache == "miss" for b in builds)
    print(f"total {sum(len(b.mesh.faces) for b in builds)} triangles; "
          f"{len(builds) - len(leaky)} of {len(builds)} watertight; cache {hits} hit, {misses} miss; "
          f"{time.perf_counter() - t0:.2f} s")
    if leaky:
        print(f"not watertight: {', '.join(leaky)}")
        return EXIT_FAILED
    return 0


def cmd_scene_import(args) -> int:
    with Project.open(args.path) as p:
        try:
            body = import_mesh(p, args.file, args.name, args.kind, args.at)
            built = build_body_mesh(body, p.path)
        except (MeshFileError, MeshError) as e:
            raise CommandError(str(e), EXIT_BAD_INPUT) from None
    m = built.mesh
    print(f"imported {args.file} as {body.name} ({body.kind}): {len(m.faces)} triangles, "
          f"watertight {'yes' if m.is_watertight else 'NO'}, size {' x '.join(f'{e:.3f}' for e in m.extents)} m")
    return 0


def cmd_scene_parts(args) -> int:
    for name, doc, params in catalogue():
        shown = ", ".join(f"{k}={'?' if v is None else f'{v:g}'}" for k, v in params.items())
        print(f"{name:<18} {doc}\n{'':<18} {shown}")
    return 0


def cmd_scene_import_urdf(args) -> int:
    """The description is read whole first, so a bad file is exit 2 with nothing stored."""
    from studio.scene.characters import cached_link_meshes, find_entry
    from studio.scene.robots import description_digest, without_world
    from studio.scene.urdf import UrdfError, read_urdf
    file = Path(args.file)
    if file.suffix.lower() != ".urdf":
        try:
            file = find_entry(args.file).file
        except KeyError as e:
            raise CommandError(f"{args.file}: not a .urdf file, and {e.args[0]}", EXIT_BAD_INPUT) from None
    elif not file.is_file():
        raise CommandError(f"{file}: no such file", EXIT_BAD_INPUT)
    try:
        desc = without_world(read_urdf(file))
        cached_link_meshes(desc, description_digest(desc), args.geometry)
    except UrdfError as e:
        raise CommandError(str(e), EXIT_BAD_INPUT) from None
    from studio.tools.box import ToolBox
    from studio.tools.errors import ToolRefused
    with Project.open(args.path) as p:
        p.require_writable()
        try:
            out = ToolBox(p, actor="person").call("import_character", {
                "name": args.name, "file": str(file.resolve()), "position": list(args.at), "yaw": args.yaw,
                "geometry": args.geometry})
        except ToolRefused as e:
            raise CommandError(str(e), EXIT_FAILED) from None
    r = out.result
    print(f"imported {file.name} as {args.name}: {r['bodies']} bodies, {r['joints']} joints "
          f"({r['movable_joints']} movable), {r['allowed_overlaps']} link pairs overlapping at rest allowed")
    print(f"  legs:  {', '.join(r['legs']) or 'none found'}")
    print(f"  hands: {', '.join(r['hands']) or 'none found'}")
    for note in r["notes"]:
        print(f"  note: {note}")
    return 0


def cmd_characters(args) -> int:
    import json
    from studio.scene.characters import library, user_folders
    entries = library()
    for e in entries:
        if args.json:
            print(json.dumps({"name": e.name, "file": str(e.file), "about": e.about, "where": e.where}))
        else:
            print(f"{e.name:<16} {e.about:<44} {e.file}")
    if not args.json:
        folders = user_folders()
        print(f"{len(entries)} character(s); user folders (settings character_folders): "
              f"{', '.join(map(str, folders)) or 'none'}")
    return 0


def cmd_profile(args) -> int:
    import json
    from studio.scene.rig_profile import human_profile
    print(json.dumps(human_profile(), indent=1))
    return 0


def cmd_make_human(args) -> int:
    """One run of the Blender worker in a scratch folder; the file appears only when it is whole."""
    import json
    import shutil
    import tempfile
    from studio.jobs.worker_process import BlenderMissing, WorkerRun, worker_command
    out = Path(args.out)
    if out.suffix.lower() != ".glb":
        raise CommandError(f"{out}: expected a .glb file name", EXIT_BAD_INPUT)
    if not 1.0 <= args.height <= 2.3:
        raise CommandError(f"--height {args.height}: a person between 1.0 and 2.3 m is made", EXIT_BAD_INPUT)
    try:
        command = worker_command()
    except BlenderMissing as e:
        raise CommandError(str(e), EXIT_ENVIRONMENT) from None
    with tempfile.TemporaryDirectory(prefix="keypose-human-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps({"version": 1, "kind": "make_human", "height": args.height}))
        run = WorkerRun(command, spec, Path(tmp) / "log.txt")
        code = run.wait(lambda event: None)
        made = Path(tmp) / "out" / "human.glb"
        if code != 0 or not made.is_file():
            log = (Path(tmp) / "log.txt").read_text()[-600:]
            raise CommandError(f"the Blender worker could not make the human (exit {code}): {log.strip()}",
                               EXIT_FAILED)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(made, out.with_suffix(".part.glb"))
        os.replace(out.with_suffix(".part.glb"), out)
    print(f"made {out} ({out.stat().st_size} bytes, {args.height:.2f} m)")
    return 0
