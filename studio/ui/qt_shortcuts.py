"""Help › Keyboard shortcuts: every key the window answers to, read from the
window's own actions and shortcuts, so the list cannot drift from the keys."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)


def window_shortcuts(window: QWidget) -> list[tuple[str, str, str]]:
    """(menu or place, what it does, keys) for every action and shortcut of the window."""
    rows = []
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is None:
            continue
        for act in menu.actions():
            keys = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys and not act.isSeparator():
                rows.append((menu_action.text().replace("&", ""), act.text().replace("&", ""), keys))
    for sc in window.findChildren(QShortcut):
        keys = sc.key().toString(QKeySequence.SequenceFormat.NativeText)
        if keys and sc.isEnabled():
            rows.append((type(sc.parent()).__name__.removeprefix("Qt"), sc.whatsThis() or "", keys))
    for act in window.findChildren(QAction):       # actions living on widgets, not in menus
        keys = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if keys and not any(r[2] == keys for r in rows):
            rows.append((type(act.parent()).__name__.removeprefix("Qt"), act.text().replace("&", ""), keys))
    return rows


class QtShortcuts(QDialog):
    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = window_shortcuts(window)
        self.table = QTableWidget(len(self.rows), 3)
        self.table.setHorizontalHeaderLabels(["where", "what", "keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for i, row in enumerate(self.rows):
            for j, value in enumerate(row):
                self.table.setItem(i, j, QTableWidgetItem(value))
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.resizeColumnsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(buttons)
        self.resize(560, 520)
