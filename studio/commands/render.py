"""`studio render`, `studio export` and `studio jobs`: the background Blender worker.
The work is in render_jobs, imported only when one of these commands runs."""
from __future__ import annotations

from pathlib import Path


def _run(name: str):
    def func(args) -> int:
        from studio.commands import render_jobs
        return getattr(render_jobs, name)(args)
    return func


def register(sub) -> None:
    p = sub.add_parser("render", help="render stills, a preview or the film through the Blender worker")
    p.add_argument("path", type=Path)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--stills", action="store_true", help="each storyboard state through each camera")
    what.add_argument("--preview", action="store_true", help="the film with Workbench, H.264 MP4")
    what.add_argument("--film", action="store_true", help="the film with the settings' render engine")
    p.add_argument("--state", action="append", help="only this state (stills; repeatable)")
    p.add_argument("--camera", action="append", help="only this camera (repeatable; one for video)")
    p.add_argument("--frames", help="in/out range of a preview or film, e.g. 1010..1040 (default: the whole film)")
    _render_options(p)
    p.set_defaults(func=_run("cmd_render"))

    p = sub.add_parser("export", help="export the film (.blend, .mp4); refused while required checks fail")
    p.add_argument("path", type=Path)
    p.add_argument("--blend", type=Path, help="write the .blend here")
    p.add_argument("--video", type=Path, help="write the film's MP4 here")
    p.add_argument("--usd", type=Path, help="write the film as OpenUSD here (.usd, .usdc or .usda)")
    p.add_argument("--gltf", type=Path, help="write the film as an animated glTF binary here (.glb), which "
                                             "`studio verify` reads back")
    p.add_argument("--with-exceptions", action="store_true",
                   help="export although required checks fail, with a delivery report beside the outputs")
    p.add_argument("--camera", help="film camera (default: the storyboard's shots)")
    _render_options(p)
    p.set_defaults(func=_run("cmd_export"))

    p = sub.add_parser("jobs", help="list, show, resume or cancel render jobs")
    p.add_argument("path", type=Path)
    p.add_argument("action", choices=("list", "show", "resume", "cancel"), nargs="?", default="list")
    p.add_argument("job", type=int, nargs="?")
    p.add_argument("--farm", help="Ray dashboard address for resume (default: settings farm_address)")
    p.set_defaults(func=_run("cmd_jobs"))


def _render_options(p) -> None:
    p.add_argument("--engine", choices=("workbench", "cycles"), help="default: the settings' render_engine")
    p.add_argument("--samples", type=int, default=16, help="Cycles samples")
    p.add_argument("--resolution", help="WIDTHxHEIGHT (default: the camera's)")
    p.add_argument("--farm", help="Ray dashboard address, e.g. http://127.0.0.1:8265 (default: settings)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
