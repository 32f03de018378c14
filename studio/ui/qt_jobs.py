"""The job panel: queued and running jobs with progress bars; cancel, resume
or retry; the log of the selected job; and "open output" for its stills,
videos and .blend files. Jobs run in worker processes through the jobs
package's local runner, so the window stays responsive while a film renders;
the panel learns of their progress from the database (the session polls it)."""
from __future__ import annotations

import json
import time
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QPlainTextEdit, QProgressBar, QPushButton, QSplitter,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from studio.jobs import queue
from studio.jobs.bake_spec import OFFERED, bake_spec
from studio.jobs.local import LocalRunner
from studio.jobs.spec import still_spec, video_spec
from studio.store.project import Project
from studio.timeline.gate import parse_segment
from studio.timeline.plan import plan_segments
from studio.timeline.storyboard import get_state

from studio.ui.qt_bar import show_progress
from studio.ui.flipbook import RENDERS, ReelError, comparable_renders, job_reels, latest_render, video_reel
from studio.ui.job_log import log_sentences
from studio.ui.job_progress import eta_text
from studio.ui.qt_export import QtExport
from studio.ui.qt_flipbook import QtFlipbook
from studio.ui.qt_session import QtSession
from studio.ui.worker import Worker

COLUMNS = ("job", "kind", "state", "progress", "attempts", "error")


def cancel(path, job_id, runner, state) -> str:
    """Cancel on a worker thread: stopping a Blender process may take a few seconds."""
    runner.cancel(job_id)
    return f"job {job_id} cancelled"


def job_line(job: queue.Job) -> str:
    """The job's kind, and for a film render the frames it covers."""
    spec = job.spec or {}
    if "video" in spec and "frame_start" in spec:
        return f"{job.kind} {spec['frame_start']}–{spec['frame_end']}"
    return job.kind


def output_paths(project: Project, job: queue.Job) -> list[Path]:
    """Files a person may open: delivered copies first (renders/, exports/), then the job folder's."""
    folder = queue.job_dir(project, job.id)
    deliver = job.spec.get("deliver") or {}
    out: list[Path] = []
    for rel, dest in deliver.items():
        p = project.path / dest if not Path(dest).is_absolute() else Path(dest)
        if p.exists():
            out.append(p)
        elif (folder / rel).exists():
            out.append(folder / rel)
    kinds = (".mp4", ".blend") if out else (".png", ".mp4", ".blend", ".jpg", ".exr")
    for rel in job.outputs:     # undelivered files; frames only when nothing was delivered
        p = folder / rel
        if rel not in deliver and p.suffix in kinds and p.exists():
            out.append(p)
    return out[:200]


def offered_end(project: Project, job: queue.Job | None) -> dict | None:
    """The simulation end a refused bake job offers (kept in its folder), or None: none once the state
    holds it already (adopted)."""
    if job is None or job.kind != "bake" or job.state == "succeeded":
        return None
    path = queue.job_dir(project, job.id) / OFFERED
    try:
        offer = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(offer, dict) or not {"segment", "state", "worst", "differences", "pose"} <= set(offer):
        return None
    state = get_state(project, offer["state"])
    roots = (offer["pose"] or {}).get("roots", {})
    held = state.pose.roots if state is not None else {}
    if all(b in held and b in roots and max(abs(x - y) for x, y in zip(held[b], roots[b])) < 1e-9
           for b in offer["differences"]):
        return None
    return offer


def ready_segments(session) -> list[str]:
    """Plan segments whose two states the storyboard shows approved, passing and current (the
    session's board, read on a worker; the bake job asks the gate again before it bakes)."""
    ok = {c.state_id for c in session.cards if c.status == "approved"}
    return [seg for seg in plan_segments(session.plan) if all(s in ok for s in parse_segment(seg))] \
        if session.plan else []


