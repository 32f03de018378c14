"""The review report that goes with every export: each shot's status (waiting
for approval, retake, done, and why) and every review note, each drawn note as
a PNG of its frame with its strokes over it.

The frame comes from the film just rendered (the exported video, decoded with
PyAV) when the note's frame is in it, else a plain card the camera's size
says, so a note is never dropped for want of a picture. Strokes are in the
image of the camera they were drawn through, (u, v) from the top-left, 0..1,
so they land where they were drawn at any resolution. Written beside the
outputs as review-report.json and .md, and notes/<note>.png.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from studio.scene.io import load_scene
from studio.store.project import Project, now, write_atomic
from studio.timeline.notes import Note, load_notes, shot_statuses
from studio.timeline.plan import load_plan

CARD_SIZE = (640, 360)
CAPTION_H = 0.12          # of the image's height: the band under the frame with the note's words


def video_frames(video: Path | None, first_frame: int, frames: set[int]) -> dict[int, "object"]:
    """The wanted frames of a rendered video as RGB images (PIL), by frame number."""
    out: dict[int, object] = {}
    if video is None or not Path(video).exists() or not frames:
        return out
    import av
    want = {f - first_frame: f for f in frames if f >= first_frame}
    last = max(want, default=-1)
    with av.open(str(video)) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i in want:
                out[want[i]] = frame.to_image().convert("RGB")
            if i >= last:
                break
    return out


def wrapped(draw, text: str, width: float) -> list[str]:
    """The note's words in lines that fit `width` pixels (the whole note, never cut)."""
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        line = ""
        for word in para.split():
            trial = f"{line} {word}".strip()
            if line and draw.textlength(trial) > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return lines


def note_picture(note: Note, frame_image, size: tuple[int, int]) -> bytes:
    """A PNG of the frame (or a plain card of `size`) with the note's strokes and words under it."""
    from PIL import Image, ImageDraw
    img = frame_image.copy() if frame_image is not None else Image.new("RGB", size, (38, 40, 44))
    w, h = img.size
    draw = ImageDraw.Draw(img)
    if frame_image is None:
        draw.text((12, 12), f"frame {note.frame} (not in the rendered film)", fill=(160, 164, 170))
    for s in note.strokes:
        pts = [(u * w, v * h) for u, v in s.points]
        width = max(1, round(s.width * h / 360))
        if len(pts) == 1:
            pts = pts * 2
        draw.line(pts, fill=s.color, width=width, joint="curve")
    lines = wrapped(draw, f"frame {note.frame} · {note.by}: {note.text or '(a drawing)'}", w - 20)
    band = max(24, int(h * CAPTION_H), 12 + 14 * len(lines))
    out = Image.new("RGB", (w, h + band), (20, 21, 24))
    out.paste(img, (0, 0))
    ImageDraw.Draw(out).multiline_text((10, h + 6), "\n".join(lines), fill=(240, 240, 240), spacing=3)
    buf = io.BytesIO()
    out.save(buf, "PNG")
    return buf.getvalue()


def review_data(project: Project) -> dict:
    """Shots with their status and notes with their frame and shot, as the report lists them."""
    plan = load_plan(project)
    spans = {s["id"]: s for s in (plan or {}).get("shots", [])}
    shots = [{"shot": st.shot, "frames": [spans[st.shot]["start"], spans[st.shot]["end"]],
              "camera": spans[st.shot].get("camera", ""), "status": st.status, "status_words": st.words,
              "note": st.note, "by": st.by, "at": st.at} for st in shot_statuses(project, plan)]

    def shot_of(frame: int) -> str:
        return next((s["shot"] for s in shots if s["frames"][0] <= frame <= s["frames"][1]), "")
    notes = [{**n.to_dict(), "shot": shot_of(n.frame)} for n in load_notes(project)]
    return {"at": now(), "shots": shots, "notes": notes}


def write_review_report(project: Project, folder: Path, video: Path | None = None,
                        first_frame: int | None = None) -> tuple[Path, Path]:
    """review-report.json and .md beside the outputs, and a PNG per drawn note; returns the two paths."""
    folder = Path(folder)
    data = review_data(project)
    notes = load_notes(project)
    cams = {c.name: c for c in load_scene(project).cameras}
    drawn = [n for n in notes if n.strokes]
    images = video_frames(video, first_frame if first_frame is not None else project.frame_start,
                          {n.frame for n in drawn})
    by_id = {d["id"]: d for d in data["notes"]}
    for n in drawn:
        cam = cams.get(n.camera)
        size = tuple(cam.resolution) if cam is not None else CARD_SIZE
        png = folder / "notes" / f"{n.id}.png"
        png.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(png, note_picture(n, images.get(n.frame), size))
        by_id[n.id]["png"] = str(png.relative_to(folder))
        by_id[n.id]["on_rendered_frame"] = n.frame in images
    jpath, mpath = folder / "review-report.json", folder / "review-report.md"
    write_atomic(jpath, json.dumps(data, indent=1, sort_keys=True).encode())
    lines = ["# Review report", "", f"Written {data['at']}.", "", "## Shots", ""]
    if not data["shots"]:
        lines.append("- (the plan has no shots)")
    for s in data["shots"]:
        why = f": {s['note']}" if s["note"] else ""
        who = f" ({s['by']}, {s['at']})" if s["by"] else ""
        lines.append(f"- **{s['shot']}** {s['frames'][0]}–{s['frames'][1]} through {s['camera']}: "
                     f"{s['status_words']}{why}{who}")
    lines += ["", "## Notes", ""]
    if not data["notes"]:
        lines.append("- (no notes)")
    for d in data["notes"]:
        pic = f" — ![{d['id']}]({d['png']})" if d.get("png") else ""
        lines.append(f"- frame **{d['frame']}**" + (f" ({d['shot']})" if d["shot"] else "")
                     + f", {d['by']}: {d['text'] or '(a drawing)'}{pic}")
    write_atomic(mpath, ("\n".join(lines) + "\n").encode())
    return jpath, mpath
