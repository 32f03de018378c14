"""The plan panel: the prompt, the scene and motion briefs, shots, key states
and events, and the agent's log of steps, each of which can be reverted to."""
from __future__ import annotations

import json

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPushButton, QTextBrowser, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from studio.timeline.plan import load_plan

from .qt_session import QtSession


def plan_html(plan: dict | None) -> str:
    if not plan:
        return "<i>No plan yet. `studio agent plan` writes one from a prompt.</i>"
    esc = lambda t: str(t).replace("&", "&amp;").replace("<", "&lt;")   # noqa: E731
    parts = [f"<h3>Prompt</h3><p>{esc(plan.get('prompt', ''))}</p>",
             f"<h3>Scene brief</h3><p>{esc(plan.get('scene_brief', ''))}</p>",
             f"<h3>Motion brief</h3><p>{esc(plan.get('motion_brief', ''))}</p>"]
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
    return "".join(parts)


class QtPlan(QWidget):
    message = Signal(str)

    def __init__(self, qsession: QtSession, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = qsession.session
        self.text = QTextBrowser()
        self.steps = QTreeWidget()
        self.steps.setHeaderLabels(["step", "action", "tokens", "cost", "seconds", "at"])
        self.revert_button = QPushButton("Revert to step")
        self.revert_button.clicked.connect(self.revert_selected)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Agent log"))
        bar.addStretch(1)
        bar.addWidget(self.revert_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.text, 3)
        lay.addLayout(bar)
        lay.addWidget(self.steps, 2)
        qsession.changed.connect(self.reload)
        self.reload()

    def reload(self) -> None:
        self.text.setHtml(plan_html(load_plan(self.session.project)))
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
