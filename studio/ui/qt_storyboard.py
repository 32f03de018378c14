"""The storyboard timeline: one card per key state in frame order, with its
still, frame number, review status and why, and between cards the segment's
bake/check status. Approve and Reject (with a note) run review commands on
the window's command stack; Approve first runs the verifiers on the state (a
run_verifiers call) when its stored checks are not of this version of it. Cards are painted by a delegate over a list
model, so 200 states scroll as smoothly as 3."""
from __future__ import annotations

import html

from PySide6.QtCore import QAbstractListModel, QModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QKeySequence, QPainter, QPixmap, QShortcut
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QListView, QPushButton, QStyle,
                               QStyledItemDelegate, QVBoxLayout, QWidget)

from studio.tools.errors import ToolRefused
from studio.tools.box import ToolBox
from studio.timeline.commands import CommandStack

from studio.ui import keying
from studio.ui.cards import Card
from studio.ui.playhead import Playhead
from studio.ui.qt_session import QtSession

STATUS_COLORS = {"approved": "#3fa34d", "pending": "#8a8f98", "rejected": "#d1453b", "stale": "#d89b2b",
                 "failing": "#c0392b"}
SEGMENT_COLORS = {"passing": "#3fa34d", "baked": "#4a90d9", "failing": "#d1453b", "not baked": "#55595f",
                  "stale": "#d89b2b"}
CARD_W, CARD_H, STILL_H = 176, 150, 84
ENLARGED_W = 480                 # a still in the tooltip, wide enough to read a pose
CardRole = Qt.ItemDataRole.UserRole + 1


class BoardModel(QAbstractListModel):
    """The session's cards as a Qt list model (no copy: it reads `session.cards`)."""

    def __init__(self, qsession: QtSession):
        super().__init__()
        self.session = qsession.session
        self._stills: dict[str, QPixmap] = {}
        qsession.changed.connect(self.reload)

    def reload(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.session.cards)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= len(self.session.cards):
            return None
        card = self.session.cards[index.row()]
        if role == CardRole:
            return card
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{card.state_id} {card.frame} {card.status}"
        if role == Qt.ItemDataRole.ToolTipRole:
            text = "\n".join([f"{card.state_id} @ {card.frame}: {card.status}", *card.reasons,
                               f"segment {card.segment}: {card.segment_status}" if card.segment else ""]).strip()
            path = self.still_path(card)
            if path is None:
                return text
            # hovering enlarges the still (double-click opens it at full size)
            return (f'<img src="{html.escape(path.as_uri())}" width="{ENLARGED_W}"><br>'
                    + html.escape(text).replace("\n", "<br>"))
        return None

    def still_path(self, card: Card):
        if not card.still:
            return None
        path = self.session.project.asset_path(card.still)
        return path if path.exists() else None

    def still(self, card: Card) -> QPixmap | None:
        """The state's still, loaded once per asset (stills are content-addressed)."""
        if not card.still:
            return None
        pm = self._stills.get(card.still)
        if pm is None:
            pm = QPixmap(str(self.session.project.asset_path(card.still)))
            if not pm.isNull():
                pm = pm.scaled(CARD_W - 12, STILL_H, Qt.AspectRatioMode.KeepAspectRatio,
                               Qt.TransformationMode.SmoothTransformation)
            self._stills[card.still] = pm
        return None if pm.isNull() else pm

    def row_of(self, state_id: str) -> int:
        for i, c in enumerate(self.session.cards):
            if c.state_id == state_id:
                return i
        return -1


