"""File › Export… and the Jobs panel's Export button: choose a folder, ask the
gate (studio/ui/export.py), and either queue the film and .blend jobs or show
why not, with "Export with exceptions". The jobs run like any other in the
Jobs panel; this view only learns of their end from the session's refreshes."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from studio.jobs.deliver import DeliveryError
from studio.store.settings import load_settings

from studio.ui.export import Export, finish_export, plan_export, queue_blend_check, submit_export
from studio.ui.failures import refusal_text
from studio.ui.verdict import Verdict
from studio.ui.qt_session import QtSession

EXCEPTIONS_TEXT = "Export with exceptions"


class QtExport(QObject):
    message = Signal(str)

    def __init__(self, qsession: QtSession, start_job, parent: QWidget):
        super().__init__(parent)
        self.session, self.start_job, self.window = qsession.session, start_job, parent
        self.pending: list[Export] = []
        self.refusal: QMessageBox | None = None        # the open "export refused" dialog, if any
        qsession.jobs_changed.connect(self._check_done)

    def choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.window, "Export the film into a folder")
        if folder:
            self.export_to(Path(folder))

    def export_to(self, folder: Path) -> Export | None:
        """Queue the export, or open the refusal dialog while the storyboard or the required checks do not pass."""
        try:
            export = plan_export(self.session.project, folder)
        except (DeliveryError, ValueError) as e:
            self.message.emit(str(e))
            return None
        if export.refused:
            self._refuse(export)
        else:
            self._submit(export)
        return export

    def _refuse(self, export: Export) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "Export refused",
                          "The storyboard or the required checks do not pass on this film:", parent=self.window)
        step = Verdict(False, export.failing, self.session.verdict.film).next_step()   # the gate's reasons now
        box.setInformativeText(refusal_text(self.session.failures, export.failing, step)
                               + f"\n\n{EXCEPTIONS_TEXT} delivers it with a delivery report beside the outputs.")
        accept = box.addButton(EXCEPTIONS_TEXT, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered(_result) -> None:
            self.refusal = None
            if box.clickedButton() is accept:
                export.with_exceptions = True
                self._submit(export)
            else:
                self.message.emit("export cancelled: " + "; ".join(export.failing))
            box.deleteLater()
        box.finished.connect(answered)
        self.refusal = box
        box.open()                      # window-modal, not a nested event loop

    def _submit(self, export: Export) -> None:
        try:
            jobs = submit_export(self.session.project, export, load_settings())
        except Exception as e:          # e.g. no camera, nothing baked: say why, queue nothing
            self.message.emit(str(e))
            return
        self.pending.append(export)
        for job_id in jobs:
            self.start_job(job_id)
        self.message.emit(f"exporting into {export.folder} (jobs {', '.join(map(str, jobs))})")

    def _check_done(self) -> None:
        for export in list(self.pending):
            try:
                check = queue_blend_check(self.session.project, export)
            except Exception as e:      # e.g. the .blend job's folder was removed: say why, stop waiting
                self.pending.remove(export)
                self.message.emit(f"export failed: cannot check {export.blend}: {e}")
                continue
            if check is not None:
                self.start_job(check)
            text = finish_export(self.session.project, export)
            if text is not None:
                self.pending.remove(export)
                self.message.emit(text)
