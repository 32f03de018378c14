"""Contact points in the viewport: at the pose shown, where bodies touch by the
checks' own contact query (`studio.checks.touching`), one small marker per
touching pair, drawn as a 2D overlay so a contact hidden under a body still
shows. The probe (prepared shapes) is made on a worker the first time the
markers are wanted; each pose's answer is kept, so scrubbing back costs a
look-up."""
from __future__ import annotations

import hashlib

import numpy as np
import pyvista as pv
from vtkmodules.vtkRenderingCore import vtkActor2D, vtkCoordinate, vtkPolyDataMapper2D

from studio.checks.touching import ContactProbe, Touch
from studio.scene.meshes import scene_meshes

from studio.ui.worker import Worker

CONTACT_COLOR = (0.2, 1.0, 0.85)          # a cool cyan, apart from every failure tint
MARKER_PX = 9
KEEP = 4096                                # poses whose answer is kept


def make_probe(scene, project_dir, state) -> ContactProbe:
    """The scene's shapes prepared for contact queries (a plain function for a worker)."""
    return ContactProbe(scene, scene_meshes(scene, project_dir))


class ContactMarks:
    """One 2D actor whose points are the touching pairs' contact points at the pose shown."""

    def __init__(self, viewport):
        self.vp = viewport
        self.probe: ContactProbe | None = None
        self._making: Worker | None = None
        self._generation = 0
        self._answers: dict[bytes, list[Touch]] = {}
        self.shown: list[Touch] = []
        self.poly = pv.PolyData(np.zeros((1, 3)))
        where = vtkCoordinate()
        where.SetCoordinateSystemToWorld()
        mapper = vtkPolyDataMapper2D()
        mapper.SetInputData(self.poly)
        mapper.SetTransformCoordinate(where)
        self.actor = vtkActor2D()
        self.actor.SetMapper(mapper)
        self.actor.GetProperty().SetColor(*CONTACT_COLOR)
        self.actor.GetProperty().SetPointSize(MARKER_PX)
        self.actor.VisibilityOff()
        self.actor.SetPickable(False)
        viewport.plotter.add_actor(self.actor, name="look-contacts", reset_camera=False, pickable=False, render=False)

    def reset(self) -> None:
        """The scene changed: a new probe when next wanted, no kept answers."""
        self._generation += 1
        self.probe, self._making = None, None
        self._answers.clear()

    def draw(self, on: bool) -> None:
        world = self.vp.shown_world() if on else {}
        touches = self.touches(world) if world else []
        self.shown = touches
        if not touches:
            self.actor.VisibilityOff()
            return
        self.poly.ShallowCopy(pv.PolyData(np.array([t.point for t in touches], float)))
        self.actor.VisibilityOn()

    def touches(self, world: dict[str, np.ndarray]) -> list[Touch]:
        if self.probe is None:
            self._make()
            return []
        key = hashlib.blake2b(b"".join(np.ascontiguousarray(world[n], float).tobytes()
                                       for n in self.probe.names if n in world), digest_size=16).digest()
        found = self._answers.get(key)
        if found is None:
            found = self.probe.at(world)
            if len(self._answers) >= KEEP:
                self._answers.pop(next(iter(self._answers)))
            self._answers[key] = found
        return found

    def _make(self) -> None:
        if self._making is not None:
            return
        gen = self._generation
        self._making = Worker(make_probe, self.vp.session.scene, self.vp.session.project.path)
        self._making.done.connect(lambda probe: self._made(gen, probe))
        self._making.failed.connect(lambda msg: self._failed(gen, msg))
        self._making.start()

    def _made(self, gen: int, probe: ContactProbe) -> None:
        if gen != self._generation:
            return
        self.probe, self._making = probe, None
        self.vp.show_frame(deferred=True)

    def _failed(self, gen: int, msg: str) -> None:
        if gen == self._generation:
            self.vp.caption.setText(f"contact points not drawn: {msg}")
