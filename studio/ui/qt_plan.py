"""The plan panel: a prompt box that runs the agent (Plan, then Build from the
plan once a person has read and, if need be, edited it), the plan itself (the
prompt, the scene and motion briefs, shots, key states, events and segment
tools), and the agent's log of steps, growing live, each of which can be
reverted to. The agent runs as a job, so Cancel stops it; while it runs, the
line under the buttons says what the model is doing (the kind of reply, the
tokens streamed so far, the seconds, the last wait or retry), twice a second.
Without a model the panel says how to make the film by hand, and "Plan from
the keys" writes the plan from the key states (one set_plan call)."""
from __future__ import annotations

import json

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QPushButton, QTextBrowser, QTreeWidget, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from studio.jobs.agent_spec import agent_spec
from studio.timeline.plan import load_plan

from studio.ui.agent_jobs import RUNNING, job_words, latest_agent_job, model_missing
from studio.ui.qt_session import QtSession


BY_HAND = ("<p><b>Making the film by hand</b> (no model needed):</p><ol>"
           "<li><b>Scene</b> dock: add the floor, the bodies (a jointed arm: a body joined to another), "
           "named frames and a camera.</li>"
           "<li>Pose at the playhead (<b>Pose</b> dock or the viewport's handles), then <b>Key this frame</b> "
           "(I) on the storyboard, for each key pose.</li>"
           "<li><b>Plan from the keys</b> (below): one shot through a camera, a segment between each two "
           "keys.</li>"
           "<li><b>Motion</b> dock: click a segment on the timeline's film lane, choose its tool.</li>"
           "<li>Approve the keys, <b>Bake motion</b> (Jobs), <b>Verify</b> (Checks), Render preview, Export."
           "</li></ol>")


def plan_html(plan: dict | None, model: bool = True) -> str:
    if not plan:
        return ("<i>No plan yet.</i>" + (" Write what happens above and press <b>Plan</b>: the agent "
                                          "writes one." if model else "") + BY_HAND)
    esc = lambda t: str(t).replace("&", "&amp;").replace("<", "&lt;")   # noqa: E731
    parts = [f"<h3>{title}</h3><p>{esc(plan[key])}</p>"          # a plan made from keys has no briefs
             for title, key in (("Prompt", "prompt"), ("Scene brief", "scene_brief"), ("Motion brief", "motion_brief"))
             if str(plan.get(key) or "").strip()]
    shots = plan.get("shots", [])
    parts.append("<h3>Shots</h3><ul>" + "".join(
        f"<li><b>{esc(s.get('id'))}</b> {s.get('start')}–{s.get('end')} camera {esc(s.get('camera'))}</li>"
        for s in shots) + "</ul>")
    parts.append("<h3>Key states</h3><ul>" + "".join(
        f"<li><b>{esc(s.get('id'))}</b> @ {s.get('frame')} ({esc(s.get('shot'))}): {esc(s.get('description', ''))}</li>"
        for s in plan.get("states", [])) + "</ul>")
    parts.append("<h3>Events</h3><ul>" + "".join(
        f"<li><b>{esc(e.get('id'))}</b> {esc(e.get('kind'))} {esc(', '.join(e.get('subjects', [])))} "
        f"in {e.get('window')}</li>" for e in plan.get("events", [])) + "</ul>")
    motion = plan.get("motion", [])
    if motion:
        parts.append("<h3>Motion</h3><ul>" + "".join(
            f"<li><b>{esc(m.get('segment'))}</b> {esc(m.get('tool') or 'interpolate')} "
            f"{esc(json.dumps(m.get('params', {})) if m.get('params') else '')}</li>" for m in motion) + "</ul>")
    return "".join(parts)


class QtPlanEditor(QDialog):
    """The plan as JSON, checked against the scene when saved (the tool layer's set_plan):
    a plan that does not hold stays open with the field named, and nothing is stored."""

    def __init__(self, plan: dict, save, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Edit plan")
        self.resize(720, 640)
        self.save_fn = save
        self.edit = QPlainTextEdit(json.dumps(plan, indent=2))
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d1453b")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Shots, key states, events and segment tools (motion[].tool and params):"))
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.error)
        lay.addWidget(buttons)

    def save(self) -> None:
        try:
            plan = json.loads(self.edit.toPlainText())
        except json.JSONDecodeError as e:
            self.error.setText(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}")
            return
        problem = self.save_fn(plan)
        if problem:
            self.error.setText(problem)
            return
        self.accept()


