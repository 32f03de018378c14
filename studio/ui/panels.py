"""The docks beyond the viewport and storyboard, each made by its own module
(title, dock area, factory(window) -> widget or None when its model is absent)."""
from __future__ import annotations

from PySide6.QtCore import Qt

LEFT, RIGHT, BOTTOM = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                       Qt.DockWidgetArea.BottomDockWidgetArea)


def _checks(win):
    from studio.ui.qt_checks import QtChecks
    return QtChecks(win.qsession, win.playhead)


def _plan(win):
    from studio.ui.qt_plan import QtPlan
    return QtPlan(win.qsession, lambda: win.panels.get("Jobs"), lambda: win.stack)


def _jobs(win):
    from studio.ui.qt_jobs import QtJobs
    return QtJobs(win.qsession, win.playhead)


def _repair(win):
    from studio.ui.qt_repair import QtRepair
    return QtRepair(win.qsession, win.playhead, win.viewport, lambda: win.stack)


def _pose(win):
    from studio.ui.qt_pose import QtPose
    return QtPose(win.qsession, win.playhead, lambda: win.stack)


def _history(win):
    from studio.ui.qt_history import QtHistory
    return QtHistory(win.qsession, win.playhead)


def _build(win):
    from studio.ui.qt_build import QtBuild
    return QtBuild(win.qsession, win.playhead, win.viewport, lambda: win.stack)


def _motion(win):
    from studio.ui.qt_motion import QtMotion
    return QtMotion(win.qsession, win.playhead, win.viewport, lambda: win.stack, lambda: win.panels.get("Jobs"))


def _notes(win):
    from studio.ui.qt_notes import QtNotes
    return QtNotes(win.qsession, win.playhead, win.viewport, lambda: win.stack)


def optional_panels():
    return [("Checks", RIGHT, _checks), ("Repair review", RIGHT, _repair), ("Notes", RIGHT, _notes),
            ("Plan", LEFT, _plan), ("Scene", LEFT, _build), ("Pose", LEFT, _pose), ("Motion", LEFT, _motion),
            ("Jobs", BOTTOM, _jobs), ("History", BOTTOM, _history)]


VTK_MODULES = ("vtkCommonComputationalGeometry", "vtkInteractionWidgets", "vtkViewsContext2D", "vtkViewsCore")
MODULES = ("qt_checks", "qt_plan", "qt_jobs", "qt_repair", "qt_pose", "qt_history", "qt_build", "qt_motion",
           "qt_notes")


def preload() -> None:
    """Import the panels' modules on a thread of their own, so the first File › Open does not
    wait for them (Python's import lock makes an open meanwhile wait only for what is left)."""
    import importlib
    import threading

    def load() -> None:
        for name in MODULES:
            importlib.import_module(f"studio.ui.{name}")
        from studio.timeline.motion import motion_tools
        motion_tools()                  # the Motion dock lists every tool's form
        for name in VTK_MODULES:        # what pyvista loads when the viewport's interactor is made
            importlib.import_module(f"vtkmodules.{name}")
        importlib.import_module("studio.agent.steps")      # the Plan dock's agent status
        from studio.ui.qt_manipulator import handle_meshes
        handle_meshes()                 # the drag handles' meshes (VTK sources, no drawing)
    threading.Thread(target=load, name="preload-panels", daemon=True).start()

