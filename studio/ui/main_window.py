"""The studio window: the viewport and scrubber in the middle, the storyboard
below, the plan on the left, checks and repair review on the right, jobs at
the bottom; Edit › Undo/Redo name the command they will undo; the project's
progress is always in the status bar. The window wires views to models and
holds no pipeline logic."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QSplitter,
                               QWidget)

from studio.timeline.commands import CommandStack

from studio.ui.panels import optional_panels, preload
from studio.ui.qt_layout import LAYOUT_VERSION, restore_layout, save_layout, side_widths, tabify_side
from studio.ui.qt_manipulator import Manipulator
from studio.ui.playhead import Playhead
from studio.ui.progress import coverage_tip, progress_text
from studio.ui.qt_scrubber import QtScrubber
from studio.ui.qt_session import QtSession
from studio.ui.qt_storyboard import QtStoryboard
from studio.ui.qt_viewport import QtViewport
from studio.ui.session import Session
from studio.ui.worker import collect_on_gui_thread, release_collector


class MainWindow(QMainWindow):
    def __init__(self, session: Session | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keypose Studio")
        self.resize(1400, 900)
        self.stack = CommandStack()
        self.session: Session | None = None
        self.qsession: QtSession | None = None
        self.playhead = Playhead()
        self.progress = QLabel("no project")
        self.statusBar().addPermanentWidget(self.progress)
        self._views: list[QWidget] = []
        self._docks: list[QDockWidget] = []
        self._default_state = None
        collect_on_gui_thread()
        self._collecting = True
        self._build_menus()
        self.stack.subscribe(self._on_stack)
        self._on_stack("", None)
        if session is not None:
            self.show_session(session)
        else:
            preload()
            hint = QLabel("File › Open Project… to open a project folder.")
            hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.setCentralWidget(hint)

    # ---- menus -----------------------------------------------------------
    def _build_menus(self) -> None:
        mb = self.menuBar()
        file = mb.addMenu("&File")
        act = QAction("&Open Project…", self)      # made here, not looked up by address (a reused one read as another type)
        file.addAction(act)
        act.setShortcut(QKeySequence.StandardKey.Open)
        act.triggered.connect(self.choose_project)
        self.export_action = file.addAction("&Export…")
        self.export_action.setEnabled(False)
        self.export_action.triggered.connect(self.export_film)
        self.settings_action = file.addAction("&Settings…")
        self.settings_action.triggered.connect(self.show_settings)
        file.addSeparator()
        act = file.addAction("&Quit")
        act.setShortcut(QKeySequence.StandardKey.Quit)
        act.triggered.connect(self.close)
        edit = mb.addMenu("&Edit")
        self.undo_action = QAction("Undo", self)
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.undo_action.triggered.connect(self.undo)
        self.redo_action = QAction("Redo", self)
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.redo_action.triggered.connect(self.redo)
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)
        scene = mb.addMenu("&Scene")
        self.add_character_action = scene.addAction("Add &character…")
        self.add_character_action.setEnabled(False)
        self.add_character_action.triggered.connect(self.add_character)
        play = mb.addMenu("&Playback")
        for text, keys, fn in (
                ("Play / Pause", "Space", lambda: self.playhead.set_playing(not self.playhead.playing)),
                ("Shuttle backwards (J: faster each press)", "J", lambda: self.playhead.shuttle(-1)),
                ("Stop (K)", "K", lambda: self.playhead.shuttle(0)),
                ("Shuttle forwards (L: faster each press)", "L", lambda: self.playhead.shuttle(+1)),
                (None, None, None),
                ("Previous frame", ",", lambda: self.playhead.step(-1)),
                ("Next frame", ".", lambda: self.playhead.step(1)),
                ("First frame (in)", "Home", lambda: self.playhead.home()),
                ("Last frame (out)", "End", lambda: self.playhead.end()),
                ("Previous key", "[", lambda: self._scrubber_call("goto_key", -1)),
                ("Next key", "]", lambda: self._scrubber_call("goto_key", +1)),
                ("Previous failure", "Ctrl+[", lambda: self._scrubber_call("goto_pin", -1)),
                ("Next failure", "Ctrl+]", lambda: self._scrubber_call("goto_pin", +1)),
                (None, None, None),
                ("Mark in", "Shift+I", lambda: self._guarded_in_out(self.playhead.mark_in)),
                ("Mark out", "Shift+O", lambda: self._guarded_in_out(self.playhead.mark_out)),
                ("Clear in/out", "Alt+X", lambda: self.playhead.clear_in_out())):
            if text is None:
                play.addSeparator()
                continue
            act = play.addAction(text)
            act.setShortcut(QKeySequence(keys))
            # the window's keys, wherever focus is in it (floating docks included); a text field
            # still takes the letters it types, and the frame box lets the transport keys through
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(fn)
        self.view_menu = mb.addMenu("&View")
        self.compare_action = self.view_menu.addAction("Compare two key states…")
        self.compare_action.setEnabled(False)
        self.compare_action.triggered.connect(lambda: self.compare_states())
        self.flipbook_action = self.view_menu.addAction("Flipbook of the latest render…")
        self.flipbook_action.triggered.connect(self.open_flipbook)
        self.reset_layout_action = QAction("Reset layout", self)
        self.reset_layout_action.triggered.connect(self.reset_layout)
        self.view_menu.addAction(self.reset_layout_action)
        self.view_menu.addSeparator()
        help_menu = mb.addMenu("&Help")
        act = help_menu.addAction("&Keyboard shortcuts")
        act.setShortcut(QKeySequence("F1"))
        act.triggered.connect(self.show_shortcuts)

    def _on_stack(self, _event, _cmd) -> None:
        self.undo_action.setText(self.stack.undo_label or "Undo")
        self.redo_action.setText(self.stack.redo_label or "Redo")
        self.undo_action.setEnabled(self.stack.can_undo)
        self.redo_action.setEnabled(self.stack.can_redo)

    def undo(self) -> None:
        self._guarded(self.stack.undo, "Undone")

    def redo(self) -> None:
        self._guarded(self.stack.redo, "Redone")

    def _scrubber_call(self, name: str, direction: int) -> None:
        scrubber = getattr(self, "scrubber", None)
        if self.session is not None and scrubber is not None:
            if not getattr(scrubber, name)(direction):
                what = "key" if name == "goto_key" else "failure"
                self.statusBar().showMessage(f"no {what} {'after' if direction > 0 else 'before'} "
                                             f"frame {self.playhead.frame}", 4000)

    def _guarded_in_out(self, fn) -> None:
        try:
            fn()
        except ValueError as e:
            self.statusBar().showMessage(str(e), 8000)

    def show_shortcuts(self) -> None:
        from studio.ui.qt_shortcuts import QtShortcuts
        dialog = QtShortcuts(self)
        try:
            dialog.exec()
        finally:
            dialog.setParent(None)
            dialog.deleteLater()

    def reset_layout(self) -> None:
        """The studio's own arrangement of the docks, every dock shown."""
        if self._default_state is not None:
            self.restoreState(self._default_state, LAYOUT_VERSION)
            for dock in self._docks:
                dock.show()
            side_widths(self, *self._sides)

    def showEvent(self, e) -> None:      # noqa: N802 (Qt's name)
        super().showEvent(e)
        if getattr(self, "_fresh_layout", False):      # the default side widths, at the window's real size
            self._fresh_layout = False
            side_widths(self, *self._sides)

    def _guarded(self, fn, done: str = "") -> None:
        try:
            cmd = fn()
        except (ValueError, KeyError) as e:
            self.statusBar().showMessage(str(e), 8000)
            return
        if cmd is not None:
            self.statusBar().showMessage(f"{done}: {cmd.label}" if done else cmd.label, 6000)

    # ---- the project -----------------------------------------------------
    def choose_project(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a Keypose project folder")
        if path:
            self.open_project(Path(path))

    def open_project(self, path: Path) -> bool:
        try:
            session = Session.open(path, read=False)     # read on a worker: the window stays live
        except Exception as e:     # a project that cannot be opened: say why, keep the current one
            QMessageBox.warning(self, "Cannot open project", str(e))
            return False
        self.show_session(session)
        return True

    def show_session(self, session: Session) -> None:
        self._close_session()
        self.session = session
        self.add_character_action.setEnabled(True)
        self.stack = CommandStack()          # undo history belongs to one project
        self.stack.subscribe(self._on_stack)
        self._on_stack("", None)
        self.qsession = QtSession(session, self)
        self.playhead = Playhead()           # the views of this project listen to this one only
        self.setWindowTitle(f"Keypose Studio — {session.project.name}")
        self.playhead.fps = session.project.fps
        self.playhead.set_range(*session.frame_range())
        self.playhead.set_frame(self.playhead.first)
        self.viewport = QtViewport(self.qsession, self.playhead)
        self.scrubber = QtScrubber(self.qsession, self.playhead)
        self.scrubber.bar.key_moved.connect(self.move_key)
        self.manipulator = Manipulator(self.viewport, lambda: self.stack)
        self.manipulator.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        centre = QSplitter(Qt.Orientation.Vertical)
        centre.addWidget(self.viewport)
        centre.addWidget(self.scrubber)
        centre.setStretchFactor(0, 1)
        self.setCentralWidget(centre)
        self.storyboard = QtStoryboard(self.qsession, self.playhead, self.stack)
        self.storyboard.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        board = self._dock("Storyboard", self.storyboard, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.panels = {}
        sides: dict = {Qt.DockWidgetArea.BottomDockWidgetArea: [board]}
        for title, area, make in optional_panels():
            panel = make(self)
            if panel is not None:
                self.panels[title] = panel
                if hasattr(panel, "message"):
                    panel.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
                sides.setdefault(area, []).append(self._dock(title, panel, area))
        for docks in sides.values():           # one column of tabs per side: readable at 1280x720
            tabify_side(self, docks)
        self.layout().activate()               # the minimum size of tabs, not of the docks stacked as added
        self.resizeDocks([board], [250], Qt.Orientation.Vertical)   # the viewport keeps most of the height
        self._sides = (sides.get(Qt.DockWidgetArea.LeftDockWidgetArea, [None])[0],
                       sides.get(Qt.DockWidgetArea.RightDockWidgetArea, [None])[0])
        self._default_state = self.saveState(LAYOUT_VERSION)
        self._fresh_layout = not restore_layout(self)
        if self._fresh_layout and self.isVisible():
            side_widths(self, *self._sides)
        if "Pose" in self.panels:
            self.manipulator.previewed.connect(self.panels["Pose"].show_preview)
        if "Motion" in self.panels:             # a segment picked on the timeline shows in the Motion dock
            self.scrubber.bar.segment_clicked.connect(self.panels["Motion"].select_segment)
            self.scrubber.bar.segment_clicked.connect(lambda _s: self._raise_dock("Motion"))
        self.export_action.setEnabled("Jobs" in self.panels)
        self._views = [self.viewport, self.scrubber, self.storyboard, *self.panels.values()]
        self.qsession.changed.connect(self._on_changed)
        self.qsession.read_failed.connect(lambda m: self.statusBar().showMessage(m, 10000))
        if "Checks" in self.panels:           # "verifying…" in the status bar while the dock verifies
            self.panels["Checks"].verifying_changed.connect(self._on_changed)
        self._on_changed()

    def _raise_dock(self, title: str) -> None:
        dock = next((d for d in self._docks if d.windowTitle() == title), None)
        if dock is not None:
            dock.show()
            dock.raise_()

    def _dock(self, title: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.view_menu.addAction(dock.toggleViewAction())
        self._docks.append(dock)
        return dock

    def _on_changed(self) -> None:
        s = self.session
        self.compare_action.setEnabled(len(s.states) >= 2)
        self.playhead.set_range(*s.frame_range())
        checks = self.panels.get("Checks")
        self.progress.setText(progress_text(s, verifying=bool(checks and checks.verifying)))
        self.progress.setToolTip(coverage_tip(s))

    def add_character(self) -> None:
        """A robot or a skinned character from the library or a file (the import_character tool call)."""
        if self.session is None:
            return
        from studio.ui.qt_characters import QtAddCharacter
        dialog = QtAddCharacter(self.session, self.stack, self)
        dialog.added.connect(lambda name: self.statusBar().showMessage(f"Added character {name}", 6000))
        self._character_dialog = dialog
        dialog.open()

    def export_film(self) -> None:
        """The film and its .blend into a chosen folder, through the Jobs panel (gate first)."""
        jobs = getattr(self, "panels", {}).get("Jobs")
        if jobs is not None:
            jobs.exporter.choose()

    def open_flipbook(self) -> None:
        """The newest finished render's video and stills, in the flipbook (through the Jobs panel)."""
        jobs = getattr(self, "panels", {}).get("Jobs")
        if jobs is not None:
            jobs.open_flipbook()

    def move_key(self, state_id: str, frame: int) -> None:
        """A key dragged along the ruler: one set_state call on the window's stack."""
        from studio.ui import keying
        try:
            keying.move_key(self.session, self.stack, state_id, frame)
        except ValueError as e:
            self.statusBar().showMessage(str(e), 8000)
            return
        self.session.refresh()
        self.statusBar().showMessage(f"Moved {state_id} to frame {frame}", 6000)

    def compare_states(self, a: str | None = None, b: str | None = None, modal: bool = True):
        """State A and state B side by side in two synced views (A: the key at the playhead)."""
        if self.session is None or len(self.session.states) < 2:
            self.statusBar().showMessage("Compare needs two key states.", 6000)
            return None
        from studio.ui.qt_compare import QtCompare
        held = self.session.state_at(self.playhead.frame)
        dialog = QtCompare(self.session, a or (held.id if held else None), b, self)
        if not modal:
            return dialog
        try:
            dialog.exec()
        finally:
            dialog.setParent(None)
            dialog.deleteLater()
        return None

    def show_settings(self) -> None:
        from studio.ui.qt_settings import QtSettings
        dialog = QtSettings(self)
        try:
            dialog.exec()
        finally:                 # a dialog left as the window's child is deleted twice at quit
            dialog.setParent(None)
            dialog.deleteLater()

    def _close_session(self) -> None:
        if self.session is None:
            return
        save_layout(self)
        self.playhead.set_playing(False)
        self.export_action.setEnabled(False)
        self.manipulator.detach()
        for view in self._views:
            closer = getattr(view, "close_view", None) or getattr(view, "close_viewport", None)
            if closer:
                closer()
        for dock in self._docks:
            self.removeDockWidget(dock)
            self.view_menu.removeAction(dock.toggleViewAction())
            dock.deleteLater()
        self._docks.clear()
        self.playhead.close()
        self.qsession.detach()
        self.qsession.setParent(None)        # the window's child otherwise: it and its session live on
        self.qsession.deleteLater()
        self.session.close()
        self.session = None

    def closeEvent(self, e) -> None:
        self._close_session()
        super().closeEvent(e)
        if self._collecting:
            self._collecting = False
            release_collector()
