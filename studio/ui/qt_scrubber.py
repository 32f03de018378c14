"""The frame scrubber: play/pause, the current frame in the project's numbers,
key-state ticks, and a pin for every failure of the current report at its
frame. Clicking a pin jumps there and selects the bodies involved; clicking
or dragging elsewhere scrubs. Pins are drawn grouped per pixel column, so a
film with a pin on each of 1,440 frames paints in one pass."""
from __future__ import annotations

from PySide6.QtCore import QLine, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from .failures import Failure, pin_shade, pins_text
from .playhead import Playhead
from .qt_session import QtSession

PIN_HIT_PX = 5
MARGIN = 10


class PinBar(QWidget):
    """The time bar itself; reads frames, states and failures from the session and playhead."""

    pin_clicked = Signal(int, object)      # frame, [Failure]

    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead
        self.setMinimumHeight(44)
        self.setMouseTracking(True)
        self._columns_key = None
        self._columns: dict[int, Failure] = {}
        qsession.changed.connect(self.update)
        playhead.frame_changed.connect(lambda _f: self.update())
        playhead.range_changed.connect(lambda _a, _b: self.update())

    def sizeHint(self) -> QSize:
        return QSize(600, 44)

    def x_of(self, frame: int) -> float:
        first, last = self.playhead.first, self.playhead.last
        span = max(1, last - first)
        return MARGIN + (frame - first) / span * (self.width() - 2 * MARGIN)

    def frame_at(self, x: float) -> int:
        first, last = self.playhead.first, self.playhead.last
        t = (x - MARGIN) / max(1.0, self.width() - 2 * MARGIN)
        return round(first + t * (last - first))

    def pin_near(self, x: float) -> int | None:
        """The frame of the failure pin nearest to x within a few pixels, if any."""
        best, best_d = None, PIN_HIT_PX + 1
        for frame in self.session.failures_at:
            d = abs(self.x_of(frame) - x)
            if d < best_d:
                best, best_d = frame, d
        return best

    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        w, h = self.width(), self.height()
        p.fillRect(self.rect(), QColor("#1d1f22"))
        mid = h // 2
        p.fillRect(QRect(MARGIN, mid - 2, w - 2 * MARGIN, 4), QColor("#3a3d42"))
        baked = self.session.film
        if baked is not None and baked.n_frames:
            x0, x1 = self.x_of(baked.frame_start), self.x_of(baked.frame_end)
            p.fillRect(QRect(int(x0), mid - 2, max(1, int(x1 - x0)), 4), QColor("#4a90d9"))
        p.setPen(QPen(QColor("#c9ccd1"), 1))
        names_right = -1
        for s in self.session.states:           # key states: ticks below the bar, named where room
            x = int(self.x_of(s.frame))
            p.drawLine(x, mid + 4, x, h - 4)
            width = p.fontMetrics().horizontalAdvance(s.id)
            if x + 3 > names_right and x + 3 + width < w:
                p.drawText(x + 3, h - 4, s.id)
                names_right = x + 3 + width + 6
        groups: dict[tuple[str, bool], list[int]] = {}
        for x, f in self.columns().items():     # pins: a stem and a head above the bar, batched per shade
            groups.setdefault((pin_shade(f), f.required), []).append(x)
        for (shade, required), xs in groups.items():
            c = QColor(shade)
            p.setPen(QPen(c, 1))
            p.drawLines([QLine(x, 8, x, mid - 3) for x in xs])
            p.setBrush(c if required else Qt.BrushStyle.NoBrush)
            p.drawRects([QRect(x - 2, 2, 5, 5) for x in xs])
        x = int(self.x_of(self.playhead.frame))  # the playhead
        p.setPen(QPen(QColor("#f0c808"), 2))
        p.drawLine(x, 0, x, h)
        p.end()

    def columns(self) -> dict[int, Failure]:
        """The pin to draw in each pixel column (the worst failure there), kept until the
        failures, the frame range or the width change, so moving the playhead repaints fast."""
        key = (id(self.session.failures_at), self.playhead.first, self.playhead.last, self.width())
        if key != self._columns_key:
            columns: dict[int, Failure] = {}
            for frame, fails in self.session.failures_at.items():
                x = int(self.x_of(frame))
                worst = min(fails, key=lambda f: (not f.required, f.kind != "penetration"))
                prev = columns.get(x)
                if prev is None or (worst.required and not prev.required):
                    columns[x] = worst
            self._columns_key, self._columns = key, columns
        return self._columns

    def mousePressEvent(self, e) -> None:
        x = e.position().x()
        pin = self.pin_near(x) if e.position().y() < self.height() // 2 + 4 else None
        if pin is not None:
            self.jump_to_pin(pin)
        else:
            self.playhead.set_frame(self.frame_at(x))

    def mouseMoveEvent(self, e) -> None:
        if e.buttons() & Qt.MouseButton.LeftButton:
            self.playhead.set_frame(self.frame_at(e.position().x()))
        pin = self.pin_near(e.position().x())
        self.setToolTip("\n".join(f"{f.frame}: {f.check} — {f.text}" for f in self.session.failures_at[pin])
                        if pin is not None else "")

    def jump_to_pin(self, frame: int) -> None:
        fails = self.session.failures_at.get(frame, [])
        self.playhead.set_frame(frame)
        self.playhead.select(sorted({b for f in fails for b in f.bodies}))
        self.pin_clicked.emit(frame, fails)


