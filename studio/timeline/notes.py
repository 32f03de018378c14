"""Review notes and shot statuses, as a review tool keeps them.

A note belongs to one frame of the film (any frame, not only a key state's):
its text, who wrote it and when, and the strokes drawn over that frame. A
stroke's points are in the image of the camera it was drawn through, (u, v)
from the top-left corner, 0..1 each way, so the same strokes land on the
same place of a render of that frame at any size. A shot's status is one of
waiting (for approval; a shot nobody has marked), retake or done, with the
note that says why. Both are project documents ("notes", "shots"); the edits
are commands that undo to exactly what was there.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from studio.store.project import Project, now

from studio.timeline.commands import Command

NOTES_DOC, SHOTS_DOC = "notes", "shots"
SHOT_STATUSES = {"waiting": "waiting for approval", "retake": "retake", "done": "done"}
DEFAULT_STATUS = "waiting"


@dataclass
class Stroke:
    points: list[list[float]]          # [[u, v], ...], 0..1 of the image, v downwards
    color: str = "#ff3b30"
    width: float = 3.0                 # pixels on an image 360 high; scaled with the image

    def to_dict(self) -> dict:
        return {"points": self.points, "color": self.color, "width": self.width}


@dataclass
class Note:
    id: str
    frame: int
    text: str
    strokes: list[Stroke] = field(default_factory=list)
    camera: str = ""                    # the camera the strokes were drawn through
    by: str = ""
    at: str = ""

    def to_dict(self) -> dict:
        return {"id": self.id, "frame": self.frame, "text": self.text, "camera": self.camera,
                "strokes": [s.to_dict() for s in self.strokes], "by": self.by, "at": self.at}

    @classmethod
    def from_dict(cls, d: dict) -> "Note":
        return cls(d["id"], int(d["frame"]), d.get("text", ""),
                   [Stroke([list(map(float, p)) for p in s["points"]], s.get("color", "#ff3b30"),
                           float(s.get("width", 3.0))) for s in d.get("strokes", [])],
                   d.get("camera", ""), d.get("by", ""), d.get("at", ""))


@dataclass
class ShotStatus:
    shot: str
    status: str = DEFAULT_STATUS
    note: str = ""
    by: str = ""
    at: str = ""

    @property
    def words(self) -> str:
        return SHOT_STATUSES[self.status]


def load_notes(project: Project) -> list[Note]:
    """Every note, in frame order."""
    doc = project.get_doc(NOTES_DOC) or {}
    return sorted((Note.from_dict(d) for d in doc.values()), key=lambda n: (n.frame, n.id))


def notes_at(notes: list[Note], frame: int) -> list[Note]:
    return [n for n in notes if n.frame == frame]


def free_note_id(notes: list[Note], frame: int) -> str:
    """`note_<frame>`, with a suffix if that frame has notes already."""
    taken = {n.id for n in notes}
    name, k = f"note_{frame}", 2
    while name in taken:
        name, k = f"note_{frame}_{k}", k + 1
    return name


def shot_statuses(project: Project, plan: dict | None) -> list[ShotStatus]:
    """Every shot of the plan with its status (waiting for approval where nobody marked it)."""
    doc = project.get_doc(SHOTS_DOC) or {}
    out = []
    for s in (plan or {}).get("shots", []):
        d = doc.get(s["id"], {})
        out.append(ShotStatus(s["id"], d.get("status", DEFAULT_STATUS), d.get("note", ""), d.get("by", ""),
                              d.get("at", "")))
    return out


class PutEntry(Command):
    """Put (or with None, remove) one entry of a document; undo puts back what was there."""

    def __init__(self, project: Project, doc: str, key: str, value: dict | None, label: str, actor: str):
        self.project, self.doc, self.key, self.value, self.label, self.actor = project, doc, key, value, label, actor
        self.before: dict | None = None

    def _put(self, value: dict | None, action: str) -> None:
        doc = copy.deepcopy(self.project.get_doc(self.doc) or {})
        if value is None:
            doc.pop(self.key, None)
        else:
            doc[self.key] = value
        self.project.put_doc(self.doc, doc, actor=self.actor, action=action)

    def do(self) -> None:
        self.before = copy.deepcopy((self.project.get_doc(self.doc) or {}).get(self.key))
        self._put(self.value, self.label)

    def undo(self) -> None:
        self._put(self.before, f"undo {self.label}")


def put_note(project: Project, note: Note, actor: str) -> PutEntry:
    note.by, note.at = note.by or actor, note.at or now()
    return PutEntry(project, NOTES_DOC, note.id, note.to_dict(), f"note {note.id} on frame {note.frame}", actor)


def drop_note(project: Project, note_id: str, actor: str) -> PutEntry:
    return PutEntry(project, NOTES_DOC, note_id, None, f"delete note {note_id}", actor)


def put_shot_status(project: Project, shot: str, status: str, note: str, actor: str) -> PutEntry:
    value = {"status": status, "note": note, "by": actor, "at": now()}
    return PutEntry(project, SHOTS_DOC, shot, value, f"shot {shot}: {SHOT_STATUSES[status]}", actor)
