"""The 3D viewport: the scene at the playhead's frame, drawn by VTK through pyvistaqt.

Meshes are uploaded once per scene (tessellation runs on a worker, the actors
are made here on the GUI thread); scrubbing only rewrites each actor's user
matrix from the session's cached world matrices and requests a render, so a
frame costs a few matrix copies however many triangles the scene has.
Verifier failures at the frame tint the bodies involved (a light tint, so the
body stays readable): penetrating pairs toward red, joints past their limits
toward magenta, bodies failing only advisory checks toward muted amber; the
floor and fixed scenery keep their colour. A penetration also draws its
overlap: a red marker at each deepest point, one depth label per pair (labels
that would overlap on screen share a box), and an arrow along the push that
separates the pair. A key state's failure is drawn only where its bodies stand
in that state. A left click
without drag selects the body under the cursor. The camera follows the current shot, or orbits freely.
"""
from __future__ import annotations

import math

import numpy as np
import pyvista as pv
from pyvistaqt import QtInteractor
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget
from vtkmodules.vtkCommonMath import vtkMatrix4x4

from studio.scene.meshes import shown_mesh
from studio.scene.skin import deform

from studio.ui.playhead import Playhead
from studio.ui.qt_look import ViewportLook
from studio.ui.qt_pick import BodyPicker
from studio.ui.qt_session import QtSession
from studio.ui.worker import Worker

FAILURE_COLORS = {"penetration": (0.9, 0.1, 0.1), "floating": (1.0, 0.55, 0.0), "joint": (0.9, 0.0, 0.9),
                  "other": (0.9, 0.1, 0.1)}
ADVISORY_COLOR = (0.66, 0.53, 0.29)      # muted amber: an advisory check fails; it does not block export
SELECTED_COLOR = (1.0, 0.9, 0.2)
TINT = 0.5                                 # how far a failing body's colour moves toward its failure's
OVERLAP_COLOR = (1.0, 0.12, 0.1)
PENETRATING_OPACITY = 0.45
MARK_SHARE = 0.01                          # of the scene's size: a deepest point's marker
LABEL_GAP_PX = (140, 30)                   # labels nearer than this on screen share one box
ARROW_MIN = 0.06                           # of the scene's size: a push of a few mm is drawn this long; the label says how far
BACKGROUND = (0.16, 0.17, 0.19)
GHOST_COLOR = (0.3, 0.95, 0.4)
KEY_GHOST_COLOR = (0.45, 0.7, 1.0)         # "both": the key state's pose over the film
SHOW_MODES = (("film", "Film"), ("state", "Key state"), ("both", "Both: key over film"))


def tessellate(scene, project_dir, state) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Vertices and triangles of every body that has a surface, as shown (a robot link's visual
    geometry), in its own frame (runs on a worker)."""
    out = {}
    for b in scene.bodies:
        if b.has_surface or b.visual is not None:
            mesh = shown_mesh(b, project_dir)
            out[b.name] = (np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64))
    return out


def skin_of(body, project_dir):
    """A skin body's skin (None if its asset cannot be read: it is then drawn as it rests)."""
    from studio.scene.importers import resolve_path
    from studio.scene.skin import SkinError, load_skin
    try:
        return load_skin(resolve_path(body.geometry.path, project_dir))
    except (SkinError, OSError, ValueError):
        return None


def tint(base, toward, amount: float = TINT) -> tuple:
    return tuple((1 - amount) * b + amount * t for b, t in zip(base, toward))


def overlap_marks(fails, size: float = 1.0) -> pv.PolyData | None:
    """A sphere at each penetration's deepest point and an arrow along its push, as one mesh;
    `size` (the scene's diagonal, m) keeps them visible at any scale."""
    parts = []
    for f in fails:
        if f.kind != "penetration" or f.point is None:
            continue
        parts.append(pv.Sphere(radius=MARK_SHARE * size, center=f.point, theta_resolution=10, phi_resolution=8))
        if f.push is not None:
            push = np.asarray(f.push, float)
            length = float(np.linalg.norm(push))
            if length > 0:
                parts.append(pv.Arrow(start=f.point, direction=push / length, scale=max(length, ARROW_MIN * size),
                                      tip_resolution=12, shaft_resolution=8))
    if not parts:
        return None
    out = parts[0]
    for part in parts[1:]:
        out = out.merge(part)
    return out


