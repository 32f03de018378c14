"""The background Blender worker: reads a job spec, does the job, says how it went.

Run as `python worker.py SPEC.json` with bpy installed, or as
`blender -b --factory-startup --python worker.py -- SPEC.json`; with `--serve`
it stays up and takes one spec path per line on stdin (a warm worker, so
stills skip Blender's start-up). It imports only its sibling modules, never
the studio: it runs in Blender's Python, not the studio's. Progress is JSON
lines on stdout; the last line of a job is `done` or `error`. Exit codes:
0 done, 1 the job failed, 2 the spec is wrong.

A worker never outlives its studio: started with KEYPOSE_STUDIO_PID set, it
watches its parent from a thread (Blender releases the GIL while it renders)
and ends itself within a fraction of a second once the studio is gone. Every
frame it finished is already on disk under its final name, for resume.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from outputs import DiskFull, SpecError, emit, ensure_writable, inside_folder, write_json_atomic  # noqa: E402

KINDS = ("still", "preview", "film", "export_blend", "export_interchange", "verify", "make_human", "probe")
WATCH_SECONDS = 0.2


def studio_gone(parent: int, studio: int) -> bool:
    """Has the studio that started this worker died (re-parented, or its pid gone)?"""
    if os.getppid() != parent:
        return True
    try:
        os.kill(studio, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False


def watch_studio() -> None:
    """End this worker (and anything it started in its group) when its studio dies."""
    pid = os.environ.get("KEYPOSE_STUDIO_PID", "")
    if not pid.isdigit():
        return
    studio, parent = int(pid), os.getppid()

    def watch() -> None:
        while not studio_gone(parent, studio):
            time.sleep(WATCH_SECONDS)
        if os.getpgrp() == os.getpid():      # a job's own session: take its children along
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os._exit(3)

    threading.Thread(target=watch, name="watch-studio", daemon=True).start()


def load_spec(path: str) -> dict:
    try:
        with open(path) as f:
            spec = json.load(f)
    except FileNotFoundError:
        raise SpecError(f"{path}: the job spec is missing") from None
    except json.JSONDecodeError as e:
        raise SpecError(f"{path}: the job spec is not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
        raise SpecError(f"{path}: spec.kind: expected one of {KINDS}, got {spec.get('kind')!r}")
    spec["job_dir"] = os.path.dirname(os.path.abspath(path))
    return spec


def in_job(spec: dict, rel: str) -> str:
    """A spec's relative path inside its job folder; a path leading out is refused."""
    return inside_folder(spec["job_dir"], rel, "path")


def run(spec: dict) -> dict[str, str]:
    """Carry out one spec; return the outputs written, {relpath: sha256}."""
    import keyframes
    import renders
    import scene_from_ir as sfi

    kind, job_dir = spec["kind"], spec["job_dir"]
    if kind == "verify":
        return verify(spec)
    if kind == "make_human":
        return make_human(spec)
    ensure_writable(in_job(spec, "out"), "spec job folder")
    emit("build", message=f"building scene {spec['scene'].get('name', '')}")
    sfi.reset()
    meshes = {name: in_job(spec, rel) for name, rel in spec.get("meshes", {}).items()}
    objects = sfi.build_scene(spec["scene"], meshes)
    if spec.get("skins"):                   # skinned characters: an armature each (see armature)
        import armature
        armature.build_skins(spec["skins"], objects, lambda rel: in_job(spec, rel))
    sfi.set_render(spec.get("engine", "BLENDER_WORKBENCH"), spec["resolution"], spec.get("samples", 16),
                   str(spec.get("antialias", "8")), str(spec.get("look", "flat")))
    if spec.get("threads"):                 # e.g. 1: a benchmark's one-core figure, or a farm slot's share
        sfi.set_threads(int(spec["threads"]))
    emit("build", message=f"{len(objects)} objects", engine=bpy_engine())
    start, end = int(spec["frame_start"]), int(spec.get("frame_end", spec["frame_start"]))
    if spec.get("tracks"):
        path = in_job(spec, spec["tracks"])
        if not os.path.isfile(path):
            raise SpecError(f"spec tracks: file {path} is missing")
        first, last = keyframes.apply_tracks(objects, spec["scene"], path)
        if spec.get("skins"):
            import armature
            armature.key_skin_actions(spec["skins"], objects, lambda rel: in_job(spec, rel), first)
        keyframes.apply_camera_paths(objects, spec.get("camera_paths", {}), first)
        # the spec's range is an in/out range within the tracks (the whole of them unless narrowed)
        start, end = max(start, first), min(end, last)
        if start > end:
            raise SpecError(f"spec frame_start..frame_end: {spec['frame_start']}..{spec.get('frame_end')} is "
                            f"outside the tracks' frames {first}..{last}")
    sfi.set_frame_range(spec["fps"], start, end)
    cams = [c["name"] for c in spec["scene"].get("cameras", [])]
    if not cams:
        raise SpecError("spec scene.cameras: the scene has no camera to render through")
    bpy_scene_camera(objects, spec.get("camera") or cams[0])
    sfi.set_shots(spec.get("shots", []), objects)
    steps, outputs = spec.get("steps", []), {}
    if "stills" in steps:
        out_dir = in_job(spec, "out/stills")
        os.makedirs(out_dir, exist_ok=True)
        outputs.update(renders.render_stills(objects, spec["scene"], spec["states"],
                                             spec.get("cameras") or cams, out_dir, job_dir))
    if "frames" in steps:
        frames = spec.get("frames") or list(range(start, end + 1))
        outputs.update(renders.render_frames(frames, in_job(spec, "frames"), job_dir, end - start + 1))
    if "encode" in steps:
        emit("encode", message=f"encoding {spec['video']}")
        rel = spec["video"]
        outputs[rel] = renders.encode_video(in_job(spec, "frames"), start, end, spec["fps"],
                                            spec["resolution"], in_job(spec, rel), spec.get("quality", "MEDIUM"))
        emit("encode", output=rel, sha256=outputs[rel], message="video written")
    if "blend" in steps:
        rel = spec["blend"]
        outputs[rel] = renders.save_blend(in_job(spec, rel))
        emit("blend", output=rel, sha256=outputs[rel], message=".blend saved")
    outputs.update(interchange_steps(spec, steps))
    if "skin_probe" in steps:               # the evaluated skins at given frames, to compare with the studio's
        import armature
        import numpy as np
        from outputs import sha256_file
        got = armature.probe(spec.get("skins", []), objects, [int(f) for f in spec.get("probe_frames", [start])])
        rel = "out/skin_probe.npz"
        np.savez(in_job(spec, rel), **got)
        outputs[rel] = sha256_file(in_job(spec, rel))
    return outputs


