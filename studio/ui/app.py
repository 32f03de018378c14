"""`studio open [PATH]`: start the desktop studio, optionally on a project."""
from __future__ import annotations

import sys
from pathlib import Path


def run(path: Path | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Keypose Studio")
    session = None
    if path is not None:
        session = Session.open(path)     # a bad project is refused before any window opens
    window = MainWindow(session)
    from studio.ui.qt_layout import fit_to_screen
    fit_to_screen(window)
    window.show()
    return int(app.exec())
