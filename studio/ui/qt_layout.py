"""Where the docks sit, kept per user: saved to the user's config when a project
closes, restored when the next one opens, and reset to the studio's default
(View › Reset layout). The default fits 1280×720: the docks of one side share
tabs rather than splitting a short column into rows nobody can read."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSettings, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

LAYOUT_VERSION = 3          # bump when the docks change, so an old saved layout is not forced on new docks


def layout_file() -> Path:
    """The per-user layout file, beside the user's other Keypose settings."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "keypose-studio" / "layout.ini"


def _settings() -> QSettings:
    return QSettings(str(layout_file()), QSettings.Format.IniFormat)


def save_layout(window: QMainWindow) -> None:
    s = _settings()
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/docks", window.saveState(LAYOUT_VERSION))
    s.sync()


def restore_layout(window: QMainWindow) -> bool:
    """Put the docks where this user left them; False if nothing (readable) was saved."""
    s = _settings()
    docks = s.value("window/docks")
    if not isinstance(docks, QByteArray) or docks.isEmpty():
        return False
    return bool(window.restoreState(docks, LAYOUT_VERSION))


def restore_geometry(window: QMainWindow) -> bool:
    geometry = _settings().value("window/geometry")
    return isinstance(geometry, QByteArray) and not geometry.isEmpty() and bool(window.restoreGeometry(geometry))


def tabify_side(window: QMainWindow, docks: list[QDockWidget]) -> None:
    """Stack the docks of one side as tabs, the first one in front."""
    for d in docks[1:]:
        window.tabifyDockWidget(docks[0], d)
    if docks:
        docks[0].raise_()


SIDE_SHARE = (0.21, 0.27)    # of the window's width, left and right docks: the 3D view keeps over half


def side_widths(window: QMainWindow, left: QDockWidget | None, right: QDockWidget | None) -> None:
    """The side columns' default widths, so the 3D view is at least half the window wide."""
    docks = [d for d in (left, right) if d is not None]
    shares = [s for d, s in zip((left, right), SIDE_SHARE) if d is not None]
    if docks:
        window.resizeDocks(docks, [int(window.width() * s) for s in shares], Qt.Orientation.Horizontal)


def fit_to_screen(window: QMainWindow, screen: QRect | None = None, wanted: tuple[int, int] = (1400, 900)) -> None:
    """Open where this user left the window, else at `wanted` size; never larger than the screen
    (a 1280x800 display otherwise cuts off the right-hand docks' columns)."""
    if screen is None:
        handle = window.screen()
        screen = handle.availableGeometry() if handle is not None else QRect(0, 0, *wanted)
    if not restore_geometry(window):
        window.resize(min(wanted[0], screen.width()), min(wanted[1], screen.height()))
    g = window.frameGeometry()
    w, h = min(window.width(), screen.width()), min(window.height(), screen.height())
    if (w, h) != (window.width(), window.height()):
        window.resize(w, h)
    if not screen.contains(window.frameGeometry()):
        window.move(screen.left() + max(0, min(g.left() - screen.left(), screen.width() - window.frameGeometry().width())),
                    screen.top() + max(0, min(g.top() - screen.top(), screen.height() - window.frameGeometry().height())))