def interchange_steps(spec: dict, steps: list) -> dict[str, str]:
    """USD and glTF of the built, animated scene (see interchange)."""
    outputs = {}
    if "usd" in steps or "gltf" in steps:
        import interchange
        import bpy
        bpy.context.scene.frame_set(bpy.context.scene.frame_start)
        if "usd" in steps:
            rel = spec["usd"]
            outputs[rel] = interchange.export_usd(in_job(spec, rel))
            emit("usd", output=rel, sha256=outputs[rel], message="USD written")
        if "gltf" in steps:
            rel = spec["gltf"]
            outputs[rel] = interchange.export_gltf(in_job(spec, rel), spec.get("studio_extras", {}),
                                                   spec.get("body_extras", {}))
            emit("gltf", output=rel, sha256=outputs[rel], message="glTF written")
    return outputs


def bpy_engine() -> str:
    import bpy
    return bpy.context.scene.render.engine


def bpy_scene_camera(objects: dict, name: str) -> None:
    import bpy
    if name not in objects or objects[name].type != "CAMERA":
        raise SpecError(f"spec camera: no camera named {name!r}")
    bpy.context.scene.camera = objects[name]


def make_human(spec: dict) -> dict[str, str]:
    """A skinned human (see human.py) as out/human.glb."""
    import human
    import scene_from_ir as sfi
    from outputs import part_path, publish
    ensure_writable(in_job(spec, "out"), "spec job folder")
    sfi.reset()
    height = float(spec.get("height", 1.75))
    if not 1.0 <= height <= 2.3:
        raise SpecError(f"spec height: {height} m; a person between 1.0 and 2.3 m is made")
    emit("build", message=f"making a {height:.2f} m human")
    rig, mesh = human.make_human(height)
    rel = "out/human.glb"
    tmp = part_path(in_job(spec, rel))
    human.export_glb(tmp)
    emit("build", message=f"{len(rig.data.bones)} bones, {len(mesh.data.vertices)} vertices")
    return {rel: publish(tmp, in_job(spec, rel))}


def verify(spec: dict) -> dict[str, str]:
    """Reopen a .blend and describe it at the given frames (out/inspect.json)."""
    import inspect_blend
    from outputs import sha256_file
    inspect_blend.open_blend(spec["blend_in"])
    data = inspect_blend.describe([int(f) for f in spec.get("frames", [])])
    rel = "out/inspect.json"
    write_json_atomic(in_job(spec, rel), data)
    return {rel: sha256_file(in_job(spec, rel))}


def do_job(spec_path: str) -> int:
    t0 = time.time()
    try:
        spec = load_spec(spec_path)
        outputs = run(spec)
        marker = spec.get("marker", "done.json")
        write_json_atomic(in_job(spec, marker), {"outputs": outputs, "seconds": time.time() - t0,
                                                 "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        emit("done", message=f"finished in {time.time() - t0:.2f} s", outputs=outputs,
             seconds=round(time.time() - t0, 4))
        return 0
    except SpecError as e:
        emit("error", message=str(e))
        return 2
    except DiskFull as e:
        emit("error", message=str(e), reason="disk_full", folder=e.folder)
        return 1
    except Exception as e:   # any failure inside Blender: report it, never hang
        emit("error", message=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=6))
        return 1


def serve() -> int:
    """Take spec paths on stdin, one per line, until EOF; bpy stays loaded between them."""
    emit("ready", message="warm worker up")
    for line in sys.stdin:
        line = line.strip()
        if line:
            do_job(line)
    return 0


def main(argv: list[str]) -> int:
    watch_studio()
    if argv and argv[0] == "--serve":
        return serve()
    if len(argv) != 1:
        emit("error", message="usage: worker.py SPEC.json | --serve")
        return 2
    return do_job(argv[0])


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    code = main(args)
    sys.stdout.flush()
    os._exit(code)   # skip Blender's slow teardown; everything is already on disk
