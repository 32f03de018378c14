"""`Footage`: what every verifier looks at, prepared once per run.

The scene, each body's world matrix at every evaluated frame, each body's
prepared `Shape`, and the pairs of bodies worth measuring with their tau.
A pair is measured unless both bodies are static, either is a liquid or an
effect, or they are the two links of one joint (joint adjacency is support,
not contact). Of the measured pairs, penetration counts only those that are
not a declared overlap and involve no consumable body (`counted`).
Contacts are measured lazily and reused through a `ContactCache`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from typing import TYPE_CHECKING

import numpy as np

from studio.scene.ir import Scene
from studio.scene.kinematics import tracks_world
from studio.scene.pose import Pose, Tracks

from studio.checks.contacts import ContactCache, Contacts, measure, tau, world_boxes
from studio.checks.shape import Shape, shape_of

if TYPE_CHECKING:
    import trimesh


@dataclass
class Growth:
    """A body whose size changes during the film: a uniform factor per frame, and its mesh at each
    frame at factor 1 (one mesh unless it also changes shape: squash and stretch)."""

    factor: np.ndarray                 # (F,)
    meshes: list["trimesh.Trimesh"]
    which: np.ndarray                  # (F,) index into meshes


def excluded_body(scene: Scene, name: str) -> bool:
    """Liquids, effects and bodies without a surface (bones, a robot's frame links) take no part
    in contact, support or penetration."""
    b = scene.body(name)
    return b.kind == "effect" or b.has("liquid") or not b.has_surface


def measured_pairs(scene: Scene, names: list[str], shapes: list[Shape],
                   static: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P,2) pairs worth measuring, their tau, and whether penetration counts for each."""
    gone = {b for b in names if excluded_body(scene, b)}
    adjacent = {frozenset((j.parent, j.child)) for j in scene.joints}
    allowed = {frozenset((o.a, o.b)) for o in scene.allowed_overlaps}
    consumable = {b.name for b in scene.bodies if b.has("consumable")}
    pairs, taus, counted = [], [], []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = names[i], names[j]
            if (static[i] and static[j]) or a in gone or b in gone or frozenset((a, b)) in adjacent:
                continue
            pairs.append((i, j))
            taus.append(tau(shapes[i].thickness, shapes[j].thickness))
            counted.append(frozenset((a, b)) not in allowed and a not in consumable and b not in consumable)
    return np.asarray(pairs, np.int64).reshape(-1, 2), np.asarray(taus, float), np.asarray(counted, bool)


@dataclass
class Footage:
    scene: Scene
    tracks: Tracks
    frames: np.ndarray                 # (F,) frame numbers
    names: list[str]
    world: np.ndarray                  # (B,F,4,4)
    shapes: list[Shape]
    static: np.ndarray                 # (B,) bool
    pairs: np.ndarray                  # (P,2) measured pairs (index into names)
    taus: np.ndarray                   # (P,)
    counted: np.ndarray                # (P,) bool: penetration counts for this pair
    plan: dict | None = None
    scale: np.ndarray | None = None    # (B,F) uniform scale of bodies whose scale changes; None: all 1
    forms: dict = field(default_factory=dict)   # body index -> (shapes, (F,) which) for changing shapes
    states: list[tuple[int, Pose]] = field(default_factory=list)
    cache: ContactCache = field(default_factory=ContactCache)
    _contacts: Contacts | None = None
    _gap: np.ndarray | None = None
    _touching: np.ndarray | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    skins: dict = field(default_factory=dict)  # body index -> (deformed skin, bone indices): see checks.skinned

    @classmethod
    def build(cls, scene: Scene, meshes: dict[str, trimesh.Trimesh], tracks: Tracks, *,
              plan: dict | None = None, states: list[tuple[int, Pose]] | None = None,
              cache: ContactCache | None = None, growth: dict[str, Growth] | None = None) -> "Footage":
        """growth: bodies whose size changes (their mesh in `meshes` is the one at the first frame)."""
        names = [b.name for b in scene.bodies]
        missing = [n for n in names if n not in meshes]
        if missing:
            raise ValueError(f"no mesh for bodies {missing}")
        n = max(tracks.n_frames, 1)
        wd = tracks_world(scene, tracks) if tracks.n_frames else {}
        world = np.stack([np.asarray(wd[b], float) if b in wd else np.tile(np.eye(4), (n, 1, 1))
                          for b in names]) if names else np.zeros((0, n, 4, 4))
        shapes = [shape_of(meshes[b]) for b in names]
        scale, forms = None, {}
        if growth:
            scale = np.ones(world.shape[:2])
            for i, b in enumerate(names):
                if b in growth:
                    g = growth[b]
                    k = np.asarray(g.factor, float)[:n]
                    scale[i, :len(k)] = k
                    world[i, :len(k), :3, :3] *= k[:, None, None]
                    if len(g.meshes) > 1:
                        which = np.zeros(n, np.int64)
                        which[:len(k)] = np.asarray(g.which)[:n]
                        forms[i] = ([shape_of(m) for m in g.meshes], which)
        static = np.array([scene.body(b).is_static for b in names], bool)
        pairs, taus, counted = measured_pairs(scene, names, shapes, static)
        frames = tracks.frames if tracks.n_frames else np.zeros(0, np.int64)
        film = cls(scene, tracks, frames, names, world, shapes, static, pairs, taus, counted,
                   plan, scale, forms, list(states or []), cache or ContactCache())
        if any("skin" in meshes[b].metadata for b in names):
            from studio.checks.skinned import skins_of
            film.skins = skins_of(scene, names, meshes)
        return film

    @property
    def n_frames(self) -> int:
        return len(self.frames)

    def index(self, body: str) -> int:
        return self.names.index(body)

    @property
    def tau_fp(self) -> np.ndarray:
        """(F,P) tau of each pair at each frame (thickness at the frame's scale)."""
        if self.scale is None or len(self.pairs) == 0:
            return np.broadcast_to(self.taus[None, :], (self.n_frames, len(self.pairs)))
        th = np.array([s.thickness for s in self.shapes])[:, None] * self.scale[:, :self.n_frames]
        for b, (variants, which) in self.forms.items():
            th[b] = np.array([v.thickness for v in variants])[which[:self.n_frames]] * self.scale[b, :self.n_frames]
        return tau(th[self.pairs[:, 0]], th[self.pairs[:, 1]]).T

    @property
    def boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """World bounding boxes (B,F,3) min and max of every body at every frame (made once)."""
        if "world_boxes" not in self.extra:
            self.extra["world_boxes"] = world_boxes(self.shapes, self.world[:, :self.n_frames], self.forms)
        return self.extra["world_boxes"]

    @property
    def contacts(self) -> Contacts:
        """Every measured pair-frame within tau of touching (or overlapping)."""
        if self._contacts is None:
            if self.skins:
                self._contacts = self._with_skins(self.pairs, self.taus, self.taus)
            else:
                self._contacts = measure(self.shapes, self.world[:, :self.n_frames], self.pairs, self.taus,
                                         self.taus, self.cache, self.scale, self.forms, boxes=self.boxes)
        return self._contacts

    def _with_skins(self, pairs: np.ndarray, taus: np.ndarray, margins: np.ndarray) -> Contacts:
        """Rigid pairs as always; pairs holding a skin through its deformed surface (checks.skinned)."""
        from studio.checks.contacts import broadphase, world_boxes
        from studio.checks.skinned import boxes, measure_skins
        skin = np.isin(pairs, list(self.skins)).any(axis=1) if len(pairs) else np.zeros(0, bool)
        rigid = np.nonzero(~skin)[0]
        world = self.world[:, :self.n_frames]
        c = measure(self.shapes, world, pairs[rigid], taus[rigid], margins[rigid], self.cache, self.scale, self.forms)
        c.pair = rigid[c.pair]
        held = np.nonzero(skin)[0]
        if len(held):
            lo, hi = world_boxes(self.shapes, world, self.forms)
            boxes(self.skins, self.world, self.n_frames, lo, hi)
            f, p = broadphase(lo, hi, pairs[held], margins[held])
            s = measure_skins(self.skins, self.shapes, world, pairs, np.column_stack([f, held[p]]), margins)
            c = Contacts(np.concatenate([c.frame, s.frame]), np.concatenate([c.pair, s.pair]),
                         np.concatenate([c.gap, s.gap]), np.concatenate([c.axis, s.axis]),
                         np.concatenate([c.point, s.point]))
        return c

    @property
    def gap(self) -> np.ndarray:
        """(F,P) signed surface distance; +inf where the boxes are further apart than tau."""
        if self._gap is None:
            g = np.full((self.n_frames, len(self.pairs)), np.inf)
            c = self.contacts
            g[c.frame, c.pair] = c.gap
            self._gap = g
        return self._gap

    @property
    def touching(self) -> np.ndarray:
        """(F,P) whether each pair touches at each frame (its measured gap within tau): `gap <= tau_fp`,
        made from the measured pair-frames alone (a byte a pair-frame, not the gaps of every one)."""
        if self._touching is None:
            c = self.contacts
            t = np.zeros((self.n_frames, len(self.pairs)), bool)
            t[c.frame, c.pair] = c.gap <= self.tau_fp[c.frame, c.pair]
            self._touching = t
        return self._touching

    def pair_index(self, a: str, b: str) -> tuple[int, bool] | None:
        """Index of the measured pair {a, b} and whether a is its first body."""
        ia, ib = self.index(a), self.index(b)
        hit = np.nonzero(((self.pairs[:, 0] == ia) & (self.pairs[:, 1] == ib))
                         | ((self.pairs[:, 0] == ib) & (self.pairs[:, 1] == ia)))[0]
        return (int(hit[0]), bool(self.pairs[hit[0], 0] == ia)) if len(hit) else None

    def pair_gap(self, a: str, b: str, margin: float) -> np.ndarray:
        """(F,) signed surface distance of any two bodies where within margin (+inf beyond)."""
        ia, ib = self.index(a), self.index(b)
        t = tau(self.shapes[ia].thickness, self.shapes[ib].thickness)
        if ia in self.skins or ib in self.skins:
            c = self._with_skins(np.array([[ia, ib]]), np.array([t]), np.array([margin]))
            out = np.full(self.n_frames, np.inf)
            out[c.frame] = c.gap
            return out
        c = measure([self.shapes[ia], self.shapes[ib]], self.world[[ia, ib], :self.n_frames],
                    np.array([[0, 1]]), np.array([t]), np.array([margin]), self.cache)
        out = np.full(self.n_frames, np.inf)
        out[c.frame] = c.gap
        return out
