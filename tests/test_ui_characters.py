"""Scene › Add character: the library in a dialog, a character added by the import_character tool
call (undoable), drawn in the viewport; a skinned one deforms as the key state poses it."""
from __future__ import annotations

import numpy as np
import pytest

from studio.scene.io import load_scene
from ui_scenes import open_window

pytestmark = pytest.mark.gui


def test_add_a_skinned_character_from_the_library_and_see_it_posed(qtbot, tmp_project, shots):
    w = open_window(qtbot, tmp_project)
    w.add_character_action.trigger()
    dialog = w._character_dialog
    names = [dialog.list.item(i).data(257) for i in range(dialog.list.count())]
    assert {"g1", "go2", "panda", "person"} <= set(names)
    dialog.list.setCurrentRow(names.index("person"))
    dialog.name.setText("anna")
    dialog.add()
    qtbot.waitUntil(lambda: "anna-skin" in w.viewport.actors, timeout=60000)
    scene = load_scene(tmp_project)
    assert scene.character("anna").source == "gltf"
    assert w.stack.undo_label == "Undo import character anna"
    w.stack.undo()                                                    # one undoable edit
    assert "anna-skin" not in load_scene(tmp_project).body_names
    w.stack.redo()
    w.session.refresh()
    qtbot.waitUntil(lambda: "anna-skin" in w.viewport.actors, timeout=60000)
    skin, surface = w.viewport._skins["anna-skin"]
    resting = np.array(surface.points)
    from studio.tools.box import ToolBox
    ToolBox(tmp_project, w.stack, actor="person").call("set_state", {"state": "s1", "joints": {
        "anna-upper_arm_L-z": -1.2, "anna-forearm_L-x": 1.0}})
    w.session.refresh()
    w.viewport.set_showing("state")
    w.playhead.set_frame(1001)
    w.viewport.show_frame()
    posed = np.array(surface.points)
    assert np.linalg.norm(posed - resting, axis=1).max() > 0.3        # the arm came down: the skin deformed
    w.grab().save(str(shots / "add_character_posed.png"))
