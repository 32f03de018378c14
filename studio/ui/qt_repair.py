"""Repair review: the proposals waiting for a person, each a list of changes
to a state's pose shown as a before/after overlay in the viewport (the
'after' in translucent green), with Approve (one undoable command) and
Reject (with a note the next proposal reads). "Propose" asks the model when one
is configured, the offline repairer otherwise (and says which), for verified
proposals for the state at the playhead, on a worker.

A repair of the baked motion (target `film:<segment>`) is shown over its
interval: the film as it is, and the film the repair would bake as a green
ghost that follows the playhead while it scrubs the interval. Approving one
that inserts a key state asks the person to approve that key state too."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                               QProgressBar, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from studio.store.errors import Refused
from studio.repair.motion_repair import PREFIX, ApplyFilmRepair
from studio.repair.motion_trial import RepairUnfit, scratch_film
from studio.repair.proposals import ApplyRepair, apply_changes, get_proposal, list_proposals, reject
from studio.scene.kinematics import pose_world
from studio.store.project import Project
from studio.timeline.storyboard import get_state

from studio.ui.qt_bar import show_progress
from studio.ui.job_progress import JobProgress, eta_text
from studio.ui.playhead import Playhead
from studio.ui.qt_session import QtSession
from studio.ui.repair_words import change_rows, verified_words
from studio.ui.worker import Worker


class ModelWatch:
    """A worker's state that also hears the model: its progress line says the kind of reply, the
    tokens so far and the seconds, or the client's last notice (a wait, a retry), after what the
    search is doing."""

    def __init__(self, state):
        self.state, self.fraction, self.what = state, 0.0, ""

    @property
    def cancelled(self) -> bool:
        return self.state.cancelled

    def progress(self, fraction: float, what: str = "") -> None:
        self.fraction, self.what = fraction, what
        self.state.progress(fraction, what)

    def model(self, kind: str, tokens: int, seconds: float, done: bool) -> None:
        self.state.progress(self.fraction, f"{self.what} — {kind} reply: {tokens} tokens, {seconds:.0f} s")

    def notice(self, message: str) -> None:
        self.state.progress(self.fraction, f"{self.what} — {message}")


def propose(path, state_id, state) -> str:
    """Proposals for one state from the model when one is configured, else from the offline
    repairer, saying which (a plain function for a worker; a cancel keeps what was proposed)."""
    from studio.ui.agent_jobs import model_missing
    with Project.open(path) as project:
        if not model_missing():
            from studio.agent.client import ModelClient
            from studio.agent.model_repair import propose_with_model
            watch = ModelWatch(state)
            client = ModelClient.from_settings(on_progress=watch.model, on_status=watch.notice)
            proposals, unsolved = propose_with_model(project, client, state_id, state=watch)
            who = f"the model {client.model or client.base_url}"
        else:
            from studio.repair.offline import propose_offline
            proposals, unsolved = propose_offline(project, state_id, state=state)
            who = "the offline repairer (no model configured)"
    if state.cancelled:
        return f"cancelled: {who} kept {len(proposals)} verified proposal(s) for {state_id}"
    return f"{who}: {len(proposals)} proposal(s) for {state_id}" + \
        (f"; unsolved: {'; '.join(unsolved)}" if unsolved else "")


def propose_motion(path, frame, state) -> str:
    """Verified proposals for the failing motion of the segment under the playhead (for a worker)."""
    from studio.repair.motion_repair import propose_film
    from studio.timeline.film import list_segments
    with Project.open(path) as project:
        seg = next((s for s in list_segments(project) if s["start"] <= frame <= s["end"]), None)
        if seg is None:
            return f"no baked segment at frame {frame}"
        made = propose_film(project, interval=(seg["start"], seg["end"]), state=state)
    if state.cancelled:
        return f"cancelled: the offline repairer kept {len(made.proposals)} verified proposal(s) for {seg['segment']}"
    return (f"the offline repairer: {len(made.proposals)} proposal(s) for {seg['segment']}"
            + (f"; unsolved: {'; '.join(made.unsolved)}" if made.unsolved else ""))


class QtRepair(QWidget):
    message = Signal(str)

    def __init__(self, qsession: QtSession, playhead: Playhead, viewport, stack_of, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead, self.viewport, self.stack_of = qsession.session, playhead, viewport, stack_of
        self.list = QListWidget()
        self.list.currentItemChanged.connect(lambda *_: self.show_selected())
        self.list.setWordWrap(True)             # a proposal's line wraps in a narrow dock, never cut
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.changes = QTableWidget(0, 4)
        self.changes.setHorizontalHeaderLabels(["change", "what", "from", "to"])
        self.changes.verticalHeader().setVisible(False)
        self.changes.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.changes.setWordWrap(True)
        header = self.changes.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.verdicts = QLabel("")
        self.verdicts.setWordWrap(True)
        self.note = QLineEdit()
        self.note.setPlaceholderText("Why reject (the next proposal reads it)")
        self.propose_button = QPushButton("Propose for this state")
        self.approve_keys = QCheckBox("Approve the key state(s) it inserts, as me")
        self.approve_keys.toggled.connect(lambda *_: self._enable())
        self.approve_button = QPushButton("Approve")
        self.reject_button = QPushButton("Reject")
        self.propose_button.clicked.connect(self.propose)
        self.propose_motion_button = QPushButton("Propose for the motion here")
        self.propose_motion_button.clicked.connect(self.propose_motion)
        self.approve_button.clicked.connect(self.approve)
        self.reject_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.reject_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.propose_button)
        self.bar = QProgressBar()               # proposing: failures tried so far, and the time left
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop proposing; proposals already verified stay")
        self.cancel_button.clicked.connect(self.cancel)
        self.doing = QLabel("")                 # what is being tried, and the time left
        self.doing.setWordWrap(True)
        self.doing.setMinimumHeight(2 * self.doing.fontMetrics().height() + 4)   # two lines fit a narrow dock
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        running = QVBoxLayout()
        running.setContentsMargins(0, 0, 0, 0)
        running.addLayout(row)
        running.addWidget(self.doing)
        self.running = QWidget()
        self.running.setLayout(running)
        self.running.hide()
        self.job_progress = JobProgress()
        lay.addWidget(self.propose_motion_button)
        lay.addWidget(self.running)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.changes, 1)
        lay.addWidget(self.verdicts)
        lay.addWidget(self.note)
        lay.addWidget(self.approve_keys)
        lay.addLayout(buttons)
        self.worker: Worker | None = None
        self.preview: tuple[int, object, int, int] | None = None    # (repair id, after tracks, first, last)
        self._taken_to: int | None = None      # the proposal the playhead was last taken to (a refresh stays put)
        self.playhead.frame_changed.connect(self._scrub)
        qsession.changed.connect(self.reload)
        self.reload()

    def reload(self) -> None:
        current = self.selected_id()
        self.list.blockSignals(True)
        self.list.clear()
        for p in list_proposals(self.session.project):
            item = QListWidgetItem(f"#{p.id} {p.status} · {p.target}\n{p.check_name}: {p.summary}")
            item.setToolTip(f"#{p.id} {p.status} · {p.target} · {p.check_name}: {p.summary}")
            item.setData(256, p.id)
            self.list.addItem(item)
            if p.id == current:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self.show_selected()

    def selected_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(256)) if item is not None else None

    def select(self, repair_id: int) -> None:
        for i in range(self.list.count()):
            if self.list.item(i).data(256) == repair_id:
                self.list.setCurrentRow(i)

    def _enable(self) -> None:
        rid = self.selected_id()
        p = get_proposal(self.session.project, rid) if rid is not None else None
        open_ = p is not None and p.status == "proposed"
        keys = p is not None and any(c["kind"] == "insert_state" for c in p.changes)
        self.approve_keys.setVisible(open_ and keys)
        self.approve_button.setEnabled(open_ and (not keys or self.approve_keys.isChecked()))
        self.reject_button.setEnabled(open_)

    def show_selected(self) -> None:
        rid = self.selected_id()
        p = get_proposal(self.session.project, rid) if rid is not None else None
        open_ = p is not None and p.status == "proposed"
        self.approve_keys.setChecked(False)
        self._enable()
        self.changes.setRowCount(0)
        self.preview = None
        if p is None:
            self.verdicts.setText("")
            self.viewport.clear_ghost()
            return
        if p.target.startswith(PREFIX):
            self._show_film(p, open_)
            return
        self._fill_changes(change_rows(p.changes))
        self.verdicts.setText(verified_words(p.verified, p.check_name) + (f" · note: {p.note}" if p.note else ""))
        state = get_state(self.session.project, p.state_id)
        if state is None or not open_:
            self.viewport.clear_ghost()
            return
        if self._taken_to != p.id:                    # chosen now, not a refresh: go to the state, once
            self._taken_to = p.id
            self.playhead.set_frame(state.frame)      # before: the state as it is; after: the ghost
            if self.viewport.showing != "state":      # the film may not match the state (edited since the bake)
                self.viewport.set_showing("state")
        if self.playhead.frame != state.frame:        # the person moved on: no ghost of this state elsewhere
            self.viewport.clear_ghost()
            return
        scene = self.session.scene
        self.viewport.show_ghost(pose_world(scene, apply_changes(scene, state.pose, p.changes)))

    def _show_film(self, p, open_: bool) -> None:
        """The repair's changes, its verified effect, and the film it would bake as a scrubbable ghost."""
        self._fill_changes(change_rows(p.changes))
        v = p.verified or {}
        self.verdicts.setText(verified_words(v, p.check_name) + (f" · note: {p.note}" if p.note else ""))
        if not open_:
            self.viewport.clear_ghost()
            return
        try:
            _before, after = scratch_film(self.session.project, p.changes, self.session.scene)
        except (RepairUnfit, ValueError) as e:       # the film moved on since: say so, show nothing
            self.verdicts.setText(f"{self.verdicts.text()} · cannot preview: {e}")
            self.viewport.clear_ghost()
            return
        first, last = v.get("interval", [after.frame_start, after.frame_end])
        self.preview = (p.id, after, int(first), int(last))
        if self.viewport.showing != "film":
            self.viewport.set_showing("film")
        run = v.get("run") or [first, last]
        if self._taken_to == p.id or self.playhead.frame == int(run[0]):   # a refresh keeps the playhead
            self._scrub(self.playhead.frame)
        if self._taken_to != p.id:
            self._taken_to = p.id
            self.playhead.set_frame(int(run[0]))

    def _fill_changes(self, rows) -> None:
        self.changes.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, v in enumerate(row):
                item = QTableWidgetItem(v)
                item.setToolTip(v)
                self.changes.setItem(i, j, item)
        self.changes.resizeRowsToContents()

    def _scrub(self, frame: int) -> None:
        """Inside the previewed interval, the ghost shows the repaired film at the playhead's frame."""
        if self.preview is None:
            return
        _, after, first, last = self.preview
        if first <= frame <= last:
            self.viewport.show_ghost(pose_world(self.session.scene, after.pose_at(frame)))
        else:
            self.viewport.clear_ghost()

    def propose(self) -> None:
        s = self.session.state_at(self.playhead.frame)
        if s is None or self.worker is not None:
            return
        self._run(propose, s.id)

    def propose_motion(self) -> None:
        if self.worker is not None:
            return
        self._run(propose_motion, self.playhead.frame)

    def _run(self, fn, what) -> None:
        """Propose on a worker, with a bar and a Cancel (as Verify has)."""
        self.propose_button.setEnabled(False)
        self.propose_motion_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.job_progress.start()
        self.bar.setValue(0)
        self.bar.setFormat("%p%")
        self.doing.setText("proposing…")
        self.running.show()
        self.worker = Worker(fn, self.session.project.path, what)
        self.worker.progressed.connect(self._progressed)
        self.worker.done.connect(self._proposed)
        self.worker.failed.connect(self._proposed)
        self.worker.start()

    def _progressed(self, fraction: float, what: str) -> None:
        show_progress(self.bar, int(fraction * 1000))
        eta = self.job_progress.eta(fraction)
        self.doing.setText(what + (f" · {eta_text(eta)}" if eta is not None else ""))

    def cancel(self) -> None:
        """Stop after the candidate being verified now; proposals already verified stay."""
        if self.worker is not None:
            self.worker.cancel()
            self.cancel_button.setEnabled(False)
            self.doing.setText("cancelling after the current candidate…")

    def _proposed(self, text) -> None:
        self.worker = None
        self.propose_button.setEnabled(True)
        self.propose_motion_button.setEnabled(True)
        self.running.hide()
        self.message.emit(str(text))
        self.session.poll()

    def approve(self) -> None:
        rid = self.selected_id()
        p = get_proposal(self.session.project, rid)
        try:
            if p.target.startswith(PREFIX):
                self.preview = None
                self.stack_of().run(ApplyFilmRepair(self.session.project, rid))
            else:
                self.stack_of().run(ApplyRepair(self.session.project, rid))
        except Refused as e:     # the proposal no longer holds on the state as it is now
            self.message.emit(str(e))
            return
        self.message.emit(f"Applied repair {rid}")

    def reject(self) -> None:
        rid = self.selected_id()
        try:
            reject(self.session.project, rid, self.note.text(), stack=self.stack_of())
        except Refused as e:
            self.message.emit(str(e))
            return
        self.note.clear()
        self.message.emit(f"Rejected repair {rid}")

    def close_view(self) -> None:
        self.playhead.frame_changed.disconnect(self._scrub)
        self.preview = None
        if self.worker is not None:
            self.worker.cancel()