class QtScrubber(QWidget):
    """Play/pause, previous/next pin, the frame number, and the pin bar."""

    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead
        self.play_button = QPushButton("Play")
        self.play_button.setCheckable(True)
        self.play_button.toggled.connect(playhead.set_playing)
        self.prev_pin = QPushButton("◀ pin")
        self.next_pin = QPushButton("pin ▶")
        self.prev_pin.clicked.connect(lambda: self.goto_pin(-1))
        self.next_pin.clicked.connect(lambda: self.goto_pin(+1))
        self.frame_box = QSpinBox()
        self.frame_box.setRange(playhead.first, playhead.last)
        self.frame_box.setValue(playhead.frame)
        self.frame_box.valueChanged.connect(playhead.set_frame)
        self.bar = PinBar(qsession, playhead)
        self.pins_label = QLabel("")
        controls = QHBoxLayout()       # the controls above, so the bar keeps the whole width of the view
        for wdg in (self.play_button, self.prev_pin, self.next_pin, self.frame_box):
            controls.addWidget(wdg)
        controls.addStretch(1)
        controls.addWidget(self.pins_label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        lay.addLayout(controls)
        lay.addWidget(self.bar)
        self.timer = QTimer(self)
        self.timer.timeout.connect(lambda: playhead.step(1))
        playhead.frame_changed.connect(self._on_frame)
        playhead.range_changed.connect(lambda a, b: self.frame_box.setRange(a, b))
        playhead.playing_changed.connect(self._on_playing)
        qsession.changed.connect(self._count_pins)
        self._count_pins()

    def _on_frame(self, frame: int) -> None:
        if self.frame_box.value() != frame:
            self.frame_box.blockSignals(True)
            self.frame_box.setValue(frame)
            self.frame_box.blockSignals(False)

    def _on_playing(self, playing: bool) -> None:
        if self.play_button.isChecked() != playing:
            self.play_button.setChecked(playing)
        self.play_button.setText("Pause" if playing else "Play")
        if playing:
            self.timer.start(max(1, round(1000 / max(1, self.playhead.fps))))
        else:
            self.timer.stop()

    def _count_pins(self) -> None:
        self.pins_label.setText(pins_text(self.session.failures_at))

    def goto_pin(self, direction: int) -> None:
        frames = sorted(self.session.failures_at)
        cur = self.playhead.frame
        nxt = [f for f in frames if f > cur] if direction > 0 else [f for f in frames if f < cur][::-1]
        if nxt:
            self.bar.jump_to_pin(nxt[0])
