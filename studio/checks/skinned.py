"""Contact with a skinned surface, which deforms at every frame.

A skin body's surface at a frame is its mesh deformed by linear blend skinning from its bones'
world matrices at that frame (`studio.scene.skin`, vectorised, each frame's vertices computed
once and kept for the run). Its samples are those vertices and the centroids of its triangles.
A pair of a skin and a rigid body is measured one way, the skin's samples in the rigid body's
prepared shape (its face planes if it is convex, else its signed-distance grid, both built once
since that body does not deform): every sample is bounded from below first, and samples are
measured exactly in order of their bound until the next bound cannot beat the smallest distance
found, so the gap (negative: the deepest sample's depth) is exact. The axis pushes the skin out
along the rigid body's outward normal at the closest surface point; the point is the deepest
sample in the world. Not measured: a skin against itself (an arm through the chest) or against
another skin, and a rigid body thinner than the skin's sample spacing that slips between samples
(the generated human's vertices lie about 1.5 cm apart, its samples under 1 cm).

`measure_skins` returns the same `Contacts` as `contacts.measure` for the pairs that hold a skin,
so the verifiers read them alike.
"""
from __future__ import annotations

import numpy as np

from studio.scene.ir import Scene
from studio.scene.skin import Deformed
from studio.scene.transforms import invert

from studio.checks.contacts import Contacts
from studio.checks.shape import Shape

BATCH = 256              # samples measured exactly at once


def skins_of(scene: Scene, names: list[str], meshes: dict) -> dict[int, tuple[Deformed, np.ndarray]]:
    """{body index: (its deformed skin, indices of its bones in `names`)} of every skin body (its mesh
    carries its skin: studio.scene.meshes)."""
    out = {}
    for i, n in enumerate(names):
        skin = meshes[n].metadata.get("skin")
        if skin is None:
            continue
        missing = [x for x in skin.bones if x not in names]
        if missing:
            raise ValueError(f"skin {n}: its bones {missing[:3]} are not bodies of the scene")
        out[i] = (Deformed(skin), np.array([names.index(x) for x in skin.bones], np.int64))
    return out


def samples(skin: Deformed, bones: np.ndarray, world: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(len(idx), S, 3) world samples of a skin at frame indices idx: vertices, then triangle centroids."""
    v = skin.at(idx, np.swapaxes(world[bones], 0, 1))
    f = skin.skin.faces
    return np.concatenate([v, (v[:, f[:, 0]] + v[:, f[:, 1]] + v[:, f[:, 2]]) / 3.0], axis=1)


def boxes(skins: dict, world: np.ndarray, n_frames: int, lo: np.ndarray, hi: np.ndarray) -> None:
    """Replace each skin body's world box (B,F,3) with its deformed vertices' box at every frame."""
    for i, (skin, bones) in skins.items():
        v = skin.at(np.arange(n_frames), np.swapaxes(world[bones, :n_frames], 0, 1))
        lo[i], hi[i] = v.min(axis=1), v.max(axis=1)


def measure_skins(skins: dict, shapes: list[Shape], world: np.ndarray, pairs: np.ndarray, keep: np.ndarray,
                  margins: np.ndarray) -> Contacts:
    """Gap, axis and point of every (frame, pair) in keep ((K,2) frame and pair indices) whose pair holds
    one skin body; pairs of two skins are left out."""
    fr_out, p_out, gaps, axes, points = [], [], [], [], []
    for p in np.unique(keep[:, 1]) if len(keep) else []:
        a, b = pairs[p]
        if (a in skins) == (b in skins):
            continue
        s, r = (a, b) if a in skins else (b, a)
        frames = keep[keep[:, 1] == p, 0]
        pts = samples(*skins[s], world, frames)
        g, ax, pt = _into(shapes[r], world[r, frames], pts, float(margins[p]))
        if s != a:                       # the axis pushes the pair's first body out of its second
            ax = -ax
        fr_out.append(frames)
        p_out.append(np.full(len(frames), p))
        gaps.append(g)
        axes.append(ax)
        points.append(pt)
    if not fr_out:
        return Contacts(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)))
    return Contacts(np.concatenate(fr_out), np.concatenate(p_out), np.concatenate(gaps), np.concatenate(axes),
                    np.concatenate(points))


def _lower(shape: Shape, q: np.ndarray) -> np.ndarray:
    """A proven lower bound of the signed distance at local points (N,3)."""
    if shape.planes is not None:
        return shape.plane_floor(q)
    return shape.proven(q)[0]


def _into(shape: Shape, w: np.ndarray, pts: np.ndarray, margin: float):
    """Per frame: the smallest signed distance of the samples to the rigid shape, its axis and point."""
    F = len(pts)
    gap, axis, point = np.full(F, np.inf), np.zeros((F, 3)), np.zeros((F, 3))
    axis[:, 2] = 1.0
    inv = invert(w)
    pad = np.maximum(shape.hi - shape.lo, 1e-6) * 0.0 + margin
    for f in range(F):
        q = pts[f] @ inv[f, :3, :3].T + inv[f, :3, 3]
        near = np.all((q >= shape.lo - pad) & (q <= shape.hi + pad), axis=1)
        if not near.any():
            continue
        idx = np.nonzero(near)[0]
        low = _lower(shape, q[idx])
        order = np.argsort(low, kind="stable")
        best, at, closest = np.inf, -1, None
        for k in range(0, len(order), BATCH):
            take = order[k:k + BATCH]
            if low[take[0]] >= min(best, margin):
                break
            d, c = shape.exact_signed(q[idx[take]])
            j = int(np.argmin(d))
            if d[j] < best:
                best, at, closest = float(d[j]), int(idx[take[j]]), c[j]
        if at < 0 or best > margin:
            continue
        gap[f] = best
        direction = closest - q[at]
        n = float(np.linalg.norm(direction))
        if n < 1e-12:
            from studio.checks.contacts import _gradient
            direction = _gradient(shape, q[at][None])[0]
        else:
            direction = direction / n if best < 0 else -direction / n      # outward of the rigid body
        axis[f] = w[f, :3, :3] @ direction
        point[f] = pts[f, at]
    return gap, axis, point
