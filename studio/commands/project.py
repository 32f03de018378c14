"""`studio new`, `studio info`, `studio open`: the project itself."""
from __future__ import annotations

from pathlib import Path

from studio.scene.io import load_scene
from studio.store.project import Project


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
            src = f"cad:{g.part}" if g.source == "cad" else (g.path if g.source == "mesh" else f"box {g.size}")
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
            print(f"  {c.name:<22} {c.lens_mm:g} mm  {c.resolution[0]}x{c.resolution[1]}")
    return 0


def cmd_open(args) -> int:
    from studio.ui.app import run
    return run(args.path)
