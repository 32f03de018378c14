"""How a film moves between its frames, and how fast any point can move there.

Between frames k and k+1 (a fraction t of the way, 0..1) a film is drawn as
the renderer and motion blur interpolate it: root positions linearly, root
rotations by slerp (the shorter arc), joint values linearly (a ball joint's
rotation vector too), a uniform scale linearly; a link's world pose is forward
kinematics of the interpolated root and joint values. `Motion.world` gives
those world matrices at any (k, t).

`Motion.rates` gives, per body and frame pair, proven bounds on that motion,
all per frame pair (per unit of t): W, the body's angular speed; dW, its
angular acceleration; S, the speed of any point of the body (its hull, and its
origin); M, the acceleration of any such point. They follow the chain of
motions from the root to the body: the root's constant velocity and constant
angular velocity (slerp turns at a constant rate about a fixed axis), then each
joint's rate |Δq| (a ball joint's |Δr|, whose angular acceleration is at most
|Δr|²), each acting on every point beyond it at a lever no longer than the
chain's lengths from there plus the body's radius. Summing absolute terms is
loose where motions cancel (a planted foot under a walking pelvis), so S is
also bounded by the farthest chord (how far a hull vertex goes from frame to
frame) plus M/2: a point whose acceleration is at most M strays from its mean
velocity by at most M/2 over the pair.
"""
from __future__ import annotations

import numpy as np

from studio.scene.kinematics import forward
from studio.scene.transforms import from_7, quat_normalize, slerp

from studio.checks.footage import Footage

HULL_POINTS = 1024          # a hull with more vertices is bounded by its box's 8 corners instead
_HULLS: dict[str, np.ndarray] = {}
_PLANES: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}


def convex_hull(shape):
    """The convex hull of the shape's vertices (`obb.Hull`, as trimesh makes it); the shape's mesh
    needs only its vertices. Raises on a flat or degenerate mesh, which has none."""
    from studio.checks.obb import Hull
    return Hull(shape.mesh.vertices)


def hull_points(shape) -> np.ndarray:
    """Local points whose convex hull holds the shape: a convex body's corners, another mesh's hull
    vertices, or its box corners. Any affine function's largest norm over the shape is reached at
    one of them."""
    pts = _HULLS.get(shape.hash)
    if pts is None:
        try:
            if shape.planes is not None:
                pts = np.asarray(shape.corners, float)          # a convex body is the hull of its corners
            else:
                pts = np.asarray(convex_hull(shape).vertices, float)
        except Exception:   # flat or degenerate meshes have no hull: the box holds them
            pts = np.zeros((HULL_POINTS + 1, 3))
        if len(pts) > HULL_POINTS or len(pts) == 0:
            lo, hi = shape.lo, shape.hi
            pts = np.array([[(hi if (i >> a) & 1 else lo)[a] for a in range(3)] for i in range(8)], float)
        _HULLS[shape.hash] = pts
    return pts


def hull_planes(shape) -> tuple[np.ndarray, np.ndarray] | None:
    """Outward unit normals and offsets of the faces of the shape's convex hull (None if it has none):
    the body lies behind every one of them, convex or not."""
    if shape.hash not in _PLANES:
        planes = shape.planes
        if planes is None:
            try:
                hull = convex_hull(shape)
                keep = hull.area_faces > 1e-14 * max(hull.area, 1e-30)
                normals = hull.face_normals[keep]
                offsets = np.sum(normals * hull.triangles[keep, 0], axis=1)
                # the hull's own vertices may stand a rounding error beyond its planes
                normals, offsets = _few_planes(normals, offsets, hull.area_faces[keep])
                lift = np.max(np.asarray(shape.mesh.vertices, float) @ normals.T - offsets, axis=0, initial=0.0)
                u = np.unique(np.round(np.c_[normals, offsets + np.maximum(lift, 0.0)], 12), axis=0)
                planes = (u[:, :3] / np.linalg.norm(u[:, :3], axis=1, keepdims=True), u[:, 3]) if len(u) >= 4 else None
            except Exception:   # flat or degenerate meshes have no hull
                planes = None
        _PLANES[shape.hash] = planes
    return _PLANES[shape.hash]


