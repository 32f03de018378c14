"""The flipbook: a window that plays a render's preview video and steps through
its stills, with play/pause, a frame step either way, a slider and the frame
number. Pictures come from `flipbook.py` (decoded with PyAV); playback keeps
the film's time by the wall clock, dropping pictures when one is late. Another
render of the same frame range can be compared picture for picture, side by
side or with a wipe whose place a slider sets."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (QComboBox, QDialog, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider,
                               QVBoxLayout, QWidget)

from studio.ui.flipbook import COMPARE_MODES, Flip, ReelError, VideoReel, compose


def pixmap_of(picture) -> QPixmap:
    if isinstance(picture, Path):
        return QPixmap(str(picture))
    rgb = np.ascontiguousarray(picture)
    h, w = rgb.shape[:2]
    return QPixmap.fromImage(QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy())


class QtFlipbook(QDialog):
    """Plays one of a render's reels (its video, its stills); closing it lets the files go."""

    def __init__(self, title: str, reels: list[tuple[str, object]], parent: QWidget | None = None,
                 others: list[tuple[str, object]] | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Flipbook — {title}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self.reels = reels
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setMinimumSize(320, 180)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.picture.setStyleSheet("background: #1b1c1f;")
        self.source = QComboBox()
        self.source.addItems([name for name, _r in reels])
        self.source.currentIndexChanged.connect(self._use)
        self.back_button = QPushButton("◀ Frame")
        self.play_button = QPushButton("Play")
        self.next_button = QPushButton("Frame ▶")
        self.back_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.play_button.clicked.connect(self.toggle)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.valueChanged.connect(self.go)
        self.frame_label = QLabel("")
        for keys, fn in (("Space", self.toggle), ("Left", lambda: self.step(-1)), ("Right", lambda: self.step(1)),
                         (",", lambda: self.step(-1)), (".", lambda: self.step(1))):
            QShortcut(QKeySequence(keys), self, fn)
        self.others = list(others or [])          # (label, loader() -> VideoReel | None): same frame range
        self.other = None                         # the render compared with, once loaded
        self.compare = QComboBox()
        self.compare.addItem("nothing" if self.others else "nothing (no other render of this range)")
        for label, _load in self.others:
            self.compare.addItem(label)
        self.compare.setEnabled(bool(self.others))
        self.compare.currentIndexChanged.connect(self._compare_with)
        self.mode = QComboBox()
        self.mode.addItems([m for m in COMPARE_MODES if m != "off"])
        self.mode.currentIndexChanged.connect(lambda _i: self.show_picture())
        self.wipe = QSlider(Qt.Orientation.Horizontal)
        self.wipe.setRange(0, 100)
        self.wipe.setValue(50)
        self.wipe.setToolTip("Where the wipe falls: this render left of it, the compared one right")
        self.wipe.valueChanged.connect(lambda _v: self.show_picture())
        row = QHBoxLayout()
        for w in (self.source, self.back_button, self.play_button, self.next_button):
            row.addWidget(w)
        row.addWidget(self.slider, 1)
        row.addWidget(self.frame_label)
        versus = QHBoxLayout()
        versus.addWidget(QLabel("Compare with"))
        versus.addWidget(self.compare, 1)
        versus.addWidget(self.mode)
        versus.addWidget(QLabel("wipe"))
        versus.addWidget(self.wipe, 1)
        lay = QVBoxLayout(self)
        lay.addWidget(self.picture, 1)
        lay.addLayout(row)
        lay.addLayout(versus)
        self.timer = QTimer(self)
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.reel = None
        self.flip: Flip | None = None
        self._shown: QPixmap | None = None
        self.resize(800, 520)
        self._use(0)

    # ---- showing ---------------------------------------------------------
    def _use(self, i: int) -> None:
        self.pause()
        self.reel = self.reels[i][1]
        self.flip = Flip(self.reel.count, self.reel.fps)
        self.slider.blockSignals(True)
        self.slider.setRange(0, self.reel.count - 1)
        self.slider.setValue(0)
        self.slider.blockSignals(False)
        self.show_picture()

    def _compare_with(self, i: int) -> None:
        if self.other is not None:
            self.other.close()
            self.other = None
        if i > 0:
            try:
                self.other = self.others[i - 1][1]()
            except ReelError as e:
                self.frame_label.setText(str(e))
        self.show_picture()

    @property
    def comparing(self) -> str:
        """What the picture shows: "off", "side by side" or "wipe"."""
        return self.mode.currentText() if self.other is not None and isinstance(self.reel, VideoReel) else "off"

    def composed(self, i: int):
        """Picture i, beside or wiped with the compared render's picture of the same film frame."""
        picture = self.reel.picture(i)
        if self.comparing == "off":
            return picture
        j = self.reel.first + i - self.other.first
        if not 0 <= j < self.other.count:
            return picture
        return compose(picture, self.other.picture(j), self.comparing, self.wipe.value() / 100)

    def show_picture(self) -> None:
        i = self.flip.index
        try:
            self._shown = pixmap_of(self.composed(i))
        except (ReelError, OSError) as e:
            self.pause()
            self.picture.setText(str(e))
            self._shown = None
        self._fit()
        self.slider.blockSignals(True)
        self.slider.setValue(i)
        self.slider.blockSignals(False)
        self.frame_label.setText(f"{self.reel.label(i)} · {i + 1}/{self.reel.count} · {self.reel.fps:g} fps")

    def _fit(self) -> None:
        if self._shown is not None and not self._shown.isNull():
            self.picture.setPixmap(self._shown.scaled(self.picture.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                                      Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._fit()

    @property
    def index(self) -> int:
        return self.flip.index

    # ---- acting ----------------------------------------------------------
    def step(self, n: int) -> None:
        self.pause()
        self.flip.step(n)
        self.show_picture()

    def go(self, i: int) -> None:
        """Jump to picture i (the slider); playing goes on from there."""
        self.flip.go(i)
        if self.flip.playing:
            self.flip.play(time.monotonic())
        self.show_picture()

    def toggle(self) -> None:
        if self.flip.playing:
            self.pause()
        else:
            self.flip.play(time.monotonic())
            self.play_button.setText("Pause")
            self.timer.start()

    def pause(self) -> None:
        if self.flip is not None:
            self.flip.pause()
        self.timer.stop()
        self.play_button.setText("Play")

    def _tick(self) -> None:
        before = self.flip.index
        if self.flip.tick(time.monotonic()) != before:
            self.show_picture()

    def closeEvent(self, e) -> None:
        self.pause()
        for _name, reel in self.reels:
            reel.close()
        if self.other is not None:
            self.other.close()
            self.other = None
        super().closeEvent(e)
