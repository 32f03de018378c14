"""A/B compare: two key states side by side in two synced views.

One plotter with two subplots whose cameras are linked, so orbiting either
turns both; each side draws the scene's meshes (shared, not copied) at one
state's pose, and the bodies that differ between the two are tinted on both
sides. Read-only: nothing here edits the project.
"""
from __future__ import annotations

import numpy as np
from pyvistaqt import QtInteractor
from PySide6.QtWidgets import QComboBox, QDialog, QHBoxLayout, QLabel, QVBoxLayout, QWidget
from vtkmodules.vtkCommonMath import vtkMatrix4x4

from studio.scene.kinematics import pose_world

from studio.ui.qt_viewport import BACKGROUND, polydata, tessellate

DIFFER = (0.95, 0.6, 0.2)


class QtCompare(QDialog):
    def __init__(self, session, a: str | None = None, b: str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Compare key states")
        self.resize(1200, 560)
        self.session = session
        ids = [s.id for s in session.states]
        self.pick = [QComboBox(), QComboBox()]
        for box, default in zip(self.pick, (a or ids[0], b or ids[min(1, len(ids) - 1)])):
            box.addItems(ids)
            box.setCurrentText(default)
            box.currentIndexChanged.connect(lambda _i: self.show_states())
        self.caption = QLabel("")
        self.plotter = QtInteractor(self, shape=(1, 2), auto_update=False, multi_samples=0)
        self.plotter.set_background(BACKGROUND)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("A:"))
        bar.addWidget(self.pick[0])
        bar.addStretch(1)
        bar.addWidget(self.caption)
        bar.addStretch(1)
        bar.addWidget(QLabel("B:"))
        bar.addWidget(self.pick[1])
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.plotter.interactor, 1)
        materials = {m.name: m for m in session.scene.materials}
        self.colors, self.matrices = {}, ([{}, {}])
        meshes = tessellate(session.scene, session.project.path, None)
        for side in (0, 1):
            self.plotter.subplot(0, side)
            for body in session.scene.bodies:
                if body.name not in meshes:
                    continue
                mat = materials.get(body.material)
                color = tuple(mat.color[:3]) if mat else (0.75, 0.75, 0.75)
                actor = self.plotter.add_mesh(polydata(*meshes[body.name]), color=color, render=False,
                                              reset_camera=False, name=f"{side}:{body.name}")
                m = vtkMatrix4x4()
                actor.SetUserMatrix(m)
                self.matrices[side][body.name] = (actor, m)
                self.colors[body.name] = color
        self.plotter.link_views()
        self.show_states()
        self.plotter.subplot(0, 0)
        self.plotter.reset_camera()
        cam = session.camera_at(next(s.frame for s in session.states if s.id == self.pick[0].currentText()))
        if cam is not None:
            c = self.plotter.camera
            c.position, c.focal_point, c.up = tuple(cam.position), tuple(cam.target), (0.0, 0.0, 1.0)
            self.plotter.reset_camera_clipping_range()
        self.plotter.render()

    def states(self):
        by_id = {s.id: s for s in self.session.states}
        return [by_id[box.currentText()] for box in self.pick]

    def show_states(self) -> list[str]:
        """Place both sides; returns the bodies whose pose differs (tinted on both sides)."""
        scene = self.session.scene
        worlds = [pose_world(scene, s.pose.completed(scene)) for s in self.states()]
        differ = sorted(n for n in worlds[0] if n in worlds[1] and not np.allclose(worlds[0][n], worlds[1][n],
                                                                                    atol=1e-6))
        for side, world in enumerate(worlds):
            for name, (actor, m) in self.matrices[side].items():
                if name in world:
                    m.DeepCopy(world[name].ravel())
                actor.prop.color = DIFFER if name in differ else self.colors[name]
        a, b = self.states()
        self.caption.setText(f"{a.id} @ {a.frame}  vs  {b.id} @ {b.frame}: "
                             f"{len(differ)} bodies differ" + (f" ({', '.join(differ[:6])}"
                                                              f"{'…' if len(differ) > 6 else ''})" if differ else ""))
        self.differ = differ
        self.plotter.render()
        return differ

    def done(self, result: int) -> None:
        self.plotter.close()
        super().done(result)
