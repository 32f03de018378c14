"""Keying in the window: a key at the playhead from the pose shown there,
named and described in place, moved and deleted from the storyboard; each is a
tool-layer call on the window's stack (undoable) and lands in the database."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from studio.scene.io import save_scene
from studio.timeline.storyboard import get_state, list_states
from ui_scenes import boxes_scene, open_window

pytestmark = pytest.mark.gui


def test_key_this_frame_on_an_empty_project_then_move_describe_and_delete(qtbot, tmp_project, tmp_path):
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    save_scene(tmp_project, boxes_scene())
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
    board = w.storyboard
    assert w.playhead.last >= 1240             # an empty project still has a timeline
    w.playhead.set_frame(1040)
    board.key_name.setText("crouch")
    board.key_description.setText("the arm folded in")
    qtbot.mouseClick(board.key_button, Qt.MouseButton.LeftButton)
    st = get_state(tmp_project, "crouch")
    assert st is not None and st.frame == 1040 and st.description == "the arm folded in"
    assert st.pose.completed(w.session.scene).roots["post"] == [1, 1, 0, 1, 0, 0, 0]   # the rest pose shown
    assert w.undo_action.text() == "Undo set state crouch"
    qtbot.waitUntil(lambda: [c.state_id for c in w.session.cards] == ["crouch"], timeout=5000)
    w.grab().save(str(tmp_path / "keyed.png"))

    w.playhead.set_frame(1100)                 # a second key from the pose held there
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    qtbot.keyClick(w.viewport.plotter.interactor, Qt.Key.Key_I)   # I keys wherever the focus is, but text
    names = [s.id for s in list_states(tmp_project)]
    assert names == ["crouch", "key_1100"]

    board.select_state("crouch")
    w.playhead.set_frame(1060)
    qtbot.mouseClick(board.move_button, Qt.MouseButton.LeftButton)
    assert get_state(tmp_project, "crouch").frame == 1060
    w.playhead.set_frame(1100)                 # onto another key's frame: refused, said why
    msgs = []
    board.message.connect(msgs.append)
    qtbot.mouseClick(board.move_button, Qt.MouseButton.LeftButton)
    assert get_state(tmp_project, "crouch").frame == 1060
    assert "keyed already by 'key_1100'" in msgs[-1]
    # a keyed frame proposes no name and offers no key: the field says which key holds the frame
    assert board.key_name.text() == "" and "keyed by key_1100" in board.key_name.placeholderText()
    assert not board.key_button.isEnabled()
    w.playhead.set_frame(1101)
    assert board.key_name.text() == "key_1101" and board.key_button.isEnabled()

    board.select_state("key_1100")
    qtbot.mouseClick(board.delete_button, Qt.MouseButton.LeftButton)
    assert [s.id for s in list_states(tmp_project)] == ["crouch"]
    w.undo_action.trigger()                    # Edit › Undo brings the key back, exactly
    assert [s.id for s in list_states(tmp_project)] == ["crouch", "key_1100"]


def test_a_key_from_a_held_state_copies_its_pose_and_a_rejection_needs_a_note(qtbot, tmp_project):
    w = open_window(qtbot, tmp_project)
    board = w.storyboard
    w.playhead.set_frame(1030)                 # s2 (1025) holds here
    board.key_name.setText("between")
    qtbot.mouseClick(board.key_button, Qt.MouseButton.LeftButton)
    s2, new = get_state(tmp_project, "s2"), get_state(tmp_project, "between")
    assert new.frame == 1030 and new.shot == "wide"
    assert np.allclose(new.pose.roots["crate"], s2.pose.roots["crate"])
    board.key_name.setText("between")          # the same name again: refused, nothing changes
    msgs = []
    board.message.connect(msgs.append)
    w.playhead.set_frame(1035)
    qtbot.mouseClick(board.key_button, Qt.MouseButton.LeftButton)
    assert "exists already" in msgs[-1] and len(list_states(tmp_project)) == 4
    board.select_state("s1")
    board.note.clear()
    qtbot.mouseClick(board.reject_button, Qt.MouseButton.LeftButton)
    assert "needs a note" in msgs[-1]
    from studio.timeline.reviews import list_reviews
    assert list_reviews(tmp_project, "s1") == []


def test_show_film_key_state_or_both_with_the_key_as_a_ghost(qtbot, tmp_path):
    import shutil
    from pathlib import Path

    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "projects" / "doorway", tmp_path / "doorway")
    w = MainWindow(Session.open(tmp_path / "doorway"))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) > 10, timeout=30000)
    vp = w.viewport
    states = w.session.states
    a, b = states[0], states[1]                          # mid-segment the film leaves the held key
    w.playhead.set_frame((a.frame + b.frame) // 2)
    film = vp.screenshot(str(tmp_path / "film.png"))
    assert vp.key_ghost_bodies == []
    vp.set_showing("state")
    state = vp.screenshot(str(tmp_path / "state.png"))
    held = w.session.key_world_at(w.playhead.frame)
    shown = {n: np.array([[vp._matrices[n].GetElement(i, j) for j in range(4)] for i in range(4)]) for n in held}
    assert all(np.allclose(shown[n], held[n]) for n in held)     # the bodies stand where the key puts them
    vp.set_showing("both")
    both = vp.screenshot(str(tmp_path / "both.png"))
    moving = vp.key_ghost_bodies
    assert moving and "floor" not in moving and len(moving) < len(vp.actors)   # only the bodies that move
    changed = lambda x, y: np.mean(np.abs(x[..., :3].astype(int) - y[..., :3].astype(int)).sum(-1) > 30)
    assert changed(film, state) > 0.002              # the key's pose is not the film's here
    assert changed(film, both) > 0.002               # the ghost is drawn over the film
    w.playhead.set_frame(a.frame)                    # at the key itself film and key agree: no ghost
    assert vp.key_ghost_bodies == []


def test_the_history_panel_lists_who_reviewed_a_state_when_and_why(qtbot, tmp_project):
    from studio.checks.run import verify_state
    w = open_window(qtbot, tmp_project)
    board, history = w.storyboard, w.panels["History"]
    verify_state(w.session.project, "s1")
    board.select_state("s1")
    board.note.setText("crate sits flat")
    qtbot.mouseClick(board.approve_button, Qt.MouseButton.LeftButton)
    board.note.setText("the arm points at the wall")
    qtbot.mouseClick(board.reject_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: history.tree.topLevelItemCount() == 2, timeout=5000)
    rows = [[history.tree.topLevelItem(i).text(c) for c in range(5)] for i in range(2)]
    assert [r[:3] for r in rows] == [["s1", "reject", "person"], ["s1", "approve", "person"]]
    assert [r[4] for r in rows] == ["the arm points at the wall", "crate sits flat"]
    assert "Reviews of <b>s1</b>" in history.title.text()
    w.playhead.set_frame(1049)                       # s3, never reviewed
    assert history.tree.topLevelItemCount() == 0
    history.all_states.setChecked(True)
    assert history.tree.topLevelItemCount() == 2


def test_compare_two_key_states_side_by_side_in_synced_views(qtbot, tmp_path):
    import shutil
    from pathlib import Path

    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "projects" / "doorway", tmp_path / "doorway")
    w = MainWindow(Session.open(tmp_path / "doorway"))
    qtbot.addWidget(w)
    w.show()
    assert w.compare_action.isEnabled()
    first, second = w.session.states[0].id, w.session.states[1].id
    dialog = w.compare_states(first, second, modal=False)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.differ and "floor" not in dialog.differ          # the robot moved, the room did not
    assert f"{first} @" in dialog.caption.text() and "bodies differ" in dialog.caption.text()
    img = dialog.plotter.screenshot(str(tmp_path / "compare.png"), return_img=True)
    half = img.shape[1] // 2
    left, right = img[:, :half, :3].astype(int), img[:, half:2 * half, :3].astype(int)
    assert np.mean(np.abs(left - right).sum(-1) > 30) > 0.002      # the two sides show different poses
    cam = dialog.plotter.renderers[0].camera                        # the views are linked: one camera
    assert cam is dialog.plotter.renderers[1].camera or \
        np.allclose(cam.position, dialog.plotter.renderers[1].camera.position)
    dialog.pick[1].setCurrentText(first)                            # A against itself: nothing differs
    assert dialog.differ == []
    dialog.reject()


def test_a_key_dragged_along_the_ruler_moves_to_the_frame_it_is_dropped_on(qtbot, tmp_project):
    from PySide6.QtCore import QPoint
    from studio.ui.qt_scrubber import RULER_H
    w = open_window(qtbot, tmp_project)
    bar = w.scrubber.bar
    y = RULER_H // 2
    start = QPoint(round(bar.x_of(1025)), y)               # s2's tick
    end = QPoint(round(bar.x_of(1035)), y)
    qtbot.mousePress(bar, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    qtbot.mouseMove(bar, end)
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtCore import QEvent, QPointF
    bar.mouseMoveEvent(QMouseEvent(QEvent.Type.MouseMove, QPointF(end), QPointF(bar.mapToGlobal(end)),
                                   Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton,
                                   Qt.KeyboardModifier.NoModifier))
    assert bar.dragging is not None and bar.dragging[0] == "s2"
    qtbot.mouseRelease(bar, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    moved = get_state(tmp_project, "s2").frame
    assert moved == bar.frame_at(end.x()) and moved != 1025
    assert w.undo_action.text().startswith("Undo") and "s2" in w.undo_action.text()
    w.undo_action.trigger()
    assert get_state(tmp_project, "s2").frame == 1025
