"""The flipbook: a window that plays a render's preview video and steps through
its stills, with play/pause, a frame step either way, a slider and the frame
number. Pictures come from `flipbook.py` (decoded with PyAV); playback keeps
the film's time by the wall clock, dropping pictures when one is late."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (QComboBox, QDialog, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider,
                               QVBoxLayout, QWidget)

from studio.ui.flipbook import Flip, ReelError


def pixmap_of(picture) -> QPixmap:
    if isinstance(picture, Path):
        return QPixmap(str(picture))
    rgb = np.ascontiguousarray(picture)
    h, w = rgb.shape[:2]
    return QPixmap.fromImage(QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy())


class QtFlipbook(QDialog):
    """Plays one of a render's reels (its video, its stills); closing it lets the files go."""

    def __init__(self, title: str, reels: list[tuple[str, object]], parent: QWidget | None = None):
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
        row = QHBoxLayout()
        for w in (self.source, self.back_button, self.play_button, self.next_button):
            row.addWidget(w)
        row.addWidget(self.slider, 1)
        row.addWidget(self.frame_label)
        lay = QVBoxLayout(self)
        lay.addWidget(self.picture, 1)
        lay.addLayout(row)
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

    def show_picture(self) -> None:
        i = self.flip.index
        try:
            self._shown = pixmap_of(self.reel.picture(i))
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
        super().closeEvent(e)
