"""A varied corpus of animated glTF films for the verify benchmark, each with the truth it was made from.

Every film is written twice: as a .glb (what `studio verify` reads) and as an .npz of truth for the
simple verifier of bench/simple_verifier.py: per body its convex pieces (vertices in the body's frame),
its world matrix at every frame (rotation, scale, translation, as the glb's keys give them at frame
times, float32 as written), and whether it is the ground, static or self-propelled. Nothing here is
shared with studio/checks.

The films (`FILMS`): warehouses of stacked, carried and set-down boxes with resting contacts near tau
(one written one triangle at a time), stacks of boxes and 3 mm cards, bodies resting inside others, a
structure of static and moving parts, free fall, thin plates gliding at gaps near tau, rotating and
scaled bodies (uniform and squash-and-stretch), a long film of many bodies at rest (and twice as long),
non-convex rings, frames and U-brackets resting around posts, split, instanced and matrix nodes; the
example films are exported by bench/corpus_examples.py.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import trimesh

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from glb_films import GlbWriter  # noqa: E402

FPS = 24.0


def f32(a):
    return np.asarray(a, float).astype(np.float32).astype(float)


def quat_matrix(q):
    """(F,4) xyzw -> (F,3,3)."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], 1)


def yaw(angle):
    angle = np.asarray(angle, float)
    return np.c_[np.zeros((angle.size, 2)), np.sin(angle / 2), np.cos(angle / 2)]


