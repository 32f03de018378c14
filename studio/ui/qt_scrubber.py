"""The timeline under the viewport: a frame ruler with the key states named on
their ticks, two lanes of failures (required above, advisory below) where runs
of consecutive failing frames are one bar with their count (grey where they
were found on an older film, which the count then says), the in/out range
shaded, and the playhead. Above it: transport, previous/next key and failure,
the frame, the fps readout while playing, and the pin filter.

Playback runs on the wall clock (`PlaybackClock`): a slow frame makes the next
tick skip frames rather than slow the film. Runs are computed once per set of
failures and filter, so moving the playhead repaints without walking the
failures (a film failing on 5,000 frames scrubs as freely as a clean one)."""
from __future__ import annotations

import time
from dataclasses import replace

from PySide6.QtCore import QEvent, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QActionGroup, QColor, QPainter, QPen
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QMenu, QPushButton, QSizePolicy, QSpinBox, QToolButton,
                               QVBoxLayout, QWidget)

from studio.ui.failures import PinFilter, Run, filtered_frames, lanes, pin_shade, pins_texts
from studio.ui.playhead import PlaybackClock, Playhead, neighbour
from studio.ui.qt_session import QtSession

PIN_HIT_PX = 5
STALE_SHADE = "#5f636b"     # a failure found on an older film: where it was, not that it is
MARGIN = 10
KEY_HIT_PX = 4              # how near a key's tick a press on the ruler grabs it
RULER_H = 18                 # frame numbers and key ticks with names
LANE_H = 13
REQUIRED_Y = RULER_H + 2
ADVISORY_Y = REQUIRED_Y + LANE_H + 3
FILM_Y = ADVISORY_Y + LANE_H + 3
FILM_H = 7                   # the baked film; a click on it picks the segment between two keys
BAR_H = FILM_Y + FILM_H + 3
TRANSPORT_KEYS = {Qt.Key.Key_Space, Qt.Key.Key_J, Qt.Key.Key_K, Qt.Key.Key_L, Qt.Key.Key_Home, Qt.Key.Key_End,
                  Qt.Key.Key_Comma, Qt.Key.Key_Period, Qt.Key.Key_BracketLeft, Qt.Key.Key_BracketRight,
                  Qt.Key.Key_I, Qt.Key.Key_O, Qt.Key.Key_V}


def ruler_step(frames: int, width: int, min_px: int = 60) -> int:
    """Frames between numbered ruler ticks (1, 2, 5, 10, 20, 50...), so numbers sit >= min_px apart."""
    step = 1
    while frames / step * min_px > max(1, width):
        step = step * 5 // 2 if str(step).startswith("2") else step * 2
    return step