class CardDelegate(QStyledItemDelegate):
    def __init__(self, model: BoardModel):
        super().__init__()
        self.model = model

    def sizeHint(self, option, index) -> QSize:
        return QSize(CARD_W + 18, CARD_H)

    def paint(self, p: QPainter, option, index) -> None:
        card: Card = index.data(CardRole)
        if card is None:
            return
        r = QRect(option.rect.x() + 2, option.rect.y() + 2, CARD_W, CARD_H - 4)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        p.setPen(QColor("#f0c808") if selected else QColor("#3a3d42"))
        p.setBrush(QColor("#2a2d31"))
        p.drawRoundedRect(r, 6, 6)
        still = QRect(r.x() + 6, r.y() + 6, CARD_W - 12, STILL_H)
        pm = self.model.still(card)
        if pm is not None:
            p.drawPixmap(still.x() + (still.width() - pm.width()) // 2, still.y(), pm)
        else:
            p.fillRect(still, QColor("#1d1f22"))
            p.setPen(QColor("#6b7078"))
            p.drawText(still, Qt.AlignmentFlag.AlignCenter, "no still" if card.authored else "not authored")
        color = QColor(STATUS_COLORS.get(card.status, "#8a8f98"))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawRoundedRect(QRect(r.x() + 6, still.bottom() + 4, CARD_W - 12, 16), 3, 3)
        p.setPen(QColor("white"))
        f = QFont(p.font())
        f.setBold(True)
        p.setFont(f)
        p.drawText(QRect(r.x() + 10, still.bottom() + 4, CARD_W - 20, 16),
                   Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, card.status.upper())
        p.drawText(QRect(r.x() + 10, still.bottom() + 4, CARD_W - 20, 16),
                   Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, str(card.frame))
        f.setBold(False)
        p.setFont(f)
        p.setPen(QColor("#e6e6e6"))
        p.drawText(QRect(r.x() + 8, still.bottom() + 22, CARD_W - 16, 16), Qt.AlignmentFlag.AlignLeft,
                   p.fontMetrics().elidedText(card.state_id + (f" · {card.shot}" if card.shot else ""),
                                              Qt.TextElideMode.ElideRight, CARD_W - 16))
        p.setPen(QColor("#a0a4aa"))
        why = card.reasons[0] if card.reasons else (card.reviewed or "approved, passing, current")
        p.drawText(QRect(r.x() + 8, still.bottom() + 38, CARD_W - 16, 16), Qt.AlignmentFlag.AlignLeft,
                   p.fontMetrics().elidedText(why, Qt.TextElideMode.ElideRight, CARD_W - 16))
        if card.segment:                # the segment to the next card: a bar in the gap
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(SEGMENT_COLORS.get(card.segment_status, "#55595f")))
            p.drawRoundedRect(QRect(r.right() + 3, r.y() + STILL_H // 2, 12, 24), 3, 3)
        p.restore()


def needs_checks(project, state_id: str) -> bool:
    """True when the state's stored checks are missing or were run on another version of it."""
    from studio.scene.io import load_scene
    from studio.store.reports import load_reports
    from studio.timeline.storyboard import content_hash, get_state
    st = get_state(project, state_id)
    reports, checked = load_reports(project, f"state:{state_id}")
    return st is not None and (not reports or checked != content_hash(load_scene(project), st.pose, st.frame))


class QtStoryboard(QWidget):
    """Cards, and the review strip: note, Approve (Ctrl+Shift+A), Reject (Ctrl+Shift+R)."""

    message = Signal(str)

    def __init__(self, qsession: QtSession, playhead: Playhead, stack: CommandStack,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.qsession, self.session, self.playhead, self.stack = qsession, qsession.session, playhead, stack
        self.model = BoardModel(qsession)
        self.view = QListView()
        self.view.setModel(self.model)
        self.view.setItemDelegate(CardDelegate(self.model))
        self.view.setFlow(QListView.Flow.LeftToRight)
        self.view.setWrapping(False)
        self.view.setUniformItemSizes(True)
        self.view.setHorizontalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.view.setFixedHeight(CARD_H + 24)          # one row of cards and the scroll bar
        self.view.selectionModel().currentChanged.connect(self._on_current)
        self.view.doubleClicked.connect(self.enlarge)
        self.model.modelReset.connect(self._restore_current)
        self.note = QLineEdit()
        self.note.setPlaceholderText("Review note (why approve or reject)")
        self.approve_button = QPushButton("Approve")
        self.reject_button = QPushButton("Reject")
        self.approve_button.clicked.connect(lambda: self.review("approve"))
        self.reject_button.clicked.connect(lambda: self.review("reject"))
        self.detail = QLabel("")
        self.detail.setWordWrap(True)
        strip = QHBoxLayout()
        strip.addWidget(self.note, 1)
        strip.addWidget(self.approve_button)
        strip.addWidget(self.reject_button)
        self.key_name = QLineEdit()            # keys are named and described in place
        self.key_name.setPlaceholderText("new key's name")
        self.key_name.setMaximumWidth(180)
        self.key_description = QLineEdit()
        self.key_description.setPlaceholderText("what this key shows (the selected key's description)")
        self.key_button = QPushButton("Key this frame")
        self.key_button.setToolTip("Key the pose shown at the playhead as a new state (I)")
        self.move_button = QPushButton("Move key here")
        self.move_button.setToolTip("Move the selected key to the playhead's frame")
        self.delete_button = QPushButton("Delete key")
        self.key_button.clicked.connect(self.key_this_frame)
        self.key_name.returnPressed.connect(self.key_this_frame)
        self.key_description.returnPressed.connect(self.describe_selected)
        self.move_button.clicked.connect(self.move_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        keys = QHBoxLayout()
        keys.addWidget(self.key_name)
        keys.addWidget(self.key_description, 1)
        keys.addWidget(self.key_button)
        keys.addWidget(self.move_button)
        keys.addWidget(self.delete_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.view)
        lay.addLayout(strip)
        lay.addLayout(keys)
        lay.addWidget(self.detail)
        sc = QShortcut(QKeySequence("I"), self)
        sc.setWhatsThis("Key this frame")
        sc.setContext(Qt.ShortcutContext.WindowShortcut)
        sc.activated.connect(self.key_this_frame)
        for keys, verdict in (("Ctrl+Shift+A", "approve"), ("Ctrl+Shift+R", "reject")):
            sc = QShortcut(QKeySequence(keys), self)
            sc.setWhatsThis(f"{verdict.capitalize()} the selected key state")
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(lambda v=verdict: self.review(v))
        self._current_id = ""
        self._proposed = ""
        playhead.frame_changed.connect(self._propose_key_name)
        self._show_detail()

    # ---- selection -------------------------------------------------------
    def enlarge(self, index) -> None:
        """The card's still at full size in its own window."""
        card = index.data(CardRole)
        path = self.model.still_path(card) if card else None
        if path is None:
            self.message.emit(f"{card.state_id if card else 'this card'} has no still yet: Render stills in Jobs")
            return
        from studio.ui.qt_still import QtStill
        self.enlarged = QtStill(path, f"{card.state_id} @ {card.frame} — {card.status}", self)
        self.enlarged.show()

    def current_card(self) -> Card | None:
        idx = self.view.currentIndex()
        return idx.data(CardRole) if idx.isValid() else None

    def select_state(self, state_id: str) -> None:
        row = self.model.row_of(state_id)
        if row >= 0:
            self.view.setCurrentIndex(self.model.index(row))

    def _on_current(self, current, _previous) -> None:
        card = current.data(CardRole) if current.isValid() else None
        self._current_id = card.state_id if card else ""
        if card is not None:
            self.playhead.set_frame(card.frame)
        self._show_detail()

    def _restore_current(self) -> None:
        if self._current_id:
            row = self.model.row_of(self._current_id)
            if row >= 0:
                self.view.selectionModel().blockSignals(True)
                self.view.setCurrentIndex(self.model.index(row))
                self.view.selectionModel().blockSignals(False)
        self._show_detail()

    def _show_detail(self) -> None:
        card = self.current_card()
        if card is None:
            self.detail.setText("Select a state to review it." if self.session.cards else
                                "No key states yet: pose the scene and Key this frame (I)." if self.session.scene.bodies
                                else "An empty scene: add a floor and bodies in the Scene dock, then key poses here.")
        else:
            why = "; ".join(card.reasons) or "approved, passing and current"
            why += f" ({card.reviewed})" if card.reviewed else ""
            seg = f"  ·  segment {card.segment}: {card.segment_status}" if card.segment else ""
            self.detail.setText(f"<b>{card.state_id}</b> @ {card.frame} — {card.status}: {why}{seg}")
        ok = card is not None and card.authored
        self.approve_button.setEnabled(ok)
        self.reject_button.setEnabled(ok)
        self.move_button.setEnabled(ok)
        self.delete_button.setEnabled(ok)
        if not self.key_description.hasFocus():
            self.key_description.setText(card.description if card else "")
        self._propose_key_name()

    def _propose_key_name(self, _frame: int | None = None) -> None:
        """The new key's name follows the playhead (`key_1120` at 1120), unless a person typed one."""
        frame = self.playhead.frame
        keyed = next((s.id for s in self.session.states if s.frame == frame), None)
        typed = self.key_name.text().strip() not in ("", self._proposed)      # a name a person typed stays
        if not self.key_name.hasFocus() and not typed:
            # a keyed frame proposes no name: Key this frame would only be refused there
            self._proposed = "" if keyed else keying.default_key_name(self.session, frame)
            self.key_name.setText(self._proposed)
        self.key_name.setPlaceholderText(f"frame {frame} is keyed by {keyed}" if keyed else "new key's name")
        self.key_button.setEnabled(bool(self.session.scene.bodies) and keyed is None)
        self.key_button.setToolTip(
            "Nothing to key yet: add bodies in the Scene dock first" if not self.session.scene.bodies
            else f"Frame {frame} is keyed already by {keyed}: move the playhead, or select {keyed} to edit it"
            if keyed else "Key the pose shown at the playhead as a new state (I)")

    # ---- keys ------------------------------------------------------------
    def key_this_frame(self) -> None:
        frame = self.playhead.frame
        name = self.key_name.text().strip() or keying.default_key_name(self.session, frame)
        description = "" if self.current_card() else self.key_description.text().strip()
        self._edit(lambda: keying.key_frame(self.session, self.stack, frame, name, description),
                   f"Keyed {name} at frame {frame}")
        self.key_name.clear()
        if any(s.id == name for s in self.session.states):
            self.select_state(name)

    def move_selected(self) -> None:
        card = self.current_card()
        if card is not None and card.authored:
            frame = self.playhead.frame
            self._edit(lambda: keying.move_key(self.session, self.stack, card.state_id, frame),
                       f"Moved {card.state_id} to frame {frame}")

    def describe_selected(self) -> None:
        card = self.current_card()
        if card is not None and card.authored:
            text = self.key_description.text().strip()
            self._edit(lambda: keying.describe_key(self.session, self.stack, card.state_id, text),
                       f"Described {card.state_id}")

    def delete_selected(self) -> None:
        card = self.current_card()
        if card is not None and card.authored:
            self._current_id = ""
            self._edit(lambda: keying.delete_key(self.session, self.stack, card.state_id),
                       f"Deleted {card.state_id} (Edit › Undo brings it back)")

    def _edit(self, fn, done: str) -> None:
        try:
            fn()
        except ValueError as e:
            self.message.emit(str(e))
            return
        self.session.refresh()
        self.message.emit(done)

    # ---- review ----------------------------------------------------------
    def review(self, verdict: str) -> None:
        card = self.current_card()
        if card is None or not card.authored:
            self.message.emit("Select an authored state to review.")
            return
        if verdict == "reject" and not self.note.text().strip():
            self.message.emit(f"Say why {card.state_id} is rejected: a rejection needs a note.")
            self.note.setFocus()
            return
        box = ToolBox(self.session.project, self.stack, actor="person")
        try:
            if verdict == "approve" and needs_checks(self.session.project, card.state_id):
                box.call("run_verifiers", {"state": card.state_id})     # what is approved is checked first
            box.call("review_state", {"state": card.state_id, "verdict": verdict, "note": self.note.text().strip()})
        except ToolRefused as e:
            self.message.emit(str(e))
            return
        self.note.clear()
        self.message.emit(f"{'Approved' if verdict == 'approve' else 'Rejected'} {card.state_id}")
