"""The open project as the window sees it: the scene, the baked film, the
states and the pose at any frame, re-read when the project changes.

Qt-free. The project calls back after each commit in this process (possibly
from a worker thread), and `poll` notices commits by other processes (jobs,
the CLI) through SQLite's data_version. Neither reloads anything by itself:
both emit `committed`, and the owner (QtSession on the GUI thread, or a test)
calls `refresh`, which re-reads and emits `changed`, plus `scene_changed` /
`film_changed` when those really changed, so the viewport rebuilds only then.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from studio.checks.signals import Signals, signals
from studio.scene.cameras import placed
from studio.scene.io import load_scene
from studio.scene.ir import Scene
from studio.scene.kinematics import pose_world, tracks_world
from studio.scene.reading import reading_scenes
from studio.scene.pose import Pose, Tracks
from studio.store.project import Project
from studio.timeline.film import load_film_tracks
from studio.timeline.plan import load_plan, shot_camera
from studio.timeline.shown import held_state, pose_at
from studio.timeline.storyboard import State, list_states

from studio.ui.cards import Card, board_cards
from studio.ui.events import Event
from studio.ui.failures import Failure, by_frame, current_failures


class Session:
    def __init__(self, project: Project):
        self.project = project
        self.scene: Scene = Scene(name=project.name)
        self.film: Tracks | None = None
        self.film_error = ""
        self.states: list[State] = []
        self.cards: list[Card] = []
        self.progress: tuple[float, list[str]] = (0.0, [])
        self.signals: Signals | None = None       # completion, progress and coverage, side by side
        self.failures: list[Failure] = []
        self.failures_at: dict[int, list[Failure]] = {}
        self._film_world: dict[str, np.ndarray] | None = None
        self._state_world: dict[str, tuple[str, dict[str, np.ndarray]]] = {}
        self._scene_sig = self._film_sig = self._board_sig = None
        self._data_version = self._read_data_version()
        self.committed = Event()        # a write happened somewhere; call refresh() on your thread
        self.changed = Event()          # after refresh: anything may have changed
        self.scene_changed = Event()    # the scene's bodies, joints or cameras changed
        self.film_changed = Event()     # the baked tracks changed
        project.subscribe(self.committed.emit)
        self.refresh()

    @classmethod
    def open(cls, path: str | Path) -> "Session":
        return cls(Project.open(path))

    def close(self) -> None:
        self.project.close()

    # ---- noticing changes ----------------------------------------------
    def _read_data_version(self) -> int:
        return int(self.project.db.execute("PRAGMA data_version").fetchone()[0])

    def poll(self) -> bool:
        """True (and `committed` emitted) if another connection committed since the last poll."""
        v = self._read_data_version()
        if v == self._data_version:
            return False
        self._data_version = v
        self.committed.emit()
        return True

    def refresh(self) -> None:
        with reading_scenes():
            self._refresh()

    def _refresh(self) -> None:
        db = self.project.db
        rows = db.execute("SELECT kind, name, body FROM scene_objects ORDER BY kind, position").fetchall()
        sig = hashlib.sha256(repr(rows).encode()).hexdigest()
        scene_moved = sig != self._scene_sig
        if scene_moved:
            self._scene_sig = sig
            self.scene = load_scene(self.project) if rows else Scene(name=self.project.name)
        fsig = db.execute('SELECT group_concat(segment || ":" || hash, ",") FROM tracks').fetchone()[0]
        film_moved = scene_moved or fsig != self._film_sig
        if film_moved:
            self._film_sig = fsig
            self._film_world = None
            try:
                self.film, self.film_error = load_film_tracks(self.project), ""
            except ValueError as e:
                self.film, self.film_error = None, str(e)
        bsig = (self._scene_sig, fsig, self._board_signature())
        if bsig != self._board_sig:    # a job's progress alone does not recompute the board
            self._board_sig = bsig
            self.states = list_states(self.project)
            self.cards = board_cards(self.project, self.scene, self.states) if self.scene.bodies else []
            self.failures = current_failures(self.project, self.scene, self.states)
            self.failures_at = by_frame(self.failures)
            self.signals = signals(self.project, self.scene) if self.scene.bodies else None
            self.progress = (self.signals.progress, self.signals.missing) if self.signals else (0.0, [])
        if scene_moved:
            self._state_world.clear()
            self.scene_changed.emit()
        if film_moved:
            self.film_changed.emit()
        self.changed.emit()

    def _board_signature(self) -> tuple:
        """Cheap marks of everything the cards, pins and progress read (not job progress)."""
        q = self.project.db.execute
        return (q("SELECT count(*), max(updated), group_concat(id || '@' || frame) FROM states").fetchone(),
                q("SELECT count(*), max(id) FROM reviews").fetchone(),
                q("SELECT count(*), max(id), max(at) FROM reports").fetchone(),
                q("SELECT max(updated), count(*) FROM docs").fetchone(),
                q("SELECT count(*) FROM jobs WHERE state = 'succeeded'").fetchone())

    # ---- time ------------------------------------------------------------
    def frame_range(self) -> tuple[int, int]:
        """The frames the timeline spans: keys, the baked film and the plan's shots, and at
        least ten seconds from the project's first frame, so an empty project can be keyed."""
        first = self.project.frame_start
        frames = [s.frame for s in self.states]
        if self.film is not None and self.film.n_frames:
            frames += [self.film.frame_start, self.film.frame_end]
        plan = load_plan(self.project) or {}
        frames += [int(s[k]) for s in plan.get("shots", []) for k in ("start", "end")
                   if isinstance(s.get(k), int)]
        frames.append(first + 10 * max(1, int(self.project.fps)) - 1)
        return min(frames + [first]), max(frames)

    def state_at(self, frame: int) -> State | None:
        """The state that holds at `frame` when nothing is baked there: the last one at or before it."""
        return held_state(self.states, frame)

    def pose_at(self, frame: int) -> Pose:
        return pose_at(self.scene, self.film, self.states, frame)

    def world_at(self, frame: int) -> dict[str, np.ndarray]:
        """World matrices (4,4) of every body at `frame`, cached per film and per state."""
        film = self.film
        if film is not None and film.frame_start <= frame <= film.frame_end:
            if self._film_world is None:
                self._film_world = tracks_world(self.scene, film)
            i = frame - film.frame_start
            return {k: v[i] for k, v in self._film_world.items()}
        return self.key_world_at(frame)

    def key_world_at(self, frame: int) -> dict[str, np.ndarray]:
        """World matrices of the key state that holds at `frame` (its own pose, not the film's:
        an edited or repaired key shows as it is now), or of the rest pose without states."""
        s = self.state_at(frame)
        key, pose = (s.id, s.pose.hash()) if s else ("", "rest")
        cached = self._state_world.get(key)
        if cached is None or cached[0] != pose:
            p = s.pose.completed(self.scene) if s else Pose.rest(self.scene)
            cached = (pose, pose_world(self.scene, p))
            self._state_world[key] = cached
        return cached[1]

    def film_world(self) -> dict[str, np.ndarray] | None:
        """(F,4,4) per body over the baked film, for scrubbing without per-frame kinematics."""
        if self.film is None:
            return None
        if self._film_world is None:
            self._film_world = tracks_world(self.scene, self.film)
        return self._film_world

    # ---- shots -----------------------------------------------------------
    def camera_at(self, frame: int):
        """The camera of the shot holding at `frame`: a camera named like the shot,
        or the camera the plan gives that shot, or the scene's first camera."""
        cams = {c.name: c for c in self.scene.cameras}
        if not cams:
            return None
        s = self.state_at(frame)
        plan = load_plan(self.project)
        shot = (s.shot if s else "") or next((p["id"] for p in (plan or {}).get("shots", [])    # keyed before the
                                              if p.get("start", 0) <= frame <= p.get("end", -1)), "")  # plan: its shot
        planned = shot_camera(plan, shot) if shot and shot not in cams else None
        cam = cams.get(shot) or cams.get(planned) or self.scene.cameras[0]
        return placed(cam, self.world_at(frame)) if cam.follow else cam