class PinBar(QWidget):
    """The time bar itself; reads frames, states and failures from the session and playhead."""

    pin_clicked = Signal(int, object)      # frame, [Failure]
    key_moved = Signal(str, int)           # a key dragged along the ruler: state id, new frame
    segment_clicked = Signal(str)          # the film lane clicked between two keys: "a..b"

    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead
        self.setMinimumHeight(BAR_H)
        self.setMouseTracking(True)
        self._runs_key = None
        self._runs: dict[str, list[Run]] = {"required": [], "advisory": []}
        self._stale_runs: dict[str, list[Run]] = {"required": [], "advisory": []}
        self.dragging: tuple[str, int] | None = None      # (key, frame it is dragged to)
        self.selected_segment = ""                          # picked on the film lane, drawn outlined
        qsession.changed.connect(self.update)
        playhead.frame_changed.connect(lambda _f: self.update())
        playhead.range_changed.connect(lambda _a, _b: self.update())
        playhead.in_out_changed.connect(lambda _r: self.update())
        playhead.filter_changed.connect(lambda _f: self.update())

    def sizeHint(self) -> QSize:
        return QSize(600, BAR_H)

    def x_of(self, frame: int) -> float:
        first, last = self.playhead.first, self.playhead.last
        span = max(1, last - first)
        return MARGIN + (frame - first) / span * (self.width() - 2 * MARGIN)

    def frame_at(self, x: float) -> int:
        first, last = self.playhead.first, self.playhead.last
        t = (x - MARGIN) / max(1.0, self.width() - 2 * MARGIN)
        return min(max(round(first + t * (last - first)), first), last)

    def runs(self) -> dict[str, list[Run]]:
        """The lanes' runs, kept until the failures or the filter change."""
        key = (id(self.session.failures_at), id(self.session.stale_failures_at), self.playhead.pin_filter)
        if key != self._runs_key:
            self._runs_key, self._runs = key, lanes(self.session.failures_at, self.playhead.pin_filter)
            self._stale_runs = lanes(self.session.stale_failures_at, self.playhead.pin_filter)
        return self._runs

    def stale_runs(self) -> dict[str, list[Run]]:
        """Runs of failures found on an older film or state: drawn grey, under the current ones."""
        self.runs()
        return self._stale_runs

    def lane_at(self, y: float) -> str | None:
        if REQUIRED_Y - 2 <= y < REQUIRED_Y + LANE_H + 1:
            return "required"
        if ADVISORY_Y - 1 <= y < ADVISORY_Y + LANE_H + 2:
            return "advisory"
        return None

    def run_near(self, x: float, lane: str) -> Run | None:
        """The run of `lane` under x, or within a few pixels of it."""
        best, best_d = None, PIN_HIT_PX + 1
        for r in self.runs()[lane]:
            x0, x1 = self.x_of(r.first), self.x_of(r.last)
            d = 0 if x0 - 1 <= x <= x1 + 1 else min(abs(x - x0), abs(x - x1))
            if d < best_d:
                best, best_d = r, d
        return best

    def pin_near(self, x: float) -> int | None:
        """The failing frame nearest to x within a few pixels (either lane), if any."""
        for lane in ("required", "advisory"):
            r = self.run_near(x, lane)
            if r is not None:
                return min(max(self.frame_at(x), r.first), r.last)
        return None

    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        w = self.width()
        p.fillRect(self.rect(), QColor("#1d1f22"))
        ph = self.playhead
        if ph.in_out:                             # the in/out range, shaded over ruler and lanes
            x0, x1 = int(self.x_of(ph.in_out[0])), int(self.x_of(ph.in_out[1]))
            p.fillRect(QRect(x0, 0, max(2, x1 - x0), BAR_H), QColor("#2c3a4a"))
        self._paint_ruler(p, w)
        for y in (REQUIRED_Y, ADVISORY_Y):        # lane grounds
            p.fillRect(QRect(MARGIN, y, w - 2 * MARGIN, LANE_H), QColor("#26292d"))
        p.fillRect(QRect(MARGIN, FILM_Y, w - 2 * MARGIN, FILM_H), QColor("#3a3d42"))
        baked = self.session.film
        if baked is not None and baked.n_frames:
            x0, x1 = self.x_of(baked.frame_start), self.x_of(baked.frame_end)
            p.fillRect(QRect(int(x0), FILM_Y, max(1, int(x1 - x0)), FILM_H), QColor("#4a90d9"))
        span = self.segment_span(self.selected_segment)
        if span is not None:                      # the segment picked for the Motion dock
            x0, x1 = int(self.x_of(span[0])), int(self.x_of(span[1]))
            p.setPen(QPen(QColor("#f0c808"), 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRect(x0, FILM_Y - 1, max(2, x1 - x0), FILM_H + 2))
        self._paint_runs(p)
        x = int(self.x_of(ph.frame))              # the playhead
        p.setPen(QPen(QColor("#f0c808"), 2))
        p.drawLine(x, 0, x, BAR_H)
        p.end()

    def _paint_ruler(self, p: QPainter, w: int) -> None:
        ph = self.playhead
        fm = p.fontMetrics()
        p.setPen(QPen(QColor("#8fc1ff"), 1))      # key states first: a tall tick and the key's name
        taken = []
        for s in self.session.states:
            x = int(self.x_of(s.frame))
            p.drawLine(x, 0, x, BAR_H)
        if self.dragging is not None:              # where a dragged key will land
            x = int(self.x_of(self.dragging[1]))
            p.setPen(QPen(QColor("#f0c808"), 2, Qt.PenStyle.DashLine))
            p.drawLine(x, 0, x, BAR_H)
            p.drawText(x + 3, fm.ascent(), f"{self.dragging[0]} → {self.dragging[1]}")
            p.setPen(QPen(QColor("#8fc1ff"), 1))
        for x, text, right in self.key_labels(fm):
            p.drawText(x, fm.ascent(), text)
            taken.append((x - 3, right + 4))
        step = ruler_step(ph.last - ph.first + 1, w - 2 * MARGIN, fm.horizontalAdvance("00000") + 12)
        p.setPen(QPen(QColor("#6b7078"), 1))      # frame numbers where no key's name sits
        start = (ph.first + step - 1) // step * step
        for f in range(start, ph.last + 1, step):
            x = int(self.x_of(f))
            p.drawLine(x, RULER_H - 5, x, RULER_H)
            right = x + 2 + fm.horizontalAdvance(str(f))
            if not any(a - 2 <= right and x <= b for a, b in taken):
                p.drawText(x + 2, RULER_H - 6, str(f))

    def key_labels(self, fm) -> list[tuple[int, str, int]]:
        """(left, text, right) of each key's name on the ruler: in the room before the next key's tick,
        elided there ("sidest…"), so neighbouring names never cover each other (the tooltip has them whole)."""
        out, names_right = [], 0
        keys = sorted(self.session.states, key=lambda s: (s.frame, s.id))
        ticks = [int(self.x_of(s.frame)) for s in keys]
        edge = self.width() - 2
        # a key too near the right edge for a name after it names itself before its tick, halving the gap
        last_left = bool(keys) and edge - (ticks[-1] + 3) < fm.horizontalAdvance(keys[-1].id[:1] + "…")
        for i, s in enumerate(keys):
            tick, is_last = ticks[i], i == len(keys) - 1
            if is_last and last_left:
                text = fm.elidedText(s.id, Qt.TextElideMode.ElideRight, max(0, tick - 3 - names_right))
                x = tick - 3 - fm.horizontalAdvance(text)
            else:
                after = edge if is_last else ticks[i + 1] - 3
                if i == len(keys) - 2 and last_left:
                    after = (tick + ticks[i + 1]) // 2
                text = fm.elidedText(s.id, Qt.TextElideMode.ElideRight, max(0, after - (tick + 3)))
                x = tick + 3
            if text and x >= names_right:
                out.append((x, text, x + fm.horizontalAdvance(text)))
                names_right = out[-1][2] + 2
        return out

    def _paint_runs(self, p: QPainter) -> None:
        rects, labels = self._lane_rects(p.fontMetrics())
        p.setPen(Qt.PenStyle.NoPen)
        for shade, rs in rects.items():
            p.setBrush(QColor(shade))
            p.drawRects(rs)
        p.setPen(QPen(QColor("#ffffff"), 1))
        for rect, text in labels:
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def _lane_rects(self, fm) -> tuple[dict[str, list[QRect]], list]:
        """The bars to paint, merged where runs share pixels, kept until runs, range or width change."""
        runs = self.runs()
        key = (self._runs_key, self.playhead.first, self.playhead.last, self.width())
        if key == getattr(self, "_rects_key", None):
            return self._rects
        rects: dict[str, list[QRect]] = {}
        labels = []
        stale = self.stale_runs()
        for lane, y in (("required", REQUIRED_Y), ("advisory", ADVISORY_Y)):
            last_end: dict[str, int] = {}
            for r in [*stale[lane], *runs[lane]]:
                shade = STALE_SHADE if r.worst.stale else pin_shade(r.worst)
                x0, x1 = int(self.x_of(r.first)) - 1, int(self.x_of(r.last)) + 1
                width = max(3, x1 - x0 + 1)
                mine = rects.setdefault(shade, [])
                if mine and last_end.get(shade, -10) >= x0 - 1 and mine[-1].y() == y + 1:
                    prev = mine[-1]                 # touches the previous bar: widen it
                    mine[-1] = QRect(prev.x(), prev.y(), max(prev.right(), x0 + width - 1) - prev.x() + 1, prev.height())
                else:
                    mine.append(QRect(x0, y + 1, width, LANE_H - 2))
                last_end[shade] = mine[-1].right()
                if r.count > 1 and fm.horizontalAdvance(str(r.count)) + 4 <= width:
                    labels.append((QRect(x0, y + 1, width, LANE_H - 2), str(r.count)))
        self._rects_key, self._rects = key, (rects, labels)
        return self._rects

    def segment_span(self, segment: str) -> tuple[int, int] | None:
        if not segment or ".." not in segment:
            return None
        a, b = segment.split("..", 1)
        frames = {s.id: s.frame for s in self.session.states}
        return (frames[a], frames[b]) if a in frames and b in frames else None

    def segment_near(self, x: float) -> str | None:
        """The pair of consecutive keys whose span holds the frame under x."""
        frame = self.frame_at(x)
        keys = sorted(self.session.states, key=lambda s: (s.frame, s.id))
        for a, b in zip(keys, keys[1:]):
            if a.frame <= frame <= b.frame:
                return f"{a.id}..{b.id}"
        return None

    def key_near(self, x: float) -> str | None:
        """The key state whose tick is within a few pixels of x on the ruler, if any."""
        best, best_d = None, KEY_HIT_PX + 1
        for st in self.session.states:
            d = abs(self.x_of(st.frame) - x)
            if d < best_d:
                best, best_d = st.id, d
        return best

    def mouseReleaseEvent(self, e) -> None:
        if self.dragging is not None:
            (key, frame), self.dragging = self.dragging, None
            if frame != next((s.frame for s in self.session.states if s.id == key), frame):
                self.key_moved.emit(key, frame)
            self.update()

    def mousePressEvent(self, e) -> None:
        x, y = e.position().x(), e.position().y()
        key = self.key_near(x) if y < RULER_H else None
        if key is not None:                  # a key's tick on the ruler: drag it to move the key
            frame = next(s.frame for s in self.session.states if s.id == key)
            self.dragging = (key, frame)
            self.playhead.set_frame(frame)
            return
        if y >= FILM_Y - 2:                  # the film lane: pick the segment there
            segment = self.segment_near(x)
            self.playhead.set_frame(self.frame_at(x))
            if segment is not None:
                self.selected_segment = segment
                self.segment_clicked.emit(segment)
                self.update()
            return
        lane = self.lane_at(y)
        run = self.run_near(x, lane) if lane else None
        if run is not None:
            self.jump_to_pin(min(max(self.frame_at(x), run.first), run.last))
        else:
            self.playhead.set_frame(self.frame_at(x))

    def mouseMoveEvent(self, e) -> None:
        x = e.position().x()
        if self.dragging is not None:
            frame = self.frame_at(x)
            self.dragging = (self.dragging[0], frame)
            self.playhead.set_frame(frame)
            self.setToolTip(f"move {self.dragging[0]} to frame {frame}")
            self.update()
            return
        if e.buttons() & Qt.MouseButton.LeftButton:
            self.playhead.set_frame(self.frame_at(x))
        if e.position().y() < RULER_H:           # a key's whole name, however narrow its room on the ruler
            key = self.key_near(x)
            frame = next((s.frame for s in self.session.states if s.id == key), None)
            self.setToolTip(f"{key} @ {frame} (drag to move it)" if key else "")
            return
        if e.position().y() >= FILM_Y - 2:
            seg = self.segment_near(x)
            self.setToolTip(f"segment {seg}: click to choose its motion in the Motion dock" if seg else "")
            return
        lane = self.lane_at(e.position().y())
        run = self.run_near(x, lane) if lane else None
        if run is None:
            self.setToolTip("")
            return
        frame = min(max(self.frame_at(x), run.first), run.last)
        here = [f for f in self.session.failures_at.get(frame, [])
                if f.required == (lane == "required") and self.playhead.pin_filter.accepts(f)]
        self.setToolTip("\n".join([run.describe()] + [f"{frame}: {f.check} — {f.text}" for f in here[:6]]))

    def jump_to_pin(self, frame: int) -> None:
        fails = [f for f in self.session.failures_at.get(frame, []) if self.playhead.pin_filter.accepts(f)]
        self.playhead.set_frame(frame)
        self.playhead.select(sorted({b for f in fails for b in f.bodies}))
        self.pin_clicked.emit(frame, fails)


class FrameBox(QSpinBox):
    """The frame number: takes digits, and lets the transport keys through to the window's
    actions (a spin box would otherwise swallow J/K/L, space and the rest)."""

    def event(self, e) -> bool:
        if e.type() == QEvent.Type.ShortcutOverride and e.key() in TRANSPORT_KEYS:
            e.ignore()
            return False
        return super().event(e)


class FitLabel(QLabel):
    """A label that says the first of its texts that fits (full words first), the full ones in its tooltip."""

    def __init__(self) -> None:
        super().__init__("")
        self.texts: list[str] = [""]

    def set_texts(self, *texts: str) -> None:
        self.texts = list(texts)
        self.setToolTip(texts[0])
        self._fit()

    def resizeEvent(self, event) -> None:      # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        width, fm = self.width(), self.fontMetrics()
        self.setText(next((t for t in self.texts if fm.horizontalAdvance(t) <= width), self.texts[-1]))


class QtScrubber(QWidget):
    """Transport, key and failure stepping, the frame number, fps, the filter and the bar."""

    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead
        self.play_button = QPushButton("Play")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip("Play / pause (Space); J, K, L shuttle back, stop, forward")
        self.play_button.toggled.connect(playhead.set_playing)
        self.prev_key_button, self.next_key_button = QPushButton("◀K"), QPushButton("K▶")
        self.prev_key_button.setToolTip("Previous key ( [ )")
        self.next_key_button.setToolTip("Next key ( ] )")
        self.prev_key_button.clicked.connect(lambda: self.goto_key(-1))
        self.next_key_button.clicked.connect(lambda: self.goto_key(+1))
        self.prev_pin, self.next_pin = QPushButton("◀F"), QPushButton("F▶")
        self.prev_pin.setToolTip("Previous failure the filter shows (Ctrl+[)")
        self.next_pin.setToolTip("Next failure the filter shows (Ctrl+])")
        self.prev_pin.clicked.connect(lambda: self.goto_pin(-1))
        self.next_pin.clicked.connect(lambda: self.goto_pin(+1))
        for b in (self.play_button, self.prev_key_button, self.next_key_button, self.prev_pin, self.next_pin):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)     # a click must not take the keys from the window
            b.setMaximumWidth(64 if b is self.play_button else 40)
        self.frame_box = FrameBox()
        self.frame_box.setRange(playhead.first, playhead.last)
        self.frame_box.setValue(playhead.frame)
        self.frame_box.valueChanged.connect(playhead.set_frame)
        self.fps_label = QLabel("")
        self.fps_label.setMinimumWidth(60)
        self.in_out_label = QLabel("")
        self.filter_button = QToolButton()       # one button with a menu: narrow enough for 1280x720
        self.filter_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.filter_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.filter_menu = QMenu(self.filter_button)
        self.filter_button.setMenu(self.filter_menu)
        self.filter_button.setMaximumWidth(150)
        self.bar = PinBar(qsession, playhead)
        self.pins_label = FitLabel()
        # the count shrinks (to its short words, then clipped) before the window grows; its full text is its tooltip
        self.pins_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.pins_label.setMinimumWidth(40)
        controls = QHBoxLayout()       # the controls above, so the bar keeps the whole width of the view
        for wdg in (self.play_button, self.prev_key_button, self.next_key_button, self.prev_pin, self.next_pin,
                    self.frame_box, self.fps_label, self.in_out_label):
            controls.addWidget(wdg)
        controls.addWidget(self.pins_label, 1)
        controls.addWidget(self.filter_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        lay.addLayout(controls)
        lay.addWidget(self.bar)
        self.clock = PlaybackClock(playhead)
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        playhead.frame_changed.connect(self._on_frame)
        playhead.range_changed.connect(lambda a, b: self.frame_box.setRange(a, b))
        playhead.playing_changed.connect(self._on_playing)
        playhead.in_out_changed.connect(self._on_in_out)
        qsession.changed.connect(self._on_changed)
        self._on_changed()
        self._on_playing(playhead.playing)
        playhead.filter_changed.connect(lambda _f: self._show_filter())

    def _on_frame(self, frame: int) -> None:
        if self.frame_box.value() != frame:
            self.frame_box.blockSignals(True)
            self.frame_box.setValue(frame)
            self.frame_box.blockSignals(False)

    def _on_playing(self, playing: bool) -> None:
        if self.play_button.isChecked() != playing:
            self.play_button.blockSignals(True)
            self.play_button.setChecked(playing)
            self.play_button.blockSignals(False)
        self.play_button.setText("Pause" if playing else "Play")
        if playing:
            self.clock.start(time.perf_counter())
            rate = max(1, self.playhead.fps * abs(self.playhead.rate))
            self.timer.start(max(1, int(1000 / rate / 2)))   # ticks twice a frame: the clock picks the frame
        else:
            self.timer.stop()
        self._show_fps()

    def _tick(self) -> None:
        self.clock.tick(time.perf_counter())
        if self.clock.shown % 12 == 0:
            self._show_fps()

    def _show_fps(self) -> None:
        ph = self.playhead
        rate = f" ×{ph.rate}" if ph.rate != 1 else ""
        if ph.playing and self.clock.shown:
            self.fps_label.setText(f"{self.clock.fps(time.perf_counter()):.1f}/{ph.fps} fps{rate} · "
                                   f"{self.clock.dropped} dropped")
        else:
            self.fps_label.setText(f"{ph.fps} fps{rate}")

    def _on_in_out(self, in_out) -> None:
        self.in_out_label.setText(f"in/out {in_out[0]}–{in_out[1]}" if in_out else "")

    def _on_changed(self) -> None:
        """New failures: the filter menu offers their checks and bodies; the count follows."""
        self._fill_filter_menu()
        self.pins_label.set_texts(*pins_texts(self.session.failures_at, self.session.stale_failures_at,
                                              self.session.verdict.film))

    def _fill_filter_menu(self) -> None:
        cur = self.playhead.pin_filter
        checks = sorted({f.check for f in self.session.failures})
        bodies = sorted({b for f in self.session.failures for b in f.bodies})
        menu = self.filter_menu
        menu.clear()
        for title, field, choices in (("Lanes", "required_only", [(False, "All failures"), (True, "Required only")]),
                                      ("Check", "check", [("", "every check")] + [(c, c) for c in checks]),
                                      ("Body", "body", [("", "every body")] + [(b, b) for b in bodies])):
            menu.addSection(title)
            group = QActionGroup(menu)
            for value, text in choices:
                act = menu.addAction(text)
                act.setCheckable(True)
                act.setChecked(getattr(cur, field) == value)
                group.addAction(act)
                act.triggered.connect(lambda _c=False, f=field, v=value: self._choose(f, v))
        if cur.check and cur.check not in checks or cur.body and cur.body not in bodies:
            self.set_filter(cur.required_only, cur.check if cur.check in checks else "",
                            cur.body if cur.body in bodies else "")
        self._show_filter()

    def _choose(self, field: str, value) -> None:
        self.playhead.set_filter(replace(self.playhead.pin_filter, **{field: value}))
        self._fill_filter_menu()

    def _show_filter(self) -> None:
        text = str(self.playhead.pin_filter)      # the button's menu says what it chooses; its tooltip says it too
        self.filter_button.setText(text if len(text) <= 18 else text[:17] + "…")
        self.filter_button.setToolTip(f"Show: {text} (the lanes, the count of runs and previous/next failure follow it)")

    def set_filter(self, required_only: bool = False, check: str = "", body: str = "") -> None:
        """Choose what the lanes show, as the filter menu does."""
        self.playhead.set_filter(PinFilter(required_only, check, body))
        self._show_filter()

    def goto_pin(self, direction: int) -> bool:
        frames = filtered_frames(self.session.failures_at, self.playhead.pin_filter)
        f = neighbour(frames, self.playhead.frame, direction)
        if f is None:
            return False
        self.bar.jump_to_pin(f)
        return True

    def goto_key(self, direction: int) -> bool:
        return self.playhead.jump([s.frame for s in self.session.states], direction)

    def close_view(self) -> None:
        self.timer.stop()