class QtPlan(QWidget):
    message = Signal(str)

    def __init__(self, qsession: QtSession, jobs_of=None, stack_of=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.jobs_of, self.stack_of = qsession.session, jobs_of, stack_of
        self.prompt = QPlainTextEdit()
        self.prompt.setPlaceholderText("What happens in the film? e.g. a robot picks a box up from a table, "
                                       "turns and puts it on a stool")
        self.prompt.setMaximumHeight(72)
        self.plan_button = QPushButton("Plan")
        self.plan_button.setToolTip("The agent writes a scene brief, a motion brief and a plan (a job)")
        self.edit_button = QPushButton("Edit plan…")
        self.build_button = QPushButton("Approve plan and build")
        self.build_button.setToolTip("The agent builds the scene and authors the plan's key states (a job)")
        self.cancel_button = QPushButton("Cancel")
        self.agent_status = QLabel("")
        self.agent_status.setWordWrap(True)
        self.plan_button.clicked.connect(self.plan)
        self.build_button.clicked.connect(self.build)
        self.edit_button.clicked.connect(self.edit_plan)
        self.cancel_button.clicked.connect(self.cancel)
        self._job_id: int | None = None
        self._ticker = QTimer(self)
        self._ticker.setInterval(500)
        self._ticker.timeout.connect(self._tick)
        agent_bar = QGridLayout()             # two rows: the dock stays narrow beside a wide 3D view
        for i, b in enumerate((self.plan_button, self.edit_button, self.build_button, self.cancel_button)):
            agent_bar.addWidget(b, i // 2, i % 2)
        self.keys_shot = QLineEdit("shot_1")
        self.keys_shot.setToolTip("The shot the keys go in (name it for what it shows)")
        self.keys_camera = QComboBox()
        self.keys_button = QPushButton("Plan from the keys")
        self.keys_button.setToolTip("Without a model: the key states become the plan's states, in one shot "
                                    "through the camera, with a segment between each two (set_plan)")
        self.keys_button.clicked.connect(self.plan_from_keys)
        self.keys_camera.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.keys_camera.setMinimumContentsLength(6)
        keys_bar = QGridLayout()
        keys_bar.addWidget(QLabel("shot"), 0, 0)
        keys_bar.addWidget(self.keys_shot, 0, 1)
        keys_bar.addWidget(QLabel("camera"), 0, 2)
        keys_bar.addWidget(self.keys_camera, 0, 3)
        keys_bar.setColumnStretch(1, 1)
        keys_bar.setColumnStretch(3, 1)
        keys_bar.addWidget(self.keys_button, 1, 0, 1, 4)
        self.text = QTextBrowser()
        self.steps = QTreeWidget()
        self.steps.setHeaderLabels(["step", "action", "tokens", "cost", "seconds", "at"])
        self.revert_button = QPushButton("Revert to step")
        self.revert_button.clicked.connect(self.revert_selected)
        self.log_title = QLabel("Agent log")
        bar = QHBoxLayout()
        bar.addWidget(self.log_title)
        bar.addStretch(1)
        bar.addWidget(self.revert_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.prompt)
        lay.addLayout(agent_bar)
        lay.addWidget(self.agent_status)
        lay.addLayout(keys_bar)
        self.text.setMinimumHeight(48)
        self.steps.setMinimumHeight(40)
        self.prompt.setMinimumHeight(40)
        lay.addWidget(self.text, 3)
        lay.addLayout(bar)
        lay.addWidget(self.steps, 2)
        qsession.jobs_changed.connect(self.reload)        # an agent step's progress too
        self.reload()

    def reload(self) -> None:
        plan = load_plan(self.session.project)
        html = plan_html(plan, model=not model_missing())
        if html != getattr(self, "_html", None):       # a job's progress alone leaves the plan as it is
            self._html = html
            self.text.setHtml(html)
        cams = [c.name for c in self.session.scene.cameras]
        if cams != [self.keys_camera.itemText(i) for i in range(self.keys_camera.count())]:
            keep = self.keys_camera.currentText()
            self.keys_camera.clear()
            self.keys_camera.addItems(cams)
            self.keys_camera.setCurrentIndex(max(0, self.keys_camera.findText(keep)))
        self.keys_button.setEnabled(bool(cams) and bool(self.session.states))
        self.keys_button.setToolTip(self.keys_button.toolTip() if cams and self.session.states else
                                    "Plan from the keys needs a camera and at least one key state")
        if plan and plan.get("shots") and not self.keys_shot.hasFocus():
            self.keys_shot.setText(plan["shots"][0]["id"])
        job = latest_agent_job(self.session.project)
        running = job is not None and job.state in RUNNING
        self._job_id = job.id if running else None
        self.agent_status.setText(job_words(job, self.session.project))
        if running and not self._ticker.isActive():
            self._ticker.start()
        elif not running:
            self._ticker.stop()
        self.plan_button.setEnabled(not running)
        self.build_button.setEnabled(not running and plan is not None)
        self.edit_button.setEnabled(not running and plan is not None)
        self.cancel_button.setEnabled(running)
        if plan and not self.prompt.toPlainText().strip():
            self.prompt.setPlainText(plan.get("prompt", ""))
        from studio.agent.steps import list_steps
        selected = self.selected_step()
        self.steps.clear()
        for st in list_steps(self.session.project):
            cost = st["detail"].get("cost")
            item = QTreeWidgetItem([str(st["id"]), st["action"], str(st["tokens"] or 0),
                                    "" if cost is None else f"{cost:.4f}", f"{st['seconds'] or 0:.1f}", st["at"] or ""])
            item.setToolTip(1, json.dumps(st["detail"], indent=1)[:2000])
            self.steps.addTopLevelItem(item)
            if st["id"] == selected:
                self.steps.setCurrentItem(item)
        self.revert_button.setEnabled(self.steps.topLevelItemCount() > 0)
        logged = self.steps.topLevelItemCount() > 0 or not model_missing()   # no model, no steps: room for the text
        for w in (self.log_title, self.revert_button, self.steps):
            w.setVisible(logged)

    def _tick(self) -> None:
        """The running agent job's words, with the model's progress (its row and progress.json)."""
        job = latest_agent_job(self.session.project)
        if job is None or job.state not in RUNNING:
            self._ticker.stop()
            self.reload()
            return
        self.agent_status.setText(job_words(job, self.session.project))

    def selected_step(self) -> int | None:
        item = self.steps.currentItem()
        return int(item.text(0)) if item is not None else None

    def revert_selected(self) -> None:
        from studio.agent.steps import revert
        step = self.selected_step()
        if step is None:
            self.message.emit("Select an agent step to revert to.")
            return
        try:
            new = revert(self.session.project, step)
        except Exception as e:      # shown, not raised: the project is left as it was
            self.message.emit(str(e))
            return
        self.message.emit(f"Reverted to step {step} (recorded as step {new})")

    # ---- the agent ---------------------------------------------------------
    def plan(self) -> int | None:
        return self._run("plan", self.prompt.toPlainText().strip())

    def build(self) -> int | None:
        return self._run("build", "")

    def _run(self, action: str, prompt: str) -> int | None:
        missing = model_missing()
        if missing:
            self.agent_status.setText(missing)
            self.message.emit(missing)
            return None
        jobs = self.jobs_of() if self.jobs_of else None
        if jobs is None:
            self.message.emit("the Jobs panel is closed: the agent runs as a job")
            return None
        job_id = jobs.submit("agent_step", lambda d: agent_spec(self.session.project, d, action, prompt))
        if job_id is not None:
            self._job_id = job_id
            self.reload()
        return job_id

    def cancel(self) -> None:
        jobs = self.jobs_of() if self.jobs_of else None
        if jobs is not None and self._job_id is not None:
            jobs.cancel_job(self._job_id)
            self.agent_status.setText(f"Cancelling job {self._job_id}…")

    def plan_from_keys(self) -> bool:
        """The plan from the key states, without a model: one set_plan call."""
        from studio.ui.segments import plan_call
        camera, shot = self.keys_camera.currentText(), self.keys_shot.text().strip()
        if not camera:
            self.message.emit("Plan from the keys: the shot needs a camera (Scene dock › Camera)")
            return False
        problem = self._save_plan(plan_call(self.session.project, self.session.states, camera, shot)["plan"])
        if problem:
            self.message.emit(problem)
            return False
        self.message.emit(f"Planned {len(self.session.states)} key(s) in shot {shot} through {camera}")
        return True

    def edit_plan(self) -> None:
        plan = load_plan(self.session.project)
        if plan is None:
            return
        dialog = QtPlanEditor(plan, self._save_plan, self)
        try:
            dialog.exec()
        finally:
            dialog.setParent(None)
            dialog.deleteLater()

    def _save_plan(self, plan: dict) -> str:
        """Store an edited plan through the tool layer; '' when stored, else why not."""
        from studio.tools.errors import ToolRefused
        from studio.tools.box import ToolBox
        stack = self.stack_of() if self.stack_of else None
        try:
            ToolBox(self.session.project, stack, actor="person").call("set_plan", {"plan": plan})
        except (ToolRefused, ValueError) as e:
            return str(e)
        self.session.refresh()
        self.message.emit("Plan saved")
        return ""
