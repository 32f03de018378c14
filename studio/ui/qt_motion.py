"""The Motion dock: the segment selected on the timeline (a click on the film
lane between two keys) or under the playhead, the motion tool the plan names
for it, and a form made from that tool's JSON schema (defaults shown; a value
that does not hold is refused with its field named, nothing stored).

"Use this tool" is one set_segment_tool call. "Preview" authors the segment
with the form's tool and values in memory on a worker (segments.preview_tracks)
and shows the result as a green ghost that follows the playhead across the
segment; nothing is stored until Bake. A segment the plan does not list yet
(keys made in the window) offers "Plan from the keys" first. "Adopt end
state", for a simulate or planar segment, runs it in a bake job that adopts
the run's own end as the second key (the `adopt_end_state` tool call), as the
Jobs panel's Adopt does for a bake that offered one.
"""
from __future__ import annotations

import json

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout,
                               QWidget)

from studio.scene.kinematics import tracks_world
from studio.timeline.motion import motion_tools
from studio.tools.schemas import catalogue

from studio.ui import building
from studio.ui.qt_schema_form import FormError, SchemaForm
from studio.ui.segments import SegmentRow, plan_call, preview_tracks, segment_at, segment_rows
from studio.ui.worker import Worker

ADOPT_TOOL = "adopt_end_state"
ADOPTS = ("simulate", "planar")       # tools whose run ends in a state of its own