class QtJobs(QWidget):
    message = Signal(str)

    def __init__(self, qsession: QtSession, playhead=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead = qsession.session, playhead      # the playhead's in/out bounds a preview
        self.runner: LocalRunner | None = None
        self._workers: list[Worker] = []
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.log = QPlainTextEdit()            # the job's log as sentences
        self.log.setReadOnly(True)
        self.details = QPlainTextEdit()        # the raw log: hashes, paths, traces
        self.details.setReadOnly(True)
        self.details.hide()
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        self.details_button.toggled.connect(self.details.setVisible)
        self._paces: dict[int, tuple[float, float]] = {}     # job -> (when first seen running, progress then)
        self.outputs = QComboBox()
        self.outputs.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.outputs.setMinimumContentsLength(12)     # a long file name does not widen the window
        self.bake_button = QPushButton("Bake motion")
        self.stills_button = QPushButton("Render stills")
        self.preview_button = QPushButton("Render preview")
        self.cancel_button = QPushButton("Cancel")
        self.resume_button = QPushButton("Resume / Retry")
        self.open_button = QPushButton("Open output")
        self.export_button = QPushButton("Export…")
        self.flipbook_button = QPushButton("Flipbook")
        self.adopt_button = QPushButton("Adopt end state")
        self.adopt_button.setToolTip("The selected bake was refused because its simulation ends away from the "
                                     "second key state: make that state the run's own end (then review it)")
        self.adopt_button.clicked.connect(self.adopt_end_state)
        self.flipbook_button.setToolTip("Play the selected render's video and step through its stills")
        self.flipbook_button.clicked.connect(lambda: self.open_flipbook(self.selected_id()))
        self.flipbook = None
        self.exporter = QtExport(qsession, self._start_export_job, self)
        self.exporter.message.connect(self.message)
        self.export_button.clicked.connect(self.exporter.choose)
        self.bake_button.clicked.connect(self.bake_motion)
        self.stills_button.clicked.connect(self.render_stills)
        self.preview_button.clicked.connect(self.render_preview)
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.resume_button.clicked.connect(self.resume_selected)
        self.open_button.clicked.connect(self.open_output)
        bar = QHBoxLayout()
        for w in (self.bake_button, self.stills_button, self.preview_button, self.export_button, self.cancel_button,
                  self.resume_button, self.adopt_button, self.outputs, self.open_button, self.flipbook_button,
                  self.details_button):
            bar.addWidget(w)
        bar.addStretch(1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(self.log)
        split.addWidget(self.details)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addWidget(split)
        qsession.jobs_changed.connect(self.reload)
        self.reload()

    # ---- showing ---------------------------------------------------------
    def jobs(self) -> list[queue.Job]:
        return queue.list_jobs(self.session.project)

    def reload(self) -> None:
        selected = self.selected_id()
        jobs = self.jobs()
        self.table.blockSignals(True)
        self.table.setRowCount(len(jobs))
        for i, job in enumerate(jobs):
            for j, value in enumerate((str(job.id), job_line(job), job.state, None, str(job.attempts),
                                       job.error.splitlines()[0] if job.error else "")):
                if j == 3:
                    self._show_progress(i, job)
                    continue
                item = self.table.item(i, j)
                if item is not None and item.text() == value and item.data(Qt.ItemDataRole.UserRole) == job.id:
                    continue                    # as it was: setting it again re-lays the table out
                item = QTableWidgetItem(value)
                item.setData(Qt.ItemDataRole.UserRole, job.id)
                self.table.setItem(i, j, item)
            if job.id == selected:
                self.table.selectRow(i)
        self.table.resizeColumnToContents(1)        # "preview 1010–1014" on one line
        self.table.blockSignals(False)
        self._show_selected()

    def _show_progress(self, row: int, job: queue.Job) -> None:
        """The row's progress bar, drawn with the window's next paint."""
        bar = self.table.cellWidget(row, 3)
        if bar is None:
            bar = QProgressBar()
            bar.setRange(0, 1000)
            self.table.setCellWidget(row, 3, bar)
        show_progress(bar, round(1000 * job.progress), self._progress_text(job))

    def _progress_text(self, job: queue.Job) -> str:
        """Percent done, and while running the time left at the pace seen so far."""
        text = f"{job.progress:.0%}"
        if job.state != "running":
            self._paces.pop(job.id, None)
            return text
        t0, p0 = self._paces.setdefault(job.id, (time.monotonic(), job.progress))
        done = job.progress - p0
        if done > 0.02:
            text += f", {eta_text((time.monotonic() - t0) * (1 - job.progress) / done)}"
        return text

    def selected_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        return int(item.text()) if item else None

    def select_job(self, job_id: int) -> None:
        for i in range(self.table.rowCount()):
            if self.table.item(i, 0) and int(self.table.item(i, 0).text()) == job_id:
                self.table.selectRow(i)

    def _show_selected(self) -> None:
        job_id = self.selected_id()
        job = None
        if job_id is not None:
            try:
                job = queue.get_job(self.session.project, job_id)
            except queue.JobError:
                job = None
        self.cancel_button.setEnabled(job is not None and not job.finished)
        self.resume_button.setEnabled(job is not None and job.state in queue.RESUMABLE)
        self.outputs.clear()
        self.flipbook_button.setEnabled(job is not None and job.state == "succeeded" and job.kind in RENDERS)
        offer = offered_end(self.session.project, job)
        self.adopt_button.setVisible(offer is not None)
        if offer is not None:
            worst = offer["differences"][offer["worst"]]
            self.adopt_button.setText(f"Adopt end state as {offer['state']}")
            self.adopt_button.setToolTip(f"{offer['segment']}: the simulation ends away from {offer['state']}, "
                                         f"furthest at {offer['worst']} ({worst['metres']:.3f} m, "
                                         f"{worst['radians']:.3f} rad). Make {offer['state']} the run's own end "
                                         f"(a tool call, in a job); then review it.")
        if job is None:
            self.log.setPlainText("")
            self.details.setPlainText("")
            self.open_button.setEnabled(False)
            return
        logfile = queue.job_dir(self.session.project, job.id) / "log.txt"
        raw = logfile.read_text(errors="replace")[-20000:] if logfile.exists() else job.log
        lines = log_sentences(raw)
        head = f"job {job.id} ({job_line(job)}) {job.state}" + (f": {job.error.splitlines()[0]}" if job.error else "")
        text = "\n".join([head, ""] + lines)
        for pane, value in ((self.log, text), (self.details, raw)):
            if pane.toPlainText() != value:
                pane.setPlainText(value)
                pane.verticalScrollBar().setValue(pane.verticalScrollBar().maximum())
        for p in output_paths(self.session.project, job):
            self.outputs.addItem(p.name, str(p))
        self.open_button.setEnabled(self.outputs.count() > 0)

    # ---- acting ----------------------------------------------------------
    def _runner(self) -> LocalRunner:
        if self.runner is None:
            self.runner = LocalRunner(self.session.project.path)
        return self.runner

    def start(self, job_id: int) -> None:
        self._runner().start(job_id)
        self.message.emit(f"job {job_id} started")

    def _start_export_job(self, job_id: int) -> None:
        self.start(job_id)
        self.reload()
        self.select_job(job_id)

    def bake_motion(self) -> int | None:
        """Every plan segment whose two states are approved, baked in a job process by the
        motion tool its plan entry names."""
        segments = ready_segments(self.session)
        if not segments:
            self.message.emit("nothing to bake: no plan segment has both its states approved, passing and current")
            return None
        return self.submit("bake", lambda d: bake_spec(self.session.project, d, segments))

    def adopt_end_state(self) -> int | None:
        """Adopt the simulation end the selected bake job offered, in a bake job of its own (the
        simulation runs off the window's thread), as the adopt_end_state tool call."""
        job_id = self.selected_id()
        job = queue.get_job(self.session.project, job_id) if job_id is not None else None
        offer = offered_end(self.session.project, job)
        if offer is None:
            self.message.emit("the selected job offers no simulation end state to adopt")
            return None
        return self.submit("bake", lambda d: bake_spec(self.session.project, d, [offer["segment"]], adopt_end=True))

    def render_stills(self) -> None:
        """Every state through every camera; the stills land on the storyboard cards."""
        self.submit("still", lambda d: still_spec(self.session.project, d))

    def render_preview(self) -> int | None:
        """The baked film through the shots' cameras with Workbench, as an MP4 in renders/; only
        the playhead's in/out range when one is marked (a range outside the film is refused)."""
        in_out = self.playhead.in_out if self.playhead is not None else None
        return self.submit("preview", lambda d: video_spec(self.session.project, d, "preview", frame_range=in_out))

    def submit(self, kind: str, build) -> int | None:
        try:
            job = queue.submit(self.session.project, kind, build)
        except Exception as e:     # e.g. no camera, no states, nothing baked: say why, queue nothing
            self.message.emit(str(e))
            return None
        self._runner().start(job.id)
        self.message.emit(f"job {job.id} started: {job_line(job)}")
        self.reload()
        self.select_job(job.id)
        return job.id

    def cancel_selected(self) -> None:
        job_id = self.selected_id()
        if job_id is not None:
            self.cancel_job(job_id)

    def cancel_job(self, job_id: int) -> None:
        self.cancel_button.setEnabled(False)
        w = Worker(cancel, self.session.project.path, job_id, self._runner())
        w.done.connect(self._after)
        w.failed.connect(self._after)
        self._workers.append(w)
        w.start()

    def resume_selected(self) -> None:
        job_id = self.selected_id()
        if job_id is None:
            return
        try:
            queue.requeue(self.session.project, job_id)
        except queue.JobError as e:
            self.message.emit(str(e))
            return
        self.start(job_id)

    def _after(self, text) -> None:
        self.message.emit(str(text))
        self.session.poll()

    def open_output(self) -> bool:
        path = self.outputs.currentData()
        return bool(path) and QDesktopServices.openUrl(QUrl.fromLocalFile(path))

    def open_flipbook(self, job_id: int | None = None) -> QtFlipbook | None:
        """The flipbook on a finished render (the newest one when none is named)."""
        project = self.session.project
        job = queue.get_job(project, job_id) if job_id is not None else latest_render(project)
        if job is None:
            self.message.emit("no finished render to play yet: Render preview first")
            return None
        try:
            reels = job_reels(project, job)
        except ReelError as e:
            self.message.emit(str(e))
            return None
        if not reels:
            self.message.emit(f"job {job.id} ({job_line(job)}) left no video or stills to play")
            return None
        if self.flipbook is not None:
            self.flipbook.close()
        others = [(f"job {o.id} ({job_line(o)})", lambda o=o: video_reel(project, o))
                  for o in comparable_renders(project, job)]
        self.flipbook = QtFlipbook(f"job {job.id} ({job_line(job)})", reels, self.window(), others)
        self.flipbook.show()
        return self.flipbook

    def close_view(self) -> None:
        """Stop this window's running jobs (they are marked interrupted and can be resumed)."""
        if self.flipbook is not None:
            self.flipbook.close()
            self.flipbook.setParent(None)
            self.flipbook = None
        if self.runner is not None:
            self.runner.shutdown()
            self.runner = None
