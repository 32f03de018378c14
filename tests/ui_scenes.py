"""Small box scenes for the studio window's tests (a floor, a crate, a hinged arm)."""
from __future__ import annotations

from studio.scene.io import save_scene
from studio.scene.ir import Scene
from studio.scene.pose import Pose
from studio.timeline.storyboard import State, put_state


def boxes_scene() -> Scene:
    return Scene.from_dict({
        "name": "boxes",
        "materials": [{"name": "floor", "color": [0.5, 0.5, 0.55, 1]},
                      {"name": "crate", "color": [0.8, 0.5, 0.2, 1]},
                      {"name": "arm", "color": [0.2, 0.5, 0.8, 1]}],
        "bodies": [
            {"name": "floor", "kind": "ground", "material": "floor",
             "geometry": {"source": "box", "size": [4, 4, 0.1], "offset": {"position": [0, 0, -0.05]}}},
            {"name": "crate", "material": "crate",
             "geometry": {"source": "box", "size": [0.5, 0.5, 0.5], "offset": {"position": [0, 0, 0.25]}}},
            {"name": "post", "kind": "static", "material": "arm",
             "geometry": {"source": "box", "size": [0.2, 0.2, 1.0], "offset": {"position": [0, 0, 0.5]}}},
            {"name": "arm", "kind": "link", "material": "arm",
             "geometry": {"source": "box", "size": [0.8, 0.1, 0.1], "offset": {"position": [0.4, 0, 0]}}},
        ],
        "joints": [{"name": "shoulder", "type": "revolute", "parent": "post", "child": "arm",
                    "origin": {"position": [0, 0, 1.0]}, "axis": [0, 0, 1], "lower": -1.5, "upper": 1.5}],
        "cameras": [{"name": "wide", "position": [3, -3, 2], "target": [0, 0, 0.5]}],
        "rest": {"post": [1, 1, 0, 1, 0, 0, 0]},
    })


def add_boxes(project, states: int = 3) -> Scene:
    """Save the box scene and `states` key states 24 frames apart from frame 1001."""
    scene = boxes_scene()
    save_scene(project, scene)
    for i in range(states):
        pose = Pose({"crate": [-1 + 0.5 * i, 0, 0, 1, 0, 0, 0], "post": [1, 1, 0, 1, 0, 0, 0]},
                    {"shoulder": -1.0 + 0.5 * i})
        put_state(project, scene, State(id=f"s{i + 1}", frame=1001 + 24 * i, pose=pose, shot="wide",
                                        description=f"key {i + 1}"))
    return scene


def open_window(qtbot, project, states: int = 3):
    """The studio window on `project` with boxes added, shown at 1200x800, its actors drawn."""
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    add_boxes(project, states=states)
    w = MainWindow(Session.open(project.path))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitUntil(lambda: len(w.viewport.actors) == 4, timeout=15000)
    return w