class QtMotion(QWidget):
    message = Signal(str)

    def __init__(self, qsession, playhead, viewport, stack_of, jobs_of=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.playhead, self.viewport, self.stack_of = qsession.session, playhead, viewport, stack_of
        self.jobs_of = jobs_of
        self.rows: list[SegmentRow] = []
        self.chosen = ""                  # a segment picked on the timeline or here; else the playhead's
        self.segment = QComboBox()
        self.segment.currentIndexChanged.connect(self._on_segment_box)
        self.title = QLabel("")
        self.title.setWordWrap(True)
        self.tool = QComboBox()
        for name, t in motion_tools().items():
            self.tool.addItem(name, name)
            self.tool.setItemData(self.tool.count() - 1, t.description, 3)     # tooltip role
        self.tool.currentIndexChanged.connect(self._on_tool)
        self.about = QLabel("")
        self.about.setWordWrap(True)
        self.form_host = QWidget()
        self.form_lay = QVBoxLayout(self.form_host)
        self.form_lay.setContentsMargins(0, 0, 0, 0)
        self.form: SchemaForm | None = None
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form_host)
        self.set_button = QPushButton("Use this tool")
        self.set_button.setToolTip("Name the tool and its parameters for this segment in the plan (undoable)")
        self.set_button.clicked.connect(self.use_tool)
        self.preview_button = QPushButton("Preview")
        self.preview_button.setToolTip("Author the segment with these values and show it as a green ghost "
                                       "(nothing is stored)")
        self.preview_button.clicked.connect(self.preview)
        self.clear_button = QPushButton("Clear preview")
        self.clear_button.clicked.connect(self.clear_preview)
        self.adopt_button = QPushButton("Adopt end state")
        self.adopt_button.clicked.connect(self.adopt)
        self.plan_button = QPushButton("Plan from the keys")
        self.plan_button.setToolTip("Write the plan from the key states: one shot, a segment between each two keys")
        self.plan_button.clicked.connect(self.plan_from_keys)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        for combo in (self.segment, self.tool):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)
        row = QHBoxLayout()
        row.addWidget(QLabel("segment"))
        row.addWidget(self.segment, 1)
        tools = QHBoxLayout()
        tools.addWidget(QLabel("tool"))
        tools.addWidget(self.tool, 1)
        buttons = QGridLayout()               # two to a row: the dock stays narrow beside the 3D view
        for i, b in enumerate((self.set_button, self.preview_button, self.clear_button, self.adopt_button)):
            buttons.addWidget(b, i // 2, i % 2)
        more = QHBoxLayout()
        more.addWidget(self.plan_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(row)
        lay.addWidget(self.title)
        lay.addLayout(tools)
        lay.addWidget(self.about)
        lay.addWidget(scroll, 1)
        lay.addLayout(buttons)
        lay.addLayout(more)
        lay.addWidget(self.status)
        self._preview: tuple[str, int, dict] | None = None     # (segment, first frame, world (F,4,4) per body)
        self._stored = None                   # (segment, tool, params) the form was last filled from
        self._worker: Worker | None = None
        qsession.changed.connect(self.reload)
        playhead.frame_changed.connect(self._on_frame)
        self.reload()

    # ---- which segment ---------------------------------------------------------
    def reload(self) -> None:
        self.rows = segment_rows(self.session.project, self.session.states)
        self.segment.blockSignals(True)
        self.segment.clear()
        for r in self.rows:
            self.segment.addItem(f"{r.segment} ({r.first}–{r.last})", r.segment)
        self.segment.blockSignals(False)
        self._show()

    def current(self) -> SegmentRow | None:
        by = {r.segment: r for r in self.rows}
        return by.get(self.chosen) or segment_at(self.rows, self.playhead.frame)

    def select_segment(self, segment: str) -> None:
        """A segment chosen on the timeline or in the list: the form shows its tool."""
        if segment != self.chosen:
            self.clear_preview()
        self.chosen = segment
        self._show()

    def _on_segment_box(self, _i) -> None:
        seg = self.segment.currentData()
        if seg:
            self.select_segment(seg)

    def _on_frame(self, frame: int) -> None:
        if self._preview is not None:
            self._draw_preview()
        if not self.chosen:
            self._show()

    def _show(self) -> None:
        row = self.current()
        has_plan = self.session.project.get_doc("plan") is not None
        self.plan_button.setVisible(bool(self.session.states) and (row is None or not row.in_plan or not has_plan))
        if row is None:
            self.title.setText("No segment here: key two states, then pick the segment between them on the "
                               "timeline (the film lane under the ruler)." if len(self.session.states) < 2 else
                               "Pick a segment on the timeline (the film lane between two keys).")
            for w in (self.tool, self.set_button, self.preview_button, self.adopt_button):
                w.setEnabled(False)
            self._stored = None
            self._set_form(None, {})
            return
        i = self.segment.findData(row.segment)
        if i >= 0 and self.segment.currentIndex() != i:
            self.segment.blockSignals(True)
            self.segment.setCurrentIndex(i)
            self.segment.blockSignals(False)
        self.title.setText(f"<b>{row.segment}</b> — {row.words}")
        self.tool.setEnabled(True)
        stored = (row.segment, row.tool, json.dumps(row.params, sort_keys=True))
        if stored != self._stored:          # a refresh keeps what a person is typing into the form
            self._stored = stored
            self.tool.blockSignals(True)
            self.tool.setCurrentIndex(max(0, self.tool.findData(row.tool)))
            self.tool.blockSignals(False)
            self._set_form(row.tool, row.params)
        self.set_button.setEnabled(row.in_plan)
        self.preview_button.setEnabled(True)
        self._adoptable()

    def _on_tool(self, _i) -> None:
        row = self.current()
        tool = self.tool.currentData()
        self.clear_preview()
        self._set_form(tool, row.params if row is not None and row.tool == tool else {})
        self._adoptable()

    def _set_form(self, tool: str | None, params: dict) -> None:
        if self.form is not None:
            self.form_lay.removeWidget(self.form)
            self.form.deleteLater()
            self.form = None
        if tool is None:
            self.about.setText("")
            return
        t = motion_tools()[tool]
        self.about.setText(t.description)
        self.form = SchemaForm(t.schema, params)
        self.form_lay.addWidget(self.form)

    def _adoptable(self) -> None:
        tool = self.tool.currentData()
        here = ADOPT_TOOL in catalogue()
        self.adopt_button.setEnabled(here and tool in ADOPTS and self.current() is not None)
        self.adopt_button.setToolTip(
            "Run the simulation and take its own end as the segment's second key (adopt_end_state, in a bake "
            "job); the adopted key then needs its checks and a review" if here else
            "Adopt end state: for simulate and planar segments, once the studio's adopt_end_state tool is there")

    # ---- acting ------------------------------------------------------------------
    def params(self) -> dict:
        if self.form is None:
            raise FormError("", "no tool chosen")
        return self.form.values()

    def use_tool(self) -> bool:
        row = self.current()
        if row is None:
            return False
        try:
            params = self.params()
            building.call(self.session.project, self.stack_of(), "set_segment_tool",
                          {"segment": row.segment, "tool": self.tool.currentData(), "params": params})
        except (FormError, ValueError) as e:
            self.status.setText(str(e))
            self.message.emit(str(e))
            return False
        self.session.refresh()
        text = f"{row.segment} will be made by {self.tool.currentData()}" + (
            " (baked by another tool now: Bake again)" if row.baked_by and row.baked_by != self.tool.currentData() else "")
        self.status.setText(text)
        self.message.emit(text)
        return True

    def plan_from_keys(self) -> bool:
        scene = self.session.scene
        if not scene.cameras:
            self.message.emit("The plan's shot needs a camera: add one in the Scene dock (Camera) first")
            return False
        plan = self.session.project.get_doc("plan") or {}
        shots = plan.get("shots", [])
        shot = shots[0]["id"] if shots else "shot_1"
        camera = shots[0]["camera"] if shots else scene.cameras[0].name
        try:
            building.call(self.session.project, self.stack_of(), "set_plan",
                          plan_call(self.session.project, self.session.states, camera, shot))
        except ValueError as e:
            self.message.emit(str(e))
            return False
        self.session.refresh()
        self.message.emit(f"Planned {len(self.session.states)} keys in shot {shot} through {camera}")
        return True

    def adopt(self) -> int | None:
        """Run the segment's simulation and adopt its own end as the second key (adopt_end_state), in a
        bake job as the Jobs panel's Adopt does: the run is off the window's thread."""
        row = self.current()
        jobs = self.jobs_of() if self.jobs_of else None
        if row is None or jobs is None:
            self.message.emit("Adopt end state runs as a job: open the Jobs panel")
            return None
        if row.tool not in ADOPTS:
            self.message.emit(f"{row.segment} is made by {row.tool}: Use this tool (simulate or planar) first")
            return None
        from studio.jobs.bake_spec import bake_spec
        project = self.session.project
        return jobs.submit("bake", lambda d: bake_spec(project, d, [row.segment], adopt_end=True))

    # ---- preview -------------------------------------------------------------------
    def preview(self) -> Worker | None:
        row = self.current()
        if row is None:
            return None
        try:
            params = self.params()
        except FormError as e:
            self.status.setText(str(e))
            return None
        tool = self.tool.currentData()
        self.status.setText(f"Previewing {row.segment} with {tool}…")
        self.preview_button.setEnabled(False)
        w = self._worker = Worker(preview_tracks, self.session.project.path, row.segment, tool, params)
        w.done.connect(lambda tracks: self._show_preview(row.segment, tool, tracks))
        w.failed.connect(self._preview_failed)
        return w.start()

    def _preview_failed(self, message: str) -> None:
        self._worker = None
        self.preview_button.setEnabled(True)
        self.status.setText(f"No preview: {message}")
        self.message.emit(f"No preview: {message}")

    def _show_preview(self, segment: str, tool: str, tracks) -> None:
        self._worker = None
        self.preview_button.setEnabled(True)
        self._preview = (segment, tracks.frame_start, tracks_world(self.session.scene, tracks))
        self.status.setText(f"Preview of {segment} by {tool}, frames {tracks.frame_start}–{tracks.frame_end}: "
                            "the green ghost follows the playhead (nothing stored; Bake to keep it)")
        if not tracks.frame_start <= self.playhead.frame <= tracks.frame_end:
            self.playhead.set_frame((tracks.frame_start + tracks.frame_end) // 2)
        self._draw_preview()

    def _draw_preview(self) -> None:
        _seg, first, world = self._preview
        i = self.playhead.frame - first
        n = next(iter(world.values())).shape[0] if world else 0
        if 0 <= i < n:
            self.viewport.show_ghost({k: v[i] for k, v in world.items()})
        else:
            self.viewport.clear_ghost()

    @property
    def previewing(self) -> str:
        return self._preview[0] if self._preview else ""

    def clear_preview(self) -> None:
        if self._preview is not None:
            self._preview = None
            self.viewport.clear_ghost()

    def close_view(self) -> None:
        self._preview = None
