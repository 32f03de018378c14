"""A progress bar moved without painting at once.

`QProgressBar.setValue` repaints the bar there and then whenever its pixels
change; with the 3D view in the window every paint is a frame of the whole
window composed in OpenGL, so a bar fed by a job's progress lines painted the
window once per line. `show_progress` sets the value and the words with the
bar's updates off, so the change is drawn with the window's next paint, and
touches nothing when neither changed."""
from __future__ import annotations

from PySide6.QtWidgets import QProgressBar


def show_progress(bar: QProgressBar, value: int, text: str | None = None) -> None:
    if bar.value() == value and (text is None or bar.format() == text):
        return
    bar.setUpdatesEnabled(False)
    try:
        if text is not None and bar.format() != text:
            bar.setFormat(text)
        bar.setValue(value)
    finally:
        bar.setUpdatesEnabled(True)          # one update, with the rest of the window's