def axis_angle(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    angle = np.asarray(angle, float).reshape(-1)
    return np.c_[np.sin(angle / 2)[:, None] * axis[None], np.cos(angle / 2)]


class Film:
    """A film being made: the glb and the truth side by side."""

    def __init__(self, name: str, frames: int):
        self.name, self.frames = name, frames
        self.t = np.arange(frames) / FPS
        self.g = GlbWriter({"up": "Z", "fps": FPS, "frame_start": 1})
        self.bodies: dict[str, dict] = {}

    def trs(self, pos, quat=None, scale=None):
        F = self.frames
        pos = f32(np.broadcast_to(np.asarray(pos, float), (F, 3)))
        quat = f32(np.tile([0, 0, 0, 1.0], (F, 1)) if quat is None else np.broadcast_to(quat, (F, 4)))
        scale = None if scale is None else f32(np.broadcast_to(np.asarray(scale, float), (F, 3)))
        m = np.tile(np.eye(4), (F, 1, 1))
        m[:, :3, :3] = quat_matrix(quat) * (1 if scale is None else scale[:, None, :])
        m[:, :3, 3] = pos
        return pos, quat, scale, m

    def add(self, name, mesh, pos, quat=None, scale=None, *, pieces=None, moving=True, role=None,
            parts=1, indexed=True, mesh_index=None, parent=None):
        """A body node; parts: primitives its mesh is split into; pieces: its convex pieces (body frame)."""
        pos, quat, scale, m = self.trs(pos, quat, scale)
        if mesh_index is None:
            mesh_index = self.g.mesh(split(mesh, parts), indexed=indexed)
        extras = {"role": "ground"} if role == "ground" else ({"self_propelled": True} if role == "self" else None)
        trs = dict(translation=pos[0], rotation=quat[0])
        if scale is not None:
            trs["scale"] = scale[0]
        node = self.g.node(name, mesh_index, parent=None if parent is None else self.bodies[parent]["node"],
                           extras=extras, **trs)
        if moving:
            self.g.animate(node, "translation", self.t, pos)
            self.g.animate(node, "rotation", self.t, quat)
            if scale is not None:
                self.g.animate(node, "scale", self.t, scale)
        world = m if parent is None else self.bodies[parent]["world"] @ m
        self.bodies[name] = dict(node=node, mesh=mesh,
                                 pieces=pieces if pieces is not None else [np.asarray(mesh.vertices, float)],
                                 world=world, ground=role == "ground", self_propelled=role == "self",
                                 moving=moving or (parent is not None and self.bodies[parent]["moving"]),
                                 mesh_index=mesh_index)
        return node

    def add_matrix(self, name, mesh, matrix, role=None):
        """A static body placed by a node matrix (column-major in the file)."""
        mi = self.g.mesh([mesh])
        node = self.g.node(name, mi, extras={"role": "ground"} if role == "ground" else None,
                           matrix=f32(matrix).T.reshape(-1))
        self.bodies[name] = dict(node=node, mesh=mesh, pieces=[np.asarray(mesh.vertices, float)],
                                 world=np.tile(f32(matrix), (self.frames, 1, 1)), ground=role == "ground",
                                 self_propelled=False, moving=False, mesh_index=mi)

    def write(self, folder: Path) -> tuple[Path, Path]:
        glb = self.g.write(folder / f"{self.name}.glb")
        truth = folder / f"{self.name}.npz"
        arrays = {}
        names = list(self.bodies)
        for i, n in enumerate(names):
            b = self.bodies[n]
            arrays[f"world{i}"] = b["world"] if b["moving"] else b["world"][:1]
            for k, piece in enumerate(b["pieces"]):
                arrays[f"piece{i}_{k}"] = f32(piece)
            for k, part in enumerate(b.get("meshes", [])):      # parts that are not convex, as meshes
                arrays[f"mesh{i}_{k}_v"] = f32(part.vertices)
                arrays[f"mesh{i}_{k}_f"] = np.asarray(part.faces, np.int64)
        np.savez(truth, names=np.array(names), frames=self.frames,
                 ground=np.array([self.bodies[n]["ground"] for n in names]),
                 static=np.array([not self.bodies[n]["moving"] for n in names]),
                 self_propelled=np.array([self.bodies[n]["self_propelled"] for n in names]),
                 pieces=np.array([len(self.bodies[n]["pieces"]) for n in names]),
                 meshes=np.array([len(self.bodies[n].get("meshes", [])) for n in names]), **arrays)
        return glb, truth


def split(mesh, parts):
    """The mesh's faces in `parts` primitives, each with its own copy of the vertices it uses."""
    if parts <= 1:
        return [mesh]
    out = []
    for idx in np.array_split(np.arange(len(mesh.faces)), parts):
        f = mesh.faces[idx]
        used, inv = np.unique(f, return_inverse=True)
        out.append(trimesh.Trimesh(mesh.vertices[used], inv.reshape(-1, 3), process=False))
    return out


def box(*extents, sub=0):
    m = trimesh.creation.box(extents=extents)
    for _ in range(sub):
        m = m.subdivide()
    return m


def sphere(r, sub=2):
    return trimesh.creation.icosphere(subdivisions=sub, radius=r)


def ground(film, size=20.0):
    film.add("ground", box(size, size, 0.1), [0, 0, -0.05], moving=False, role="ground")


# ---- the films ------------------------------------------------------------------------------

def warehouse(seed, frames=1440, indexed=True):
    """38 bodies: rows of stacked boxes (each resting on the one below, some sunk up to 6 mm), carried
    boxes on self-propelled carriers that set them down and pick them up again, and 3 mm cards on top."""
    rng = np.random.default_rng(seed)
    f = Film(f"warehouse_{seed}{'' if indexed else '_triangles'}", frames)
    ground(f)
    t = f.t
    n = 1
    for s in range(8):                                  # 8 stacks of 3 (some of them cards)
        x, y, z = -6 + 1.6 * s, -2.0, 0.0
        for level in range(3):
            card = level == 2 and s % 2 == 0
            e = [rng.uniform(0.3, 0.6), rng.uniform(0.3, 0.6), 0.003 if card else rng.uniform(0.15, 0.35)]
            sink = rng.choice([0.0, 0.0, 0.0009, 0.0016, 0.0045, 0.0055]) if level else 0.0
            z += e[2] / 2 - sink
            f.add(f"stack{s}_{level}", box(*e, sub=1), [x, y, z], moving=level > 0, indexed=indexed)
            z += e[2] / 2
            n += 1
    for c in range(6):                                  # carriers and what they carry
        e = [0.5, 0.4, 0.1]
        load = [rng.uniform(0.2, 0.35), rng.uniform(0.2, 0.3), rng.uniform(0.1, 0.25)]
        lane = 1.0 + 0.9 * c
        x = -6 + 12 * (0.5 + 0.5 * np.sin(t * (0.07 + 0.01 * c) + c))
        lift = 0.3 * np.clip(np.sin(t * 0.2 + c), 0, None)        # lifted, then set down on the floor
        carrier = np.c_[x, np.full(frames, lane), 0.05 + lift + 0.001]
        f.add(f"carrier{c}", box(*e), carrier, role="self", indexed=indexed)
        rest = rng.choice([0.0, 0.0008, 0.0015])
        f.add(f"parcel{c}", box(*load, sub=1), carrier + [0, 0, 0.05 + load[2] / 2 - rest],
              yaw(np.zeros(frames)), indexed=indexed)
    while len(f.bodies) < 38:                           # cards and spheres at rest on the floor
        k = len(f.bodies)
        if k % 2:
            m = box(0.15, 0.1, 0.003)
            f.add(f"card{k}", m, [-6 + 0.5 * k % 12, 5.0, 0.0015 - rng.choice([0.0, 0.0014, 0.0016])],
                  indexed=indexed)
        else:
            r = rng.uniform(0.05, 0.1)
            f.add(f"ball{k}", sphere(r), [-6 + 0.5 * k % 12, 6.0, r - rng.choice([0.0, 0.002, 0.006])],
                  indexed=indexed)
    return f


def card_stacks(frames=480):
    """Stacks of boxes and 3 mm cards; cards overlapping others by 1.4 or 1.6 mm at known frames, cards
    sliding over cards (overlap growing through tau)."""
    f = Film("card_stacks", frames)
    ground(f)
    t = f.t
    for s in range(5):
        x = -2 + s
        z = 0.0
        for level in range(4):
            e = [0.3 - 0.03 * level, 0.2, 0.003 if level % 2 else 0.1]
            z += e[2] / 2 - (0.0016 if (s + level) % 3 == 0 and level else 0.0014 if level else 0.0)
            f.add(f"s{s}_{level}", box(*e), [x, 0, z], moving=level > 0)
            z += e[2] / 2
    for k in range(6):                                  # sliding cards sinking slowly into the one below
        base_z = 0.0015
        f.add(f"bed{k}", box(0.2, 0.2, 0.003), [-2 + 0.8 * k, 1.0, base_z], moving=False)
        sink = np.linspace(0.0, 0.0025, frames)
        f.add(f"slider{k}", box(0.1, 0.08, 0.003),
              np.c_[-2 + 0.8 * k + 0.05 * np.sin(t + k), np.full(frames, 1.0), base_z + 0.003 - sink],
              yaw(0.3 * t + k))
    return f


def resting_inside(frames=480):
    """Small bodies resting inside larger ones (wholly inside, partly inside, just touching the floor)."""
    f = Film("resting_inside", frames)
    ground(f)
    t = f.t
    for k in range(6):
        big = [0.6, 0.5, 0.4]
        f.add(f"block{k}", box(*big), [-3 + 1.2 * k, 0, 0.2], moving=False)
        r = 0.05 + 0.01 * k
        z = 0.2 + (0.0 if k % 2 else 0.2 - r + 0.0012 * k)
        f.add(f"inner{k}", sphere(r), np.c_[np.full(frames, -3 + 1.2 * k) + 0.05 * np.sin(t * 0.5),
                                              np.zeros(frames), np.full(frames, z)])
        f.add(f"cube{k}", box(0.1, 0.1, 0.1), [-3 + 1.2 * k, 0.4, 0.45 - 0.001 * k],
              yaw(0.2 * t), moving=True)
    return f


def structure(frames=720):
    """A static scaffold of posts and beams (some placed by matrix) and boxes sliding and riding on it."""
    f = Film("structure", frames)
    ground(f)
    t = f.t
    for k in range(6):
        f.add(f"post{k}", box(0.1, 0.1, 1.0), [-2.5 + k, 0, 0.5], moving=False)
    for k in range(5):
        m = np.eye(4)
        m[:3, 3] = [-2 + k, 0, 1.025]
        m[:3, :3] = quat_matrix(yaw([0.0]))[0]
        f.add_matrix(f"beam{k}", box(1.0, 0.12, 0.05), m)
    for k in range(8):
        e = [0.15, 0.1, 0.08]
        x = -2.4 + 4.8 * (0.5 + 0.5 * np.sin(t * (0.1 + 0.02 * k) + k))
        f.add(f"rider{k}", box(*e, sub=1), np.c_[x, np.full(frames, -0.03 + 0.0075 * k), np.full(frames, 1.05 + 0.04 - 0.0005 * k)])
    for k in range(6):
        f.add(f"sweeper{k}", sphere(0.08), np.c_[-3 + 6 * (t / t[-1]), np.full(frames, 0.3 + 0.2 * k),
                                                  np.full(frames, 0.08 - 0.001 * k)])
    return f


def free_fall(frames=480):
    """Boxes and balls dropped from heights, landing and bouncing; some land sunk past tau."""
    f = Film("free_fall", frames)
    ground(f)
    t = f.t
    for k in range(16):
        h0 = 0.5 + 0.2 * k
        period = np.sqrt(2 * h0 / 9.81)
        ph = np.mod(t + 0.1 * k, 2 * period) - period
        z = np.maximum(h0 - 0.5 * 9.81 * ph ** 2, 0.0)
        sink = 0.0008 * (k % 8)
        if k % 2:
            r = 0.06 + 0.005 * k
            f.add(f"ball{k}", sphere(r), np.c_[np.full(frames, -4 + 0.5 * k), np.zeros(frames), z + r - sink],
                  axis_angle([1, 0, 0], t * 2))
        else:
            e = [0.1 + 0.01 * k, 0.12, 0.08]
            f.add(f"crate{k}", box(*e, sub=1), np.c_[np.full(frames, -4 + 0.5 * k), np.zeros(frames),
                                                     z + e[2] / 2 - sink])
    return f


def thin_plates(frames=600):
    """Thin plates gliding over plates at gaps and overlaps near tau (1 mm plates: tau 1 mm)."""
    f = Film("thin_plates", frames)
    ground(f)
    t = f.t
    for k in range(10):
        th = 0.002
        f.add(f"floorplate{k}", box(0.5, 0.5, th), [-3 + 0.7 * k, 0, th / 2], moving=False)
        gap = -0.002 + 0.004 * (0.5 + 0.5 * np.sin(t * 0.7 + k))        # from 2 mm overlap to 2 mm apart
        f.add(f"glider{k}", box(0.3, 0.3, th), np.c_[np.full(frames, -3 + 0.7 * k) + 0.05 * np.sin(t),
                                                    np.zeros(frames), th + th / 2 + gap], yaw(0.1 * t))
    return f


def rotating_scaled(frames=720):
    """Tumbling and spinning bodies; bodies growing and shrinking (uniform scale), squash and stretch."""
    f = Film("rotating_scaled", frames)
    ground(f)
    t = f.t
    for k in range(6):                                  # spinning on the floor, resting on a corner edge
        e = [0.2, 0.15, 0.1]
        f.add(f"spinner{k}", box(*e), np.c_[np.full(frames, -3 + k), np.zeros(frames),
                                            np.full(frames, e[2] / 2 - 0.0005 * k)], yaw(t * (1 + 0.3 * k)))
    for k in range(4):                                  # tumbling in the air through a neighbour
        f.add(f"tumbler{k}", box(0.12, 0.12, 0.12, sub=1),
              np.c_[-3 + k + 0.3 * np.sin(t), np.full(frames, 1.0), np.full(frames, 0.5)],
              axis_angle([1, 1, 0], t * (0.5 + 0.2 * k)))
        f.add(f"neighbour{k}", sphere(0.1), [-3 + k + 0.25, 1.0, 0.5], moving=False)
    for k in range(4):                                  # growing and shrinking on the floor
        s = 1.0 + 0.5 * np.sin(t * 0.5 + k)
        f.add(f"grower{k}", box(0.2, 0.2, 0.2), np.c_[np.full(frames, -3 + k), np.full(frames, 2.0),
                                                      0.1 * s - 0.0008 * k], None, np.c_[s, s, s])
    for k in range(4):                                  # squash and stretch on a step cycle
        sq = 1.0 + 0.3 * np.round(np.sin(t * 1.5 + k) * 4) / 4
        sc = np.c_[1 / np.sqrt(sq), 1 / np.sqrt(sq), sq]
        f.add(f"squash{k}", sphere(0.1), np.c_[np.full(frames, -3 + k), np.full(frames, 3.0), 0.1 * sq - 0.001],
              None, sc)
    return f


def long_rest(frames=4000, name="long_rest"):
    """60 bodies, most at rest on the floor and on each other, a few moving: a long film."""
    rng = np.random.default_rng(60)
    f = Film(name, frames)
    ground(f)
    t = f.t
    for k in range(50):
        e = rng.uniform(0.1, 0.3, 3)
        f.add(f"rest{k}", box(*e), [-5 + (k % 10), -2 + (k // 10), e[2] / 2 - rng.choice([0, 0.001, 0.003])])
    for k in range(9):
        r = 0.08
        f.add(f"roller{k}", sphere(r), np.c_[-5 + 9 * (0.5 + 0.5 * np.sin(t * 0.05 + k)),
                                             np.full(frames, -2.5 + 0.5 * k), np.full(frames, r)],
              axis_angle([0, 1, 0], t))
    return f


def ring(r_in, r_out, height, sections=24):
    """An annulus and its convex pieces (one wedge per section)."""
    m = trimesh.creation.annulus(r_min=r_in, r_max=r_out, height=height, sections=sections)
    a = np.linspace(0, 2 * np.pi, sections + 1)
    pieces = []
    for k in range(sections):
        c = np.array([[np.cos(x), np.sin(x)] for x in a[k:k + 2]])
        ring_pts = np.concatenate([c * r_in, c * r_out])
        pieces.append(np.concatenate([np.c_[ring_pts, np.full(4, -height / 2)], np.c_[ring_pts, np.full(4, height / 2)]]))
    return m, pieces


def bars(rects, height):
    """A flat part made of axis-aligned rectangles (x0, y0, x1, y1), extruded and joined (manifold3d):
    its mesh and its convex pieces."""
    parts = [box(r[2] - r[0], r[3] - r[1], height).apply_translation([(r[0] + r[2]) / 2, (r[1] + r[3]) / 2, 0])
             for r in rects]
    m = trimesh.boolean.union(parts, engine="manifold")
    pieces = [np.array([[x, y, z] for x in (r[0], r[2]) for y in (r[1], r[3]) for z in (-height / 2, height / 2)])
              for r in rects]
    return m, pieces


def rings_frames(frames=480):
    """Non-convex bodies: rings resting around posts, square frames and U-brackets around boxes, a ring
    sliding down a post and sinking into the floor."""
    f = Film("rings_frames", frames)
    ground(f)
    t = f.t
    for k in range(4):
        x = -3 + 1.5 * k
        f.add(f"post{k}", box(0.06, 0.06, 0.6), [x, 0, 0.3], moving=False)
        m, pieces = ring(0.05, 0.09, 0.03)
        drop = np.maximum(0.5 - 0.3 * t, 0.015 - 0.002 * k)
        f.add(f"ring{k}", m, np.c_[np.full(frames, x), np.zeros(frames), drop], yaw(0.5 * t), pieces=pieces)
        frame_m, fpieces = bars([(-0.15, -0.15, 0.15, -0.11), (-0.15, 0.11, 0.15, 0.15),
                                 (-0.15, -0.11, -0.11, 0.11), (0.11, -0.11, 0.15, 0.11)], 0.04)
        f.add(f"frame{k}", frame_m, [x, 1.0, 0.02 - 0.0015 * k], pieces=fpieces)
        f.add(f"inbox{k}", box(0.2, 0.2, 0.1), np.c_[np.full(frames, x) + 0.02 * np.sin(t + k),
                                                    np.full(frames, 1.0), np.full(frames, 0.05)])
        u_m, upieces = bars([(-0.12, -0.05, -0.09, 0.05), (-0.09, -0.05, 0.09, -0.02), (0.09, -0.05, 0.12, 0.05)], 0.3)
        f.add(f"bracket{k}", u_m, [x, 2.0, 0.05 + 0.0 * k], axis_angle([1, 0, 0], [np.pi / 2]), pieces=upieces)
        f.add(f"held{k}", box(0.18, 0.06, 0.06), np.c_[np.full(frames, x), np.full(frames, 2.0) + 0.02 * np.sin(t),
                                                      np.full(frames, 0.03 - 0.0007 * k)])
    return f


def split_instanced(frames=480):
    """Bodies whose file is unusual: meshes split into two primitives, one mesh used by several nodes
    (instances), meshes written one triangle at a time, static nodes placed by a matrix, bodies that are
    children of an animated parent, some scaled."""
    f = Film("split_instanced", frames)
    ground(f)
    t = f.t
    shared = f.g.mesh(split(box(0.2, 0.15, 0.1, sub=1), 2))
    for k in range(8):                                  # instances of one split mesh, at rest and sliding
        mesh = box(0.2, 0.15, 0.1, sub=1)
        pos = np.c_[np.full(frames, -3 + 0.8 * k) + (0.3 * np.sin(t) if k % 2 else 0), np.zeros(frames),
                    np.full(frames, 0.05 - 0.001 * k)]
        f.add(f"instance{k}", mesh, pos, mesh_index=shared, moving=bool(k % 2))
    for k in range(6):                                  # split spheres, scaled in their nodes
        s = 0.5 + 0.1 * k
        f.add(f"split_ball{k}", sphere(0.2), [-3 + 0.8 * k, 1.0, 0.2 * s - 0.0012 * k], None, [s, s, s],
              parts=2)
    for k in range(6):                                  # written one triangle at a time, non-uniform scale
        f.add(f"loose{k}", box(0.2, 0.2, 0.2), [-3 + 0.8 * k, 2.0, 0.05 - 0.0009 * k], yaw([0.3 * k]),
              [1.0, 0.5, 0.5], indexed=False)
    for k in range(4):                                  # static by matrix: rotated and scaled
        m = np.eye(4)
        m[:3, :3] = quat_matrix(yaw([0.4 * k]))[0] @ np.diag([1.5, 1.0, 0.5])
        m[:3, 3] = [-3 + 1.2 * k, 3.0, 0.05 - 0.001 * k]
        f.add_matrix(f"placed{k}", box(0.2, 0.2, 0.2), m)
    for k in range(4):                                  # a tray carried by a flyer, a box riding on it
        f.add(f"flyer{k}", box(0.3, 0.3, 0.02), np.c_[-3 + 1.2 * k + 0.5 * np.sin(t * 0.3), np.full(frames, 4.0),
                                                      0.5 + 0.1 * np.sin(t)], role="self")
        f.add(f"rider{k}", box(0.1, 0.1, 0.1), [0, 0, 0.06 - 0.0013 * k], parent=f"flyer{k}", moving=False)
    return f


def spin_stack(frames=960):
    """Stacks of spinning discs (many-faced convex bodies) on turntables, resting at gaps near tau."""
    f = Film("spin_stack", frames)
    ground(f)
    t = f.t
    for k in range(6):
        x = -3 + 1.2 * k
        f.add(f"table{k}", trimesh.creation.cylinder(0.3, 0.05, sections=48), [x, 0, 0.025], yaw(t * 0.5))
        z = 0.05
        for level in range(3):
            h = 0.004 if level == 1 else 0.06
            z += h / 2 - 0.0004 * (k + level)
            f.add(f"disc{k}_{level}", trimesh.creation.cylinder(0.2 - 0.04 * level, h, sections=64),
                  [x, 0, z], yaw(t * (0.5 + 0.1 * level)))
            z += h / 2
    return f


FILMS = {
    "warehouse_38": lambda: warehouse(38),
    "warehouse_39_triangles": lambda: warehouse(39, indexed=False),
    "card_stacks": card_stacks,
    "resting_inside": resting_inside,
    "structure": structure,
    "free_fall": free_fall,
    "thin_plates": thin_plates,
    "rotating_scaled": rotating_scaled,
    "long_rest": long_rest,
    "long_rest_x2": lambda: long_rest(8000, "long_rest_x2"),
    "rings_frames": rings_frames,
    "split_instanced": split_instanced,
    "spin_stack": spin_stack,
}
