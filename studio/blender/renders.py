"""Rendering: storyboard stills, film frames, the H.264 video and the .blend.

Frames are rendered as PNGs into the job's `frames/` folder under a `.part`
name and renamed when Blender has written them (the render_write handler),
so the studio can count finished frames and a resumed job renders only the
missing ones. The video is then encoded from those frames by Blender's own
FFmpeg through the sequencer, in a separate scene.
"""
from __future__ import annotations

import contextlib
import os

import bpy

from keyframes import apply_pose
from outputs import LOW_SPACE, DiskFull, SpecError, emit, fail_now, free_bytes, inside_folder, part_path, publish
from scene_from_ir import place_camera


def render_still(path: str) -> str:
    """Render the current frame through the scene camera to `path`; return its sha256."""
    tmp = part_path(path)
    scene = bpy.context.scene
    scene.render.image_settings.media_type = "IMAGE"
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = tmp
    scene.render.use_file_extension = False
    bpy.ops.render.render(write_still=True)
    return publish(tmp, path)


def render_stills(objects: dict, ir: dict, states: list[dict], cameras: list[str], out_dir: str,
                  job_dir: str) -> dict[str, str]:
    """Each state through the cameras it names (`through`: its shot's camera), else through
    each of `cameras`, as `<state>_<camera>.png`; return {relpath: sha256}."""
    scene = bpy.context.scene
    done: dict[str, str] = {}
    total = sum(len(s.get("through") or cameras) for s in states)
    for s in states:
        scene.frame_current = int(s["frame"])
        apply_pose(objects, ir, s["pose"])
        for cam, at in s.get("cameras", {}).items():      # following cameras, placed for this pose
            place_camera(objects[cam], at["position"], at["target"])
        for cam in s.get("through") or cameras:
            if cam not in objects or objects[cam].type != "CAMERA":
                raise SpecError(f"spec states[{s['id']!r}].through: no camera named {cam!r}")
            scene.camera = objects[cam]
            w, h = objects[cam]["resolution"]
            if s.get("resolution"):
                w, h = s["resolution"]
            scene.render.resolution_x, scene.render.resolution_y = int(w), int(h)
            path = inside_folder(out_dir, f"{s['id']}_{cam}.png", f"states[{s['id']!r}].id")
            rel = os.path.relpath(path, job_dir)
            done[rel] = render_still(path)
            emit("still", frame=int(s["frame"]), of=total, state=s["id"], camera=cam,
                 output=rel, sha256=done[rel], message=f"still {s['id']} through {cam}")
    return done


def frame_name(frames_dir: str, frame: int) -> str:
    return os.path.join(frames_dir, f"{frame:06d}.png")


def contiguous(frames: list[int]) -> list[tuple[int, int]]:
    """[1001,1002,1003,1007] -> [(1001,1003),(1007,1007)]"""
    runs: list[tuple[int, int]] = []
    for f in sorted(set(frames)):
        if runs and f == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], f)
        else:
            runs.append((f, f))
    return runs


def render_frames(frames: list[int], frames_dir: str, job_dir: str, total: int) -> dict[str, str]:
    """Render the given frames of the animation to PNGs; return {relpath: sha256}."""
    scene = bpy.context.scene
    os.makedirs(frames_dir, exist_ok=True)
    scene.render.image_settings.media_type = "IMAGE"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.use_file_extension = True
    scene.render.filepath = os.path.join(frames_dir, ".part-######")
    done: dict[str, str] = {}

    def on_write(sc, *_):
        f = sc.frame_current
        final = frame_name(frames_dir, f)
        rel = os.path.relpath(final, job_dir)
        try:
            done[rel] = publish(sc.render.frame_path(frame=f), final)
        except DiskFull as e:
            fail_now(str(e), reason="disk_full", folder=e.folder)
        except Exception as e:   # raised here, Blender would print it and render on
            fail_now(f"frame {f}: {type(e).__name__}: {e}")
        emit("frame", frame=f, of=total, output=rel, sha256=done[rel])

    bpy.app.handlers.render_write.append(on_write)
    keep = scene.frame_start, scene.frame_end
    try:
        for a, b in contiguous(frames):
            scene.frame_start, scene.frame_end = a, b
            bpy.ops.render.render(animation=True)
    finally:
        bpy.app.handlers.render_write.remove(on_write)
        scene.frame_start, scene.frame_end = keep
    return done


def encode_video(frames_dir: str, frame_start: int, frame_end: int, fps: int, resolution,
                 path: str, quality: str = "MEDIUM") -> str:
    """H.264 MP4 of the frames through Blender's FFmpeg; return its sha256."""
    missing = [f for f in range(frame_start, frame_end + 1) if not os.path.exists(frame_name(frames_dir, f))]
    if missing:
        raise RuntimeError(f"cannot encode {path}: {len(missing)} frames are missing, first {missing[0]}")
    enc = bpy.data.scenes.new("Encode")
    enc.render.engine = "BLENDER_WORKBENCH"   # the sequencer does the work; skip EEVEE's start-up
    enc.render.fps, enc.render.fps_base = int(fps), 1.0
    enc.render.resolution_x, enc.render.resolution_y = int(resolution[0]), int(resolution[1])
    enc.render.resolution_percentage = 100
    enc.frame_start, enc.frame_end = frame_start, frame_end
    enc.view_settings.view_transform = "Standard"
    ed = enc.sequence_editor_create()
    strip = ed.strips.new_image("frames", frame_name(frames_dir, frame_start), channel=1,
                                frame_start=frame_start)
    for f in range(frame_start + 1, frame_end + 1):
        strip.elements.append(os.path.basename(frame_name(frames_dir, f)))
    r = enc.render
    r.use_sequencer = True
    r.image_settings.media_type = "VIDEO"
    r.image_settings.file_format = "FFMPEG"
    r.ffmpeg.format = "MPEG4"
    r.ffmpeg.codec = "H264"
    r.ffmpeg.constant_rate_factor = quality
    r.ffmpeg.ffmpeg_preset = "REALTIME" if quality != "HIGH" else "GOOD"
    r.ffmpeg.gopsize = int(fps)
    r.ffmpeg.audio_codec = "NONE"
    tmp = part_path(path)
    r.filepath = tmp
    r.use_file_extension = False
    try:
        with disk_full_as_such(path):
            bpy.ops.render.render(animation=True, scene=enc.name)
    finally:
        bpy.data.scenes.remove(enc)
    return publish(tmp, path)


@contextlib.contextmanager
def disk_full_as_such(path: str):
    """A Blender operator failing on a nearly full disk raises DiskFull, naming the folder."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        yield
    except DiskFull:
        raise
    except Exception:
        if free_bytes(folder) < LOW_SPACE:
            raise DiskFull(f"disk full while writing into {folder} ({free_bytes(folder) >> 20} MB free)",
                           folder) from None
        raise


def save_blend(path: str) -> str:
    """Save the whole file (animation in place) to `path` atomically; return its sha256."""
    tmp = part_path(path)
    bpy.context.scene.frame_current = bpy.context.scene.frame_start
    with disk_full_as_such(path):
        bpy.ops.wm.save_as_mainfile(filepath=tmp, check_existing=False, copy=True, compress=False)
    return publish(tmp, path)
