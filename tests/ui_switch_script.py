"""A person's session in the real application, run as its own process by
test_ui_switch: open projects one after another (File › Open), open and close
Settings in between, scrub each, close the window. Prints one line per step."""
from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialog

from studio.ui.main_window import MainWindow


def main(folders: list[str]) -> int:
    app = QApplication(sys.argv[:1])
    win = MainWindow()
    win.show()

    def close_dialogs() -> None:
        for d in app.topLevelWidgets():
            if isinstance(d, QDialog) and d.isVisible():
                d.reject()

    def settings() -> None:
        QTimer.singleShot(150, close_dialogs)
        win.show_settings()
        print("settings closed", flush=True)

    def step(i: int = 0) -> None:
        if i == len(folders):
            settings()
            QTimer.singleShot(200, win.close)
            return
        ok = win.open_project(Path(folders[i]))
        win.playhead.set_frame(win.playhead.first + 5)
        win.playhead.set_playing(True)
        app.processEvents()
        print(f"opened {Path(folders[i]).name} {ok} frame {win.playhead.frame}", flush=True)
        if i % 2:
            settings()
        QTimer.singleShot(250, lambda: step(i + 1))

    QTimer.singleShot(50, step)
    rc = app.exec()
    print("exit", rc, flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
