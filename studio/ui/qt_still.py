"""A storyboard still at full size in its own window (double-click a card)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget


class QtStill(QDialog):
    def __init__(self, path: Path, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.pixmap = QPixmap(str(path))
        screen = self.screen().availableGeometry() if self.screen() else None
        if screen is not None and (self.pixmap.width() > screen.width() * 0.9
                                   or self.pixmap.height() > screen.height() * 0.9):
            self.pixmap = self.pixmap.scaled(int(screen.width() * 0.9), int(screen.height() * 0.9),
                                             Qt.AspectRatioMode.KeepAspectRatio,
                                             Qt.TransformationMode.SmoothTransformation)
        self.image = QLabel()
        self.image.setPixmap(self.pixmap)
        self.caption = QLabel(title)
        lay = QVBoxLayout(self)
        lay.addWidget(self.image)
        lay.addWidget(self.caption)