_MONOS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _monomials(points: np.ndarray) -> np.ndarray:
    """(V,10) x², y², z², 2xy, 2xz, 2yz, 2x, 2y, 2z, 1 of each point (kept for the hulls' arrays)."""
    got = _MONOS.get(id(points))
    if got is not None and got[0] is points:
        return got[1]
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    mono = np.stack([x * x, y * y, z * z, 2 * x * y, 2 * x * z, 2 * y * z, 2 * x, 2 * y, 2 * z,
                     np.ones(len(points))], axis=1)
    if len(_MONOS) > 256:
        _MONOS.clear()
    _MONOS[id(points)] = (points, mono)
    return mono


def lengths(v: np.ndarray) -> np.ndarray:
    """The lengths of vectors along the last axis (3): np.linalg.norm's figures, without its overhead."""
    sq = v * v
    return np.sqrt(sq[..., 0] + sq[..., 1] + sq[..., 2])


FARTHEST_CHUNK = 1 << 16     # points x matrices per product: small products stay in one thread and in cache


def farthest(points: np.ndarray, D: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(n,) the largest |D a + d| over points a (V,3), for matrices D (n,3,3) and vectors d (n,3):
    |D a + d|^2 = a.G.a + 2 h.a + |d|^2 with G = D^T D, h = D^T d, evaluated as one product over
    every point (in pieces of a few matrices each)."""
    if len(D) == 0:
        return np.zeros(0)
    G = np.einsum("nki,nkj->nij", D, D)
    h = np.einsum("nki,nk->ni", D, d)
    coef = np.stack([G[:, 0, 0], G[:, 1, 1], G[:, 2, 2], G[:, 0, 1], G[:, 0, 2], G[:, 1, 2],
                     h[:, 0], h[:, 1], h[:, 2], np.einsum("ni,ni->n", d, d)])                # (10,n)
    mono = _monomials(points)
    step = max(1, FARTHEST_CHUNK // max(len(points), 1))
    best = np.concatenate([(mono @ coef[:, s:s + step]).max(axis=0) for s in range(0, len(D), step)])
    return np.sqrt(np.maximum(best, 0.0))


def _few_planes(normals: np.ndarray, offsets: np.ndarray, areas: np.ndarray, count: int = 64):
    """At most `count` of a hull's face planes (any of them bounds the body): the largest faces and
    those facing 26 directions spread round."""
    if len(normals) <= count:
        return normals, offsets
    dirs = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1) if x or y or z], float)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    keep = set(np.argmax(dirs @ normals.T, axis=1).tolist())
    for i in np.argsort(-areas):
        if len(keep) >= count:
            break
        keep.add(int(i))
    keep = np.array(sorted(keep))
    return normals[keep], offsets[keep]


_WITH_ORIGIN: dict[tuple, np.ndarray] = {}      # hull points and the origin, per shape (or forms)
MOTION_KEY = "between_motion"


def motion_of(film: Footage) -> "Motion":
    """The film's Motion, made once per footage (the sweep and the events' search share it)."""
    if MOTION_KEY not in film.extra:
        film.extra[MOTION_KEY] = Motion(film)
    return film.extra[MOTION_KEY]


class Rates:
    """Bounds on each body's motion over each frame pair: arrays (B, F-1) W (angular speed), dW
    (angular acceleration), M (acceleration of any hull point or the origin) and S (speed of any hull
    point or the origin). S is the chain's bound (`upper`) lowered by the hull's farthest chord;
    that takes a product over the hull's points, so it is worked out where asked (`speed`), and all
    of it when S is read whole."""

    def __init__(self, W: np.ndarray, dW: np.ndarray, upper: np.ndarray, M: np.ndarray, chord):
        self.W, self.dW, self.M, self.upper = W, dW, M, upper
        self._S = upper.copy()
        self._open = np.zeros(upper.shape, bool)        # where the chord may still lower it
        self._chord = chord                             # (body, frame pairs) -> the farthest chord there

    def mark(self, body: int, ks: np.ndarray) -> None:
        self._open[body, ks] = True

    @property
    def S(self) -> np.ndarray:
        b, k = np.nonzero(self._open)
        self._tighten(b, k)
        return self._S

    def speed(self, bodies, ks) -> np.ndarray:
        """S at (bodies, ks) (broadcast together)."""
        bodies, ks = np.asarray(bodies, np.int64), np.asarray(ks, np.int64)
        if bodies.shape != ks.shape:
            bodies, ks = np.broadcast_arrays(bodies, ks)
        if bodies.size:
            todo = self._open[bodies, ks]
            if todo.any():
                self._tighten(bodies[todo], ks[todo])
        return self._S[bodies, ks]

    def _tighten(self, b: np.ndarray, k: np.ndarray) -> None:
        if len(b) == 0:
            return
        m = self._S.shape[1]
        code = np.unique(np.asarray(b, np.int64) * m + np.asarray(k, np.int64))       # (body, frame pair), sorted
        kb, kk = code // m, code % m
        for body in np.unique(kb):
            at = kk[kb == body]
            self._S[body, at] = np.minimum(self._S[body, at], self._chord(int(body), at) + 0.5 * self.M[body, at])
            self._open[body, at] = False


class Motion:
    """The film between its frames: world matrices at fractions of frame pairs, and rate bounds."""

    def __init__(self, film: Footage):
        self.film = film
        self.scene = film.scene
        tr = film.tracks
        self.roots = {k: np.asarray(v, float) for k, v in tr.roots.items()}
        self.joints = {k: np.asarray(v, float) for k, v in tr.joints.items()}
        self.n = film.n_frames
        self._rates: Rates | None = None
        self._root7: np.ndarray | None = None       # pair_world's stacked root tracks, made when first asked
        self._tracked: np.ndarray | None = None
        self._chains: dict[frozenset, set[str]] = {}
        self._points: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray]] = {}     # point_rates, kept
        self._hung = {j.child for j in film.scene.joints}        # bodies on a joint (forward kinematics)

    # ---- poses between frames -------------------------------------------------
    def world(self, k: np.ndarray, t: np.ndarray, bodies=None) -> np.ndarray:
        """(B,Q,4,4) world matrices of every body at fraction t (Q,) of frame pair k (Q,); bodies:
        indices of the only bodies wanted (the others' matrices are then NaN)."""
        k = np.asarray(k, np.int64)
        t = np.asarray(t, float)
        q = len(k)
        k1 = np.minimum(k + 1, self.n - 1)
        names = self.film.names
        only = None if bodies is None else {names[int(i)] for i in np.unique(np.asarray(bodies, np.int64))}
        roots = {}
        todo = [name for name in self.roots if only is None or name in self._roots_of(only)]
        if todo:                                   # every root's pose at once
            a = np.stack([self.roots[name][k] for name in todo])                    # (R,Q,7)
            b = np.stack([self.roots[name][k1] for name in todo])
            pos = a[..., :3] + (b[..., :3] - a[..., :3]) * t[None, :, None]
            rot = slerp(a[..., 3:7], b[..., 3:7], np.broadcast_to(t, (len(todo), q)))
            both = np.concatenate([pos, rot], axis=2)
            roots = {name: both[i] for i, name in enumerate(todo)}
        if only is not None and not (only & self._hung) and self.film.scale is None:
            # free bodies only: their roots' matrices, all at once
            out = np.full((len(names), q, 4, 4), np.nan)
            mats = from_7(both) if todo else None
            at = {name: i for i, name in enumerate(todo)}
            for i, b in enumerate(names):
                if b in only:
                    out[i] = mats[at[b]] if b in at else np.eye(4)
            return out
        joints = {}
        for name, v in self.joints.items():
            a, b = v[k], v[k1]
            tt = t.reshape((-1,) + (1,) * (a.ndim - 1))
            joints[name] = a + (b - a) * tt
        wd = forward(self.scene, roots, joints, q, only)
        if only is None:
            out = np.stack([np.asarray(wd[b], float) if b in wd else np.tile(np.eye(4), (q, 1, 1)) for b in names])
        else:
            out = np.full((len(names), q, 4, 4), np.nan)
            for i, b in enumerate(names):
                if b in only:
                    out[i] = np.asarray(wd[b], float) if b in wd else np.eye(4)
        if self.film.scale is not None:
            s = self.film.scale
            f = s[:, k] + (s[:, k1] - s[:, k]) * t[None]
            # forward() gives rotations; the footage's matrices carry each body's scale
            out[:, :, :3, :3] *= f[:, :, None, None]
        return out

    def pair_world(self, a: np.ndarray, b: np.ndarray, k: np.ndarray, t: np.ndarray) -> np.ndarray | None:
        """(2,Q,4,4) world matrices of bodies a and b (Q,) at fraction t of frame pair k, drawn for those
        two alone where both move freely (their own roots, not on a joint, no scale: as `world` draws
        them); None elsewhere."""
        film = self.film
        names = film.names
        if film.scale is not None or any(names[int(i)] in self._hung for i in np.unique(np.r_[a, b])):
            return None
        if self._root7 is None:               # every body's root track (none: at the origin), stacked
            self._root7 = np.zeros((len(names), max(self.n, 1), 7))
            self._root7[..., 3] = 1.0
            self._tracked = np.array([name in self.roots for name in names], bool)
            for i, name in enumerate(names):
                if name in self.roots:
                    r = self.roots[name][:self.n]
                    self._root7[i, :len(r)] = r
        q = len(a)
        bodies = np.r_[a, b]
        k = np.r_[k, k].astype(np.int64)
        t = np.r_[t, t].astype(float)
        x0, x1 = self._root7[bodies, k], self._root7[bodies, np.minimum(k + 1, self.n - 1)]
        pos = x0[:, :3] + (x1[:, :3] - x0[:, :3]) * t[:, None]
        out = from_7(np.concatenate([pos, slerp(x0[:, 3:7], x1[:, 3:7], t)], axis=1))
        out[~self._tracked[bodies]] = np.eye(4)
        return out.reshape(2, q, 4, 4)

    def _roots_of(self, only: set[str]) -> set[str]:
        """The roots whose chains carry the bodies `only` (the bodies themselves included)."""
        key = frozenset(only)
        got = self._chains.get(key)
        if got is None:
            got = set()
            for body in only:
                j = self.scene.joint_of_child(body)
                while j is not None:
                    body = j.parent
                    j = self.scene.joint_of_child(body)
                got.add(body)
            got |= only
            if len(self._chains) > 1024:
                self._chains.clear()
            self._chains[key] = got
        return got

    # ---- how fast it can move ---------------------------------------------------
    @property
    def rates(self) -> Rates:
        if self._rates is None:
            self._rates = self._bound()
        return self._rates

    def point_rates(self, body: str, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(S, M), each (F-1,): speed and acceleration bounds of local points fixed on `body` (worked
        out once per body and points: read only)."""
        i = self.film.index(body)
        points = np.asarray(points, float).reshape(-1, 3)
        key = (i, points.tobytes())
        got = self._points.get(key)
        if got is None:
            rho = float(np.max(np.linalg.norm(points, axis=1), initial=0.0))
            W, dW, S, M = self._chain(i, rho)
            w = self.film.world[i, :self.n]
            chord = farthest(points, w[1:, :3, :3] - w[:-1, :3, :3], w[1:, :3, 3] - w[:-1, :3, 3])
            got = (np.minimum(S, chord + 0.5 * M), M.copy())
            for v in got:
                v.setflags(write=False)
            self._points[key] = got
        return got

    def _bound(self) -> Rates:
        film = self.film
        B, n = len(film.names), self.n
        out = [np.zeros((B, max(n - 1, 0))) for _ in range(4)]
        opened = []
        for i in range(B):
            pts = hull_points(film.shapes[i])
            rho = float(np.max(np.linalg.norm(pts, axis=1), initial=0.0))
            W, dW, S, M = self._chain(i, rho)
            if n > 1:
                w = film.world[i, :n]
                dv = w[1:, :3, 3] - w[:-1, :3, 3]
                # the farthest chord is at least the origin's: only where the chain's bound exceeds that
                # (plus M/2) can the hull's chords lower it
                opened.append((i, np.nonzero(S > np.linalg.norm(dv, axis=1) + 0.5 * M)[0]))
            for a, v in zip(out, (W, dW, S, M)):
                a[i] = v
        rates = Rates(*out, chord=self._farthest_chord)
        for i, at in opened:
            rates.mark(i, at)
        return rates

    def _farthest_chord(self, i: int, at: np.ndarray) -> np.ndarray:
        """(len(at),) how far any hull point of body i (or its origin) goes over frame pairs at."""
        film = self.film
        shapes = film.forms[i][0] if i in film.forms else [film.shapes[i]]   # a shape that changes: all its forms
        key = tuple(s.hash for s in shapes)
        pts = _WITH_ORIGIN.get(key)
        if pts is None:
            pts = _WITH_ORIGIN[key] = np.vstack([hull_points(s) for s in shapes] + [np.zeros((1, 3))])  # the origin too
        w = film.world[i]
        D, dv = w[at + 1, :3, :3] - w[at, :3, :3], w[at + 1, :3, 3] - w[at, :3, 3]
        return farthest(pts, D, dv)

    def _chain(self, i: int, rho: float) -> tuple[np.ndarray, ...]:
        """W, dW, S, M of points within rho of body i's origin, from its chain of motions."""
        film, scene, n = self.film, self.scene, self.n
        m = max(n - 1, 0)
        name = film.names[i]
        joints = []
        j = scene.joint_of_child(name)
        while j is not None:
            joints.append(j)
            j = scene.joint_of_child(j.parent)
        joints.reverse()
        root = joints[0].parent if joints else name
        # factors, root first: (u linear rate, w angular rate, a angular acceleration, lever)
        u, w, a, lever = [], [], [], []
        tr = self.roots.get(root)
        if tr is not None and n > 1:
            u.append(np.linalg.norm(tr[1:, :3] - tr[:-1, :3], axis=1))
            q0, q1 = quat_normalize(tr[:-1, 3:7]), quat_normalize(tr[1:, 3:7])
            w.append(2.0 * np.arccos(np.clip(np.abs(np.sum(q0 * q1, axis=1)), 0.0, 1.0)))
        else:
            u.append(np.zeros(m))
            w.append(np.zeros(m))
        a.append(np.zeros(m))
        lengths, extents = [], []
        for jt in joints:
            v = self.joints.get(jt.name)
            length = float(np.linalg.norm(jt.origin.position))
            ext = np.zeros(m)
            du, dw, da = np.zeros(m), np.zeros(m), np.zeros(m)
            if v is not None and n > 1 and jt.type != "fixed":
                v = v.reshape(n, -1)
                dv = np.linalg.norm(v[1:] - v[:-1], axis=1)
                if jt.type == "revolute":
                    dw = dv
                elif jt.type == "prismatic":
                    size = float(np.linalg.norm(jt.axis))
                    du = dv * size
                    ext = np.maximum(np.abs(v[1:, 0]), np.abs(v[:-1, 0])) * size
                elif jt.type == "ball":
                    dw, da = dv, dv ** 2
            lengths.append(length)
            extents.append(ext)
            u.append(du)
            w.append(dw)
            a.append(da)
        # lever of factor f: the chain's lengths beyond it plus the body's radius (and scale)
        grow = 1.0
        if film.scale is not None:
            grow = np.maximum(film.scale[i, :-1], film.scale[i, 1:])[:m] if n > 1 else np.ones(0)
        beyond = rho * grow + np.zeros(m)
        for f in range(len(joints), -1, -1):
            lever.insert(0, beyond.copy())
            if f >= 1:
                beyond = beyond + lengths[f - 1] + extents[f - 1]
        W = np.zeros(m)
        dW = np.zeros(m)
        S = np.zeros(m)
        M = np.zeros(m)
        reach = [u[f] + w[f] * lever[f] for f in range(len(u))]
        after = np.zeros(m)
        tail = []
        for f in range(len(u) - 1, -1, -1):
            tail.insert(0, after.copy())
            after = after + reach[f]
        for f in range(len(u)):
            before = W.copy()
            e = (before + w[f]) * lever[f] + tail[f]          # |x - o_f|' : the point's motion about o_f
            M += before * u[f] + (before * w[f] + a[f]) * lever[f] + w[f] * e
            dW += before * w[f] + a[f]
            S += reach[f]
            W += w[f]
        if film.scale is not None and n > 1:
            # a uniform scale grows every point about the body's origin: x = c + k R y
            s = film.scale[i]
            dk = np.abs(s[1:] - s[:-1])[:m]
            S += dk * rho
            M += 2.0 * dk * W * rho
        return W, dW, S, M
