"""Where the person is looking in time: the current frame, the frame range,
the in/out range that playback loops over, playing or paused and at what
shuttle rate, the bodies selected and which failures the pins show.
Qt-free, so it is tested headless; `qt_scrubber` and `qt_viewport` listen to
its events. The window makes one per open project and closes it with the
project, which disconnects every view."""
from __future__ import annotations

from studio.ui.events import Event
from studio.ui.failures import PinFilter

SHUTTLE_RATES = (1, 2, 4, 8)


def neighbour(frames, frame: int, direction: int) -> int | None:
    """The nearest of `frames` strictly after (direction > 0) or before `frame`, if any."""
    if direction > 0:
        later = [f for f in frames if f > frame]
        return min(later) if later else None
    earlier = [f for f in frames if f < frame]
    return max(earlier) if earlier else None


class Playhead:
    def __init__(self, first: int = 1001, last: int = 1001, fps: int = 24):
        self.first, self.last, self.fps = int(first), max(int(first), int(last)), int(fps)
        self.frame = self.first
        self.playing = False
        self.rate = 1                      # frames of film per frame of time; negative plays backwards
        self.in_out: tuple[int, int] | None = None
        self.selected: tuple[str, ...] = ()
        self.pin_filter = PinFilter()
        self.frame_changed = Event()       # (frame)
        self.range_changed = Event()       # (first, last)
        self.playing_changed = Event()     # (playing)
        self.selection_changed = Event()   # (bodies)
        self.in_out_changed = Event()      # (in_out or None)
        self.filter_changed = Event()      # (PinFilter)

    def close(self) -> None:
        """Disconnect every view: a playhead belongs to one open project, and the views of a
        closed project must never be called again (their session's database is closed)."""
        self.set_playing(False)
        for ev in (self.frame_changed, self.range_changed, self.playing_changed, self.selection_changed,
                   self.in_out_changed, self.filter_changed):
            ev.clear()

    def set_range(self, first: int, last: int) -> None:
        first, last = int(first), max(int(first), int(last))
        if (first, last) != (self.first, self.last):
            self.first, self.last = first, last
            self.range_changed.emit(first, last)
            if self.in_out and not (first <= self.in_out[0] and self.in_out[1] <= last):
                self.clear_in_out()
        self.set_frame(self.frame)

    def set_frame(self, frame: int) -> None:
        frame = min(max(int(frame), self.first), self.last)
        if frame != self.frame:
            self.frame = frame
            self.frame_changed.emit(frame)

    # ---- the in/out range ------------------------------------------------
    def play_range(self) -> tuple[int, int]:
        """The frames playback loops over: the in/out range if set, else the whole timeline."""
        return self.in_out or (self.first, self.last)

    def set_in_out(self, first: int, last: int) -> None:
        """Mark the frames to play and render; a range outside the timeline is refused, naming it."""
        first, last = int(first), int(last)
        if first > last:
            raise ValueError(f"in {first} is after out {last}: the in frame must come first")
        if first < self.first or last > self.last:
            raise ValueError(f"in/out {first}..{last} is outside the timeline; "
                             f"expected frames within {self.first}..{self.last}")
        if (first, last) != self.in_out:
            self.in_out = (first, last)
            self.in_out_changed.emit(self.in_out)

    def mark_in(self) -> None:
        self.set_in_out(self.frame, max(self.frame, self.play_range()[1]))

    def mark_out(self) -> None:
        self.set_in_out(min(self.frame, self.play_range()[0]), self.frame)

    def clear_in_out(self) -> None:
        if self.in_out is not None:
            self.in_out = None
            self.in_out_changed.emit(None)

    # ---- moving ----------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance by n frames (back if negative), wrapping inside the play range while playing."""
        lo, hi = self.play_range() if self.playing else (self.first, self.last)
        nxt = self.frame + n
        if self.playing and not lo <= self.frame <= hi:
            nxt = lo if n >= 0 else hi
        elif nxt > hi:
            nxt = lo if self.playing else hi
        elif nxt < lo:
            nxt = hi if self.playing else lo
        self.set_frame(nxt)

    def home(self) -> None:
        self.set_frame(self.play_range()[0])

    def end(self) -> None:
        self.set_frame(self.play_range()[1])

    def jump(self, frames, direction: int) -> bool:
        """To the nearest of `frames` (keys, failures) after or before the playhead; False if none."""
        f = neighbour(frames, self.frame, direction)
        if f is None:
            return False
        self.set_frame(f)
        return True

    def set_playing(self, playing: bool) -> None:
        if bool(playing) != self.playing:
            self.playing = bool(playing)
            if not self.playing:
                self.rate = 1
            self.playing_changed.emit(self.playing)

    def shuttle(self, direction: int) -> None:
        """J/K/L: L plays forward, and faster each press (1x, 2x, 4x, 8x); J the same backwards;
        K (direction 0) stops."""
        if direction == 0:
            self.set_playing(False)
            return
        if self.playing and (self.rate > 0) == (direction > 0):
            i = SHUTTLE_RATES.index(abs(self.rate)) if abs(self.rate) in SHUTTLE_RATES else 0
            speed = SHUTTLE_RATES[min(i + 1, len(SHUTTLE_RATES) - 1)]
        else:
            speed = 1
        self.rate = speed if direction > 0 else -speed
        if not self.playing:
            self.playing = True
            self.playing_changed.emit(True)
        else:
            self.playing_changed.emit(True)    # the rate changed: views re-read it

    def select(self, bodies) -> None:
        bodies = tuple(bodies)
        if bodies != self.selected:
            self.selected = bodies
            self.selection_changed.emit(bodies)

    def set_filter(self, pin_filter: PinFilter) -> None:
        if pin_filter != self.pin_filter:
            self.pin_filter = pin_filter
            self.filter_changed.emit(pin_filter)


class PlaybackClock:
    """Playback at the film's fps by the wall clock: each tick shows the frame that is due
    now, skipping (dropping) the ones a slow machine had no time to draw, so a film plays
    in its own time rather than slowing down. Counts what it dropped."""

    def __init__(self, playhead: Playhead):
        self.playhead = playhead
        self.start_time = 0.0
        self.start_frame = playhead.frame
        self.shown = 0
        self.dropped = 0
        self._last_due = 0

    def start(self, now: float) -> None:
        self.start_time, self.start_frame = now, self.playhead.frame
        self.shown = self.dropped = self._last_due = 0

    def tick(self, now: float) -> int:
        """Move the playhead to the frame due at `now`; returns how many frames it advanced."""
        ph = self.playhead
        due = int((now - self.start_time) * ph.fps * abs(ph.rate))
        n = due - self._last_due
        if n <= 0:
            return 0
        self._last_due = due
        self.shown += 1
        self.dropped += n - 1
        ph.step(n if ph.rate > 0 else -n)
        return n

    def fps(self, now: float) -> float:
        """Frames drawn per second of wall clock since start (dropped ones not counted)."""
        return self.shown / (now - self.start_time) if now > self.start_time else 0.0
