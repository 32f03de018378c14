"""The open project as the window sees it: the scene, the baked film, the
states, the storyboard's cards, the failures and the verdict, and the pose at
any frame, re-read when the project changes.

Qt-free. The project calls back after each commit in this process (possibly
from a worker thread), and `poll` notices commits by other processes (jobs,
the CLI) through SQLite's data_version. Neither reloads anything by itself:
both emit `committed`. Reading is one plain function, `read_snapshot`, which
touches only the project it is given and returns what changed since the
signatures it was given; `apply` takes a snapshot in and emits `changed`, plus
`scene_changed` / `film_changed` when those really changed, so the viewport
rebuilds only then. `refresh` reads and applies here and now (tests, the
CLI); the window reads on a worker with a connection of its own and applies
on the GUI thread (QtSession).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
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
from studio.timeline.plan import load_plan
from studio.timeline.shots import ShotProblem, camera_of, shot_at
from studio.timeline.shown import held_state, pose_at
from studio.store.reports import load_reports
from studio.timeline.storyboard import State, content_hash, list_states

from studio.ui.cards import Card, board_cards
from studio.ui.events import Event
from studio.ui.failures import Failure, by_frame, current_failures
from studio.ui.verdict import Verdict, read_verdict


@dataclass
class Board:
    """Everything the storyboard, the pins, the status bar and the checks read (the slow part)."""
    states: list[State]
    plan: dict | None
    cards: list[Card]
    failures: list[Failure]                 # found on the film and the states as they are now
    stale_failures: list[Failure]           # found on an older film or an older version of a state
    signals: Signals | None
    verdict: Verdict
    checked: dict[str, tuple[str | None, str | None]]   # report target: (hash its reports checked, hash now)


@dataclass
class Snapshot:
    """One read of the project: each part is None where it did not change since `sigs`."""
    sigs: tuple
    scene: Scene | None = None
    film: tuple | None = None               # (tracks or None, error, world matrices or None)
    board: Board | None = None
    rest_changed: bool = True               # reviews' keys, repairs, agent steps or the audit moved


def read_snapshot(project: Project, sigs: tuple = (None, None, None, None),
                  scene: Scene | None = None) -> Snapshot:
    """Read what changed since `sigs` (scene, film, board signatures). Touches nothing but
    `project`, so it may run on a worker with a connection of its own; `scene` is the
    scene the caller holds, used when the scene did not change."""
    with reading_scenes(), project.reading():
        db = project.db
        rows = db.execute("SELECT kind, name, body FROM scene_objects ORDER BY kind, position").fetchall()
        ssig = hashlib.sha256(repr(rows).encode()).hexdigest()
        out = Snapshot(sigs)
        if ssig != sigs[0] or scene is None:
            scene = out.scene = load_scene(project) if rows else Scene(name=project.name)
        fsig = db.execute('SELECT group_concat(segment || ":" || hash, ",") FROM tracks').fetchone()[0]
        if out.scene is not None or fsig != sigs[1]:
            try:
                film, error = load_film_tracks(project), ""
            except ValueError as e:
                film, error = None, str(e)
            world = tracks_world(scene, film) if film is not None and film.n_frames and scene.bodies else None
            out.film = (film, error, world)
        bsig = (ssig, fsig, board_signature(project))
        if bsig != sigs[2]:         # a job's progress alone does not recompute the board
            out.board = read_board(project, scene)
        rsig = rest_signature(project)
        out.rest_changed = len(sigs) < 4 or rsig != sigs[3]
        out.sigs = (ssig, fsig, bsig, rsig)
        return out


def rest_signature(project: Project) -> tuple:
    """Marks of what the panels read beside the board (repairs, agent steps, reviewers, the audit)."""
    q = project.db.execute
    return (q("SELECT max(id) FROM audit").fetchone(), q("SELECT count(*), max(rowid) FROM repairs").fetchone(),
            q("SELECT count(*), max(rowid) FROM agent_steps").fetchone(),
            q("SELECT count(*) FROM reviewers").fetchone())


def read_board(project: Project, scene: Scene) -> Board:
    states = list_states(project)
    found = current_failures(project, scene, states)
    now = [f for f in found if not f.stale]
    verdict = read_verdict(project)
    checked = {"film": (load_reports(project, "film")[1], verdict.film_hash)}
    for s in states:
        checked[f"state:{s.id}"] = (load_reports(project, f"state:{s.id}")[1],
                                    content_hash(scene, s.pose, s.frame) if scene.bodies else None)
    return Board(states, load_plan(project), board_cards(project, scene, states, now) if scene.bodies else [],
                 now, [f for f in found if f.stale], signals(project, scene) if scene.bodies else None,
                 verdict, checked)


def board_signature(project: Project) -> tuple:
    """Cheap marks of everything the cards, pins and progress read (not job progress)."""
    q = project.db.execute
    return (q("SELECT count(*), max(updated), group_concat(id || '@' || frame) FROM states").fetchone(),
            q("SELECT count(*), max(id) FROM reviews").fetchone(),
            q("SELECT count(*), max(id), max(at) FROM reports").fetchone(),
            q("SELECT max(updated), count(*) FROM docs").fetchone(),
            q("SELECT count(*) FROM jobs WHERE state = 'succeeded'").fetchone())


class Session:
    def __init__(self, project: Project, read: bool = True):
        self.project = project
        self.scene: Scene = Scene(name=project.name)
        self.film: Tracks | None = None
        self.film_error = ""
        self.states: list[State] = []
        self.plan: dict | None = None
        self.cards: list[Card] = []
        self.progress: tuple[float, list[str]] = (0.0, [])
        self.signals: Signals | None = None       # completion, progress and coverage, side by side
        self.verdict = Verdict(False, ["not read yet"])
        self.checked: dict[str, tuple[str | None, str | None]] = {}
        self.failures: list[Failure] = []
        self.failures_at: dict[int, list[Failure]] = {}
        self.stale_failures: list[Failure] = []
        self.stale_failures_at: dict[int, list[Failure]] = {}
        self._film_world: dict[str, np.ndarray] | None = None
        self._state_world: dict[str, tuple[str, dict[str, np.ndarray]]] = {}
        self.sigs: tuple = (None, None, None, None)
        self.generation = 0             # counts synchronous refreshes: a snapshot read before one is dropped
        self._data_version = self._read_data_version()
        self.committed = Event()        # a write happened somewhere; call refresh() on your thread
        self.changed = Event()          # after refresh: anything may have changed
        self.jobs_changed = Event()     # after every refresh: a job may have moved (its progress, its end)
        self.scene_changed = Event()    # the scene's bodies, joints or cameras changed
        self.film_changed = Event()     # the baked tracks changed
        project.subscribe(self.committed.emit)
        if read:
            self.refresh()

    @classmethod
    def open(cls, path: str | Path, read: bool = True) -> "Session":
        return cls(Project.open(path), read)

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
        """Read what changed and show it, here and now (QtSession reads on a worker instead)."""
        self.generation += 1
        self.apply(read_snapshot(self.project, self.sigs, self.scene if self.sigs[0] else None))

    def apply(self, snap: Snapshot) -> None:
        """Take in a snapshot read against the current `sigs` (on the thread that owns the
        views), then tell them what changed."""
        self.sigs = snap.sigs
        if snap.scene is not None:
            self.scene = snap.scene
            self._state_world.clear()
        if snap.film is not None:
            self.film, self.film_error, self._film_world = snap.film
        b = snap.board
        if b is not None:
            self.states, self.plan, self.cards = b.states, b.plan, b.cards
            self.failures, self.failures_at = b.failures, by_frame(b.failures)
            self.stale_failures, self.stale_failures_at = b.stale_failures, by_frame(b.stale_failures)
            self.signals, self.verdict, self.checked = b.signals, b.verdict, b.checked
            self.progress = (b.signals.progress, b.signals.missing) if b.signals else (0.0, [])
        if snap.scene is not None:
            self.scene_changed.emit()
        if snap.film is not None:
            self.film_changed.emit()
        if snap.scene is not None or snap.film is not None or b is not None or snap.rest_changed:
            self.changed.emit()         # a job's progress alone redraws the job views only
        self.jobs_changed.emit()

    # ---- time ------------------------------------------------------------
    def frame_range(self) -> tuple[int, int]:
        """The frames the timeline spans: keys, the baked film and the plan's shots, and at
        least ten seconds from the project's first frame, so an empty project can be keyed."""
        first = self.project.frame_start
        frames = [s.frame for s in self.states]
        if self.film is not None and self.film.n_frames:
            frames += [self.film.frame_start, self.film.frame_end]
        plan = self.plan or {}
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
    def shot_at(self, frame: int) -> str:
        """The shot holding `frame` (studio.timeline.shots: the plan's span, else the held state's)."""
        return shot_at(self.plan, self.states, frame)

    def camera_at(self, frame: int):
        """The camera of the shot holding at `frame`, placed there if it follows a body; the
        renders cut to the same camera at the same frames."""
        cams = {c.name: c for c in self.scene.cameras}
        if not cams:
            return None
        try:
            name = camera_of(self.scene, self.plan, self.shot_at(frame))
        except ShotProblem:             # the plan names a camera the scene lost: its first camera
            name = self.scene.cameras[0].name
        cam = cams[name]
        return placed(cam, self.world_at(frame)) if cam.follow else cam
