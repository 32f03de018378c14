"""Where the person is looking in time: the current frame, the frame range,
playing or paused, and the bodies selected. Qt-free, so it is tested headless;
`qt_scrubber` and `qt_viewport` listen to its events. The window makes one per
open project and closes it with the project, which disconnects every view."""
from __future__ import annotations

from .events import Event


class Playhead:
    def __init__(self, first: int = 1001, last: int = 1001, fps: int = 24):
        self.first, self.last, self.fps = int(first), max(int(first), int(last)), int(fps)
        self.frame = self.first
        self.playing = False
        self.selected: tuple[str, ...] = ()
        self.frame_changed = Event()       # (frame)
        self.range_changed = Event()       # (first, last)
        self.playing_changed = Event()     # (playing)
        self.selection_changed = Event()   # (bodies)

    def close(self) -> None:
        """Disconnect every view: a playhead belongs to one open project, and the views of a
        closed project must never be called again (their session's database is closed)."""
        self.set_playing(False)
        for ev in (self.frame_changed, self.range_changed, self.playing_changed, self.selection_changed):
            ev.clear()

    def set_range(self, first: int, last: int) -> None:
        first, last = int(first), max(int(first), int(last))
        if (first, last) != (self.first, self.last):
            self.first, self.last = first, last
            self.range_changed.emit(first, last)
        self.set_frame(self.frame)

    def set_frame(self, frame: int) -> None:
        frame = min(max(int(frame), self.first), self.last)
        if frame != self.frame:
            self.frame = frame
            self.frame_changed.emit(frame)

    def step(self, n: int = 1) -> None:
        """Advance by n frames, wrapping at the end while playing."""
        nxt = self.frame + n
        if nxt > self.last:
            nxt = self.first if self.playing else self.last
        self.set_frame(nxt)

    def set_playing(self, playing: bool) -> None:
        if bool(playing) != self.playing:
            self.playing = bool(playing)
            self.playing_changed.emit(self.playing)

    def select(self, bodies) -> None:
        bodies = tuple(bodies)
        if bodies != self.selected:
            self.selected = bodies
            self.selection_changed.emit(bodies)