def polydata(vertices: np.ndarray, faces: np.ndarray) -> pv.PolyData:
    cells = np.hstack([np.full((len(faces), 1), 3, np.int64), faces]).ravel()
    return pv.PolyData(vertices, cells)


class QtViewport(QWidget):
    meshes_shown = Signal(int)          # number of triangles on screen, after a scene (re)build

    def __init__(self, qsession: QtSession, playhead: Playhead, parent: QWidget | None = None):
        super().__init__(parent)
        self.qsession, self.session, self.playhead = qsession, qsession.session, playhead
        # No multisampling: on a software GL (llvmpipe) 4x MSAA costs 4-5x per frame.
        self.plotter = QtInteractor(self, auto_update=False, multi_samples=0, lighting="three lights")
        self.plotter.set_background(BACKGROUND)
        self.plotter.enable_trackball_style()
        self.camera_mode = QComboBox()
        self.camera_mode.addItems(["Shot camera", "Free orbit"])
        self.camera_mode.currentIndexChanged.connect(lambda _i: self._apply_camera(force=True))
        self.show_mode = QComboBox()
        self.show_mode.addItems([label for _k, label in SHOW_MODES])
        self.show_mode.setToolTip("What the viewport shows: the baked film, the key state that holds at "
                                  "the playhead, or both (the key as a blue ghost over the film). V cycles.")
        self.show_mode.currentIndexChanged.connect(lambda _i: self.show_frame())
        cycle = QShortcut(QKeySequence("V"), self)
        cycle.setWhatsThis("Show the film, the key state, or both")
        cycle.setContext(Qt.ShortcutContext.WindowShortcut)
        cycle.activated.connect(lambda: self.show_mode.setCurrentIndex((self.show_mode.currentIndex() + 1)
                                                                        % len(SHOW_MODES)))
        self.caption = QLabel("")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("View:"))
        bar.addWidget(self.camera_mode)
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.show_mode)
        self.look = ViewportLook(self)
        bar.addWidget(self.look.button)
        bar.addStretch(1)
        self.caption.setWordWrap(True)          # its own line: the figure of a failure is never clipped
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(self.caption)
        lay.addWidget(self.plotter.interactor, 1)
        self.actors: dict[str, object] = {}
        self._matrices: dict[str, vtkMatrix4x4] = {}
        self._colors: dict[str, tuple] = {}
        self._ghosts: dict[str, tuple[object, vtkMatrix4x4]] = {}
        self._key_ghosts: dict[str, tuple[object, vtkMatrix4x4]] = {}
        self._drawn_failures: tuple = ()
        self._camera_shown = None
        self._generation = 0
        self._render_queued = False
        self._render_timer = QTimer(self)      # a timer, not a posted call: timers and input due first run first
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(1)
        self._render_timer.timeout.connect(self._render_requested)
        self._closed = False
        self.triangles = 0
        qsession.scene_changed.connect(self.rebuild)
        qsession.film_changed.connect(self._on_changed)     # a new film: drawn with the burst's one render
        qsession.changed.connect(self._on_changed)
        playhead.frame_changed.connect(self.show_frame)
        playhead.selection_changed.connect(self._on_selection)
        self.picker = BodyPicker(self.plotter, lambda: self.actors, playhead)
        self.rebuild()

    # ---- building --------------------------------------------------------
    def rebuild(self) -> None:
        """Tessellate on a worker; the newest request wins."""
        self._generation += 1
        gen = self._generation
        w = Worker(tessellate, self.session.scene, self.session.project.path)
        w.done.connect(lambda meshes: gen == self._generation and self.show_meshes(meshes))
        w.failed.connect(lambda msg: self.caption.setText(f"scene not drawn: {msg}"))
        w.start()

    def show_meshes(self, meshes: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        """Make one actor per body (GUI thread only), then place them at the current frame."""
        for name in list(self.actors):
            self.plotter.remove_actor(self.actors.pop(name), render=False)
        for ghost, _m in self._key_ghosts.values():
            self.plotter.remove_actor(ghost, render=False)
        self._key_ghosts.clear()
        self.look.clear()
        self.clear_ghost()
        self._matrices.clear()
        self._colors.clear()
        materials = {m.name: m for m in self.session.scene.materials}
        bodies = {b.name: b for b in self.session.scene.bodies}
        self.triangles = 0
        self._skins = {}
        for name, (verts, faces) in meshes.items():
            body = bodies.get(name)
            mat = materials.get(body.material) if body else None
            color = tuple(mat.color[:3]) if mat else (0.75, 0.75, 0.75)
            surface = polydata(verts, faces)
            if body is not None and body.is_skin:      # deformed at every frame (see show_frame)
                self._skins[name] = (skin_of(body, self.session.project.path), surface)
            actor = self.plotter.add_mesh(surface, color=color, name=f"body:{name}",
                                          smooth_shading=False, render=False, reset_camera=False)
            m = vtkMatrix4x4()
            actor.SetUserMatrix(m)
            self.actors[name], self._matrices[name], self._colors[name] = actor, m, color
            self.triangles += len(faces)
        self._drawn_failures = ()
        self.show_frame()
        self._apply_camera(force=True)
        self.meshes_shown.emit(self.triangles)

    # ---- per frame -------------------------------------------------------
    @property
    def showing(self) -> str:
        return SHOW_MODES[self.show_mode.currentIndex()][0]

    def set_showing(self, mode: str) -> None:
        self.show_mode.setCurrentIndex([k for k, _l in SHOW_MODES].index(mode))

    def shown_world(self) -> dict[str, np.ndarray]:
        """Where each body is drawn now: the key state's pose in "state" mode, else the film's."""
        if not self.actors:
            return {}
        frame = self.playhead.frame
        return self.session.key_world_at(frame) if self.showing == "state" else self.session.world_at(frame)

    def request_render(self) -> None:
        """Render once the events queued now are handled: a burst of changes draws one frame."""
        if not self._render_queued:
            self._render_queued = True
            self._render_timer.start()

    def _render_requested(self) -> None:
        self._render_queued = False
        if not self._closed:
            self.plotter.render()

    def show_frame(self, *_args, deferred: bool = False) -> None:
        world = self.shown_world()
        for name, m in self._matrices.items():
            w = world.get(name)
            if w is not None:
                m.DeepCopy(w.ravel())
        self._deform_skins(world)
        self._draw_key_ghost(world)
        self._draw_failures()
        self.look.update()
        self._apply_camera()
        self._caption()
        if deferred:
            self.request_render()
        else:
            self.plotter.render()

    def _deform_skins(self, world: dict[str, np.ndarray]) -> None:
        """Each skin at this frame by linear blend skinning, drawn in world coordinates."""
        for name, (skin, surface) in getattr(self, "_skins", {}).items():
            if skin is None or not all(b in world for b in skin.bones):
                continue
            surface.points = deform(skin, np.stack([world[b] for b in skin.bones]))
            m = self._matrices.get(name)
            if m is not None:
                m.Identity()

    def set_world(self, world: dict[str, np.ndarray], render: bool = True) -> None:
        """Place bodies from given world matrices (scrubbing benchmark, manipulator previews)."""
        for name, m in self._matrices.items():
            w = world.get(name)
            if w is not None:
                m.DeepCopy(w.ravel())
        self._deform_skins(world)
        if render:
            self.plotter.render()

    def _on_selection(self, _bodies) -> None:
        self._draw_failures(force=True)
        self.look.update()
        self._caption()
        self.plotter.render()

    def _caption(self) -> None:
        """The frame, the selected bodies and what fails on them here."""
        frame, selected = self.playhead.frame, self.playhead.selected
        text = f"frame {frame}"
        if not self.session.scene.bodies:
            text += " · an empty scene: add a floor and bodies in the Scene dock (Body)"
        if selected:
            fails = [f for f in self.session.failures_at.get(frame, []) if set(f.bodies) & set(selected)]
            text += f" · selected {', '.join(selected)}"
            text += "".join(f" · {'' if f.required else 'advisory '}{f.check}: {f.text}" for f in fails[:3])
        self.caption.setText(text)

    def _on_changed(self) -> None:
        self.show_frame(deferred=True)         # the project changed, not the frame: one render per burst

    def _draw_failures(self, force: bool = False) -> None:
        fails = self.session.failures_at.get(self.playhead.frame, [])
        key = (tuple(fails), self.playhead.selected, self.look.xray.isChecked(), self.showing)
        if key == self._drawn_failures and not force:
            return
        self._drawn_failures = key
        colors = dict(self._colors)
        for b in self.playhead.selected:
            if b in colors:
                colors[b] = SELECTED_COLOR
        scenery = {b.name for b in self.session.scene.bodies if b.is_static}
        # tinted in rising order of weight, so a required failure wins over an advisory one on a body,
        # and penetration wins among the required; the floor and fixed scenery keep their colour (a
        # whole floor tinted red says nothing about where), the marker and the caption say it
        for f in sorted(fails, key=lambda f: (f.required, f.kind == "penetration")):
            for b in f.bodies:
                if b in colors and b not in scenery:
                    colors[b] = tint(self._colors[b], FAILURE_COLORS[f.kind] if f.required else ADVISORY_COLOR)
        placed = self.placed_failures(fails)
        # a penetrating pair turns translucent, so its overlap (inside both bodies) can be seen
        see_through = {b for f in placed if f.kind == "penetration" for b in f.bodies if b not in scenery}
        for name, actor in self.actors.items():
            actor.prop.color = colors[name]
            actor.prop.opacity = PENETRATING_OPACITY if name in see_through else 1.0
        self.plotter.remove_actor("overlap-marks", render=False)
        marks = overlap_marks(placed, self.scene_size())
        if marks is not None:
            self.plotter.add_mesh(marks, color=OVERLAP_COLOR, name="overlap-marks", render=False,
                                  reset_camera=False, lighting=False)
        self.plotter.remove_actor("failure-labels", render=False)
        labels = self.failure_labels(placed)
        if labels:
            self.plotter.add_point_labels(np.array([p for p, _t in labels]), [t for _p, t in labels],
                                          name="failure-labels", font_size=12, point_color="red",
                                          point_size=8, text_color="white", shape_opacity=0.6,
                                          always_visible=True, render=False, reset_camera=False)

    def placed_failures(self, fails) -> list:
        """The failures with a point that sits on the bodies as drawn: a state's failure was found at
        the state's pose, so its marker is drawn only where the bodies stand in that pose (Key state
        view, the ghost in Both, or a film that passes through the state there), never in empty space."""
        out = []
        shown = self.shown_world()
        for f in fails:
            if f.point is None:
                continue
            if f.target.startswith("state:") and self.showing == "film":
                key = self.session.key_world_at(self.playhead.frame)
                if not all(b in shown and b in key and np.allclose(shown[b], key[b], atol=1e-6) for b in f.bodies):
                    continue
            out.append(f)
        return out

    def failure_labels(self, fails) -> list[tuple[tuple, str]]:
        """One label per failing pair or body (its deepest point), and labels that would land on each
        other on screen joined into one box, so no figure hides another."""
        best: dict[tuple, object] = {}
        for f in fails:
            k = (f.check, f.bodies)
            depth = float(np.linalg.norm(f.push)) if f.push is not None else 0.0
            if k not in best or depth > best[k][0]:
                best[k] = (depth, f)
        boxes: list[list] = []         # [screen x, screen y, point, [texts]]
        renderer = self.plotter.renderer
        for _d, f in best.values():
            renderer.SetWorldPoint(*f.point, 1.0)
            renderer.WorldToDisplay()
            x, y, _z = renderer.GetDisplayPoint()
            near = next((b for b in boxes if abs(b[0] - x) < LABEL_GAP_PX[0] and
                         abs(b[1] - y) < LABEL_GAP_PX[1] * len(b[3])), None)
            if near is None:
                boxes.append([x, y, f.point, [f.text]])
            elif f.text not in near[3]:
                near[3].append(f.text)
        return [(b[2], "\n".join(b[3])) for b in boxes]

    def bodies_bounds(self) -> tuple | None:
        """(xmin, xmax, ymin, ymax, zmin, zmax) of the bodies as drawn, None with no body."""
        if not self.actors:
            return None
        b = np.array([a.GetBounds() for a in self.actors.values()])
        return (b[:, 0].min(), b[:, 1].max(), b[:, 2].min(), b[:, 3].max(), b[:, 4].min(), b[:, 5].max())

    def scene_size(self) -> float:
        """The diagonal of the bodies' bounds (m), for markers that read at any scale."""
        if not self.actors:
            return 1.0
        b = np.array([a.GetBounds() for a in self.actors.values()])
        lo, hi = b[:, 0::2].min(axis=0), b[:, 1::2].max(axis=0)
        return float(max(0.1, np.linalg.norm(hi - lo)))

    def body_color(self, name: str) -> tuple:
        return tuple(self.actors[name].prop.color.float_rgb)

    def failure_color(self, name: str, kind: str, required: bool = True) -> tuple:
        """The colour a body takes when a failure of `kind` names it: its own, tinted."""
        return tint(self._colors[name], FAILURE_COLORS[kind] if required else ADVISORY_COLOR)

    # ---- repair preview --------------------------------------------------
    def show_ghost(self, world: dict[str, np.ndarray]) -> None:
        """Draw the bodies that move at `world` as translucent green: the 'after' of a repair."""
        self.clear_ghost()
        current = self.shown_world()
        for name, actor in self.actors.items():
            w = world.get(name)
            if w is None or (name in current and np.allclose(current[name], w, atol=1e-6)):
                continue
            ghost = self.plotter.add_mesh(actor.mapper.dataset, color=GHOST_COLOR, opacity=0.45,
                                          name=f"ghost:{name}", render=False, reset_camera=False)
            m = vtkMatrix4x4()
            m.DeepCopy(w.ravel())
            ghost.SetUserMatrix(m)
            self._ghosts[name] = (ghost, m)
        self.plotter.render()

    def _draw_key_ghost(self, world: dict[str, np.ndarray]) -> None:
        """In "both", the key state's pose as a blue ghost on every body where it leaves the film."""
        key = self.session.key_world_at(self.playhead.frame) if self.showing == "both" and self.actors else {}
        moved = {n: w for n, w in key.items()
                 if n in self.actors and n in world and not np.allclose(world[n], w, atol=1e-6)}
        for name in set(self._key_ghosts) - set(moved):
            self.plotter.remove_actor(self._key_ghosts.pop(name)[0], render=False)
        for name, w in moved.items():
            if name not in self._key_ghosts:
                ghost = self.plotter.add_mesh(self.actors[name].mapper.dataset, color=KEY_GHOST_COLOR,
                                              opacity=0.4, name=f"key-ghost:{name}", render=False,
                                              reset_camera=False)
                m = vtkMatrix4x4()
                ghost.SetUserMatrix(m)
                self._key_ghosts[name] = (ghost, m)
            self._key_ghosts[name][1].DeepCopy(w.ravel())

    @property
    def key_ghost_bodies(self) -> list[str]:
        return sorted(self._key_ghosts)

    def clear_ghost(self) -> None:
        if not self._ghosts:
            return
        for name, (ghost, _m) in list(self._ghosts.items()):
            self.plotter.remove_actor(ghost, render=False)
        self._ghosts.clear()
        self.request_render()

    @property
    def ghost_bodies(self) -> list[str]:
        return sorted(self._ghosts)

    # ---- camera ----------------------------------------------------------
    def _apply_camera(self, force: bool = False) -> None:
        if self.camera_mode.currentIndex() == 1:
            self._camera_shown = None
            if force:
                self.plotter.reset_camera(render=False)
            return
        cam = self.session.camera_at(self.playhead.frame)
        key = None if cam is None else (cam.name, tuple(cam.position), tuple(cam.target), cam.lens_mm,
                                        cam.sensor_mm, tuple(cam.resolution))
        if key == self._camera_shown and not force:
            return                     # same shot: leave the view alone (and skip the clipping reset)
        self._camera_shown = key
        if cam is None:
            if force:                  # no camera yet: look at the bodies (not the grid around them)
                self.plotter.view_isometric(render=False)
                self.plotter.reset_camera(render=False, bounds=self.bodies_bounds())
                self.plotter.camera_set = True     # else the next render frames everything, the grid too
            return
        c = self.plotter.camera
        c.position, c.focal_point, c.up = tuple(cam.position), tuple(cam.target), (0.0, 0.0, 1.0)
        w, h = cam.resolution
        half_h = math.atan(cam.sensor_mm / 2 / cam.lens_mm * (h / w if w >= h else 1.0))
        c.view_angle = math.degrees(2 * half_h)
        self.plotter.reset_camera_clipping_range()

    def screenshot(self, path=None) -> np.ndarray:
        self.plotter.render()
        return self.plotter.screenshot(path, return_img=True)

    def close_viewport(self) -> None:
        self._closed = True
        self._render_timer.stop()
        self._generation += 1
        self.look.touch.reset()                  # a probe still being made lands nowhere
        self.picker.detach()
        self.plotter.close()
