"""How the viewport looks beyond the bodies: a ground grid, shadows, ambient
occlusion, x-ray, contact points, and for the selected bodies an onion skin (a
few frames either side, fading) and a motion trail (the path of each selected
body's centre over two seconds).

Each is a toggle on the viewport's bar, and each costs what it draws: the grid
is one static actor; onion skin reuses the bodies' meshes with their own user
matrices, so a frame only copies matrices; a trail is one polyline rewritten
per frame. Contact points ask the checks' own contact query at the pose shown
(shapes prepared once on a worker, each pose's answer kept), and are drawn as
2D markers over everything, so a contact under a foot still shows. Shadows use
VTK's shadow-map pass and ambient occlusion its SSAO pass; on a software GL
each costs several times a plain frame (bench/bench_gui.py reports the ratios),
so they start off.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton
from vtkmodules.vtkCommonMath import vtkMatrix4x4

from studio.ui.qt_contacts import ContactMarks

ONION_OFFSETS = (-6, -4, -2, 2, 4, 6)       # frames either side
ONION_BEFORE, ONION_AFTER = (1.0, 0.45, 0.3), (0.3, 0.75, 1.0)
TRAIL_FRAMES = 48
TRAIL_COLOR = (1.0, 0.85, 0.25)
GRID_COLOR = (0.42, 0.44, 0.48)
XRAY_OPACITY = 0.35
SSAO_KERNEL = 32                             # samples per pixel: VTK's default 256 is for a GPU


class ViewportLook:
    """The toggles and the actors they add; the viewport calls `update` after placing bodies."""

    def __init__(self, viewport):
        self.vp = viewport
        self.button = QToolButton()              # "Look ▾": one narrow button on the viewport's bar
        self.button.setText("Look")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.button)
        self.button.setMenu(menu)
        self.grid, self.shadows, self.ssao, self.xray, self.contacts, self.onion, self.trails = (
            self._toggle(menu, text, tip) for text, tip in (
                ("Grid", "A ground grid under the scene (1 m squares)"),
                ("Shadows", "Shadows from the key light (costly on a software GL; turns ambient occlusion off)"),
                ("Ambient occlusion", "Screen-space ambient occlusion: creases and contacts darken "
                                      "(costly on a software GL; turns shadows off)"),
                ("X-ray", "See through every body"),
                ("Contact points", "Where bodies touch at this frame (within the checks' tolerance), "
                                   "drawn over everything"),
                ("Onion skin", "The selected bodies a few frames before (warm) and after (cool), fading"),
                ("Trails", "The path of each selected body over two seconds either side")))
        self.grid.setChecked(True)
        self.contacts.setChecked(True)
        for box in self.boxes:
            if box not in (self.shadows, self.ssao):
                box.toggled.connect(lambda _on: self.vp.show_frame())
        self.shadows.toggled.connect(self._shadows)
        self.ssao.toggled.connect(self._ssao)
        self.touch = ContactMarks(viewport)
        self._onion: dict[tuple[str, int], tuple[object, vtkMatrix4x4]] = {}
        self._grid_key = None

    @staticmethod
    def _toggle(menu: QMenu, text: str, tip: str) -> QAction:
        act = menu.addAction(text)
        act.setCheckable(True)
        act.setToolTip(tip)
        return act

    @property
    def boxes(self) -> tuple[QAction, ...]:
        return (self.grid, self.shadows, self.ssao, self.xray, self.contacts, self.onion, self.trails)

    # ---- per frame -------------------------------------------------------
    def update(self) -> None:
        self._draw_grid()
        self.touch.draw(self.contacts.isChecked())
        self._draw_onion()
        self._draw_trails()
        if self.xray.isChecked():
            for actor in self.vp.actors.values():
                actor.prop.opacity = min(actor.prop.opacity, XRAY_OPACITY)

    def _bounds(self) -> np.ndarray | None:
        if not self.vp.actors:
            return None
        b = np.array([a.GetBounds() for a in self.vp.actors.values()])
        return np.array([b[:, 0].min(), b[:, 1].max(), b[:, 2].min(), b[:, 3].max(), b[:, 4].min(), b[:, 5].max()])

    def _draw_grid(self) -> None:
        plotter = self.vp.plotter
        if not self.grid.isChecked() or not self.vp.actors:
            if self._grid_key is not None:
                plotter.remove_actor("look-grid", render=False)
                self._grid_key = None
            return
        key = len(self.vp.actors)
        if key == self._grid_key:
            return
        b = self._bounds()
        half = float(np.ceil(max(abs(b[:4]).max() * 2, 5.0)))
        lines = []
        for v in np.arange(-half, half + 0.5, 1.0):
            lines += [[v, -half], [v, half], [-half, v], [half, v]]
        pts = np.array([[x, y, b[4] - 0.001] for x, y in lines])
        cells = np.hstack([[2, i, i + 1] for i in range(0, len(pts), 2)])
        grid = pv.PolyData(pts, lines=cells)
        plotter.add_mesh(grid, color=GRID_COLOR, name="look-grid", render=False, reset_camera=False,
                         lighting=False, opacity=0.6, pickable=False)
        self._grid_key = key

    def _film_world(self) -> dict[str, np.ndarray] | None:
        return self.vp.session.film_world() if self.vp.session.film is not None else None

    def _draw_onion(self) -> None:
        plotter, frame = self.vp.plotter, self.vp.playhead.frame
        film = self._film_world()
        wanted: dict[tuple[str, int], np.ndarray] = {}
        if self.onion.isChecked() and film is not None:
            start, n = self.vp.session.film.frame_start, self.vp.session.film.n_frames
            for body in self.vp.playhead.selected:
                if body not in self.vp.actors or body not in film:
                    continue
                for off in ONION_OFFSETS:
                    i = frame + off - start
                    if 0 <= i < n:
                        wanted[(body, off)] = film[body][i]
        for key in set(self._onion) - set(wanted):
            plotter.remove_actor(self._onion.pop(key)[0], render=False)
        for (body, off), w in wanted.items():
            if (body, off) not in self._onion:
                fade = 1 - (abs(off) - 1) / (max(abs(o) for o in ONION_OFFSETS) + 1)
                ghost = plotter.add_mesh(self.vp.actors[body].mapper.dataset,
                                         color=ONION_BEFORE if off < 0 else ONION_AFTER, opacity=0.35 * fade,
                                         name=f"onion:{body}:{off}", render=False, reset_camera=False,
                                         pickable=False)
                m = vtkMatrix4x4()
                ghost.SetUserMatrix(m)
                self._onion[(body, off)] = (ghost, m)
            self._onion[(body, off)][1].DeepCopy(w.ravel())

    @property
    def onion_frames(self) -> list[tuple[str, int]]:
        """(body, offset) of every onion-skin ghost drawn now."""
        return sorted(self._onion)

    def _draw_trails(self) -> None:
        plotter = self.vp.plotter
        plotter.remove_actor("look-trails", render=False)
        film = self._film_world()
        if not self.trails.isChecked() or film is None or not self.vp.playhead.selected:
            return
        start, n = self.vp.session.film.frame_start, self.vp.session.film.n_frames
        i = self.vp.playhead.frame - start
        lo, hi = max(0, i - TRAIL_FRAMES), min(n, i + TRAIL_FRAMES + 1)
        polys = []
        for body in self.vp.playhead.selected:
            if body in film and hi - lo >= 2:
                centre = np.asarray(self.vp.actors[body].mapper.dataset.center) if body in self.vp.actors else np.zeros(3)
                w = film[body][lo:hi]
                pts = np.einsum("fij,j->fi", w[:, :3, :3], centre) + w[:, :3, 3]
                polys.append(pv.lines_from_points(pts))
        if polys:
            trail = polys[0] if len(polys) == 1 else polys[0].merge(polys[1:])
            plotter.add_mesh(trail, color=TRAIL_COLOR, line_width=2, name="look-trails", render=False,
                             reset_camera=False, lighting=False, pickable=False)

    def _shadows(self, on: bool) -> None:
        plotter = self.vp.plotter
        if on:
            self.ssao.setChecked(False)          # VTK's two passes do not compose: one at a time
            plotter.enable_shadows()
        else:
            plotter.disable_shadows()
        self.vp.show_frame()

    def _ssao(self, on: bool) -> None:
        """Ambient occlusion sized to the scene: a tenth of its diagonal, a modest kernel."""
        plotter = self.vp.plotter
        if on:
            self.shadows.setChecked(False)       # VTK's two passes do not compose: one at a time
            plotter.enable_ssao(radius=0.1 * self.vp.scene_size(), bias=0.002 * self.vp.scene_size(),
                                kernel_size=SSAO_KERNEL)
        else:
            plotter.disable_ssao()
        self.vp.show_frame()

    def clear(self) -> None:
        """Drop the ghosts (the scene's meshes were rebuilt)."""
        self.touch.reset()
        for ghost, _m in self._onion.values():
            self.vp.plotter.remove_actor(ghost, render=False)
        self._onion.clear()
        self._grid_key = None
