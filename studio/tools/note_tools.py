"""Review tools: a note on any frame with strokes drawn over it, deleting a
note, and a shot's status (waiting for approval, retake, done). Like every
edit they are one command on the stack and one audit row, so a review made in
the window replays from the project's calls."""
from __future__ import annotations

from studio.timeline.notes import (SHOT_STATUSES, Note, Stroke, drop_note, free_note_id, load_notes, put_note,
                                   put_shot_status)
from studio.timeline.plan import load_plan

from studio.tools.context import ToolContext, ToolOutcome
from studio.tools.errors import ToolRefused


def add_note(box: ToolContext, a: dict) -> ToolOutcome:
    notes = load_notes(box.project)
    if not a["text"].strip() and not a.get("strokes"):
        raise ToolRefused("add_note.text: a note says something or draws something; both are empty")
    note_id = a.get("note") or free_note_id(notes, a["frame"])
    if a.get("camera"):
        from studio.scene.io import load_scene
        if a["camera"] not in {c.name for c in load_scene(box.project).cameras}:
            raise ToolRefused(f"add_note.camera: no camera named {a['camera']!r}")
    strokes = [Stroke([list(p) for p in s["points"]], s.get("color", "#ff3b30"), float(s.get("width", 3.0)))
               for s in a.get("strokes", [])]
    note = Note(note_id, a["frame"], a["text"], strokes, a.get("camera", ""))
    return box.run("add_note", a, put_note(box.project, note, box.actor),
                   {"note": note_id, "frame": a["frame"], "strokes": len(strokes)})


def delete_note(box: ToolContext, a: dict) -> ToolOutcome:
    if not any(n.id == a["note"] for n in load_notes(box.project)):
        raise ToolRefused(f"delete_note.note: there is no note {a['note']!r}")
    return box.run("delete_note", a, drop_note(box.project, a["note"], box.actor), {"note": a["note"]})


def set_shot_status(box: ToolContext, a: dict) -> ToolOutcome:
    shots = [s["id"] for s in (load_plan(box.project) or {}).get("shots", [])]
    if a["shot"] not in shots:
        raise ToolRefused(f"set_shot_status.shot: no shot {a['shot']!r} in the plan "
                          f"(shots: {', '.join(shots) or 'none; store a plan first'})")
    if a["status"] == "retake" and not a.get("note", "").strip():
        raise ToolRefused("set_shot_status.note: a retake needs a note saying what to change")
    cmd = put_shot_status(box.project, a["shot"], a["status"], a.get("note", ""), box.actor)
    return box.run("set_shot_status", a, cmd, {"shot": a["shot"], "status": SHOT_STATUSES[a["status"]]})


TOOLS = {"add_note": add_note, "delete_note": delete_note, "set_shot_status": set_shot_status}
