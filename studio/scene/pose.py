"""Poses and baked tracks: where every body is, at one frame or at every frame.

A `Pose` holds the world transform of each root body as [x y z w qx qy qz]
and each joint's value (radians or metres; a ball joint holds a rotation
vector of 3). `Tracks` holds the same per frame as arrays, over a contiguous
range of the project's frame numbers (1001 stays 1001).
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np

from studio.scene.ir import IRError, Scene, canonical_hash


@dataclass
class Pose:
    roots: dict[str, list[float]] = field(default_factory=dict)
    joints: dict[str, float | list[float]] = field(default_factory=dict)

    @classmethod
    def rest(cls, scene: Scene) -> "Pose":
        roots = {r: list(scene.rest.get(r, [0, 0, 0, 1, 0, 0, 0])) for r in scene.roots}
        joints = {j.name: ([0.0, 0.0, 0.0] if j.type == "ball" else min(max(0.0, j.lower), j.upper))
                  for j in scene.joints if j.type != "fixed"}
        return cls(roots, joints)

    def copy(self) -> "Pose":
        return Pose({k: list(v) for k, v in self.roots.items()},
                    {k: (list(v) if isinstance(v, list) else float(v)) for k, v in self.joints.items()})

    def to_dict(self) -> dict:
        return {"roots": self.roots, "joints": self.joints}

    @classmethod
    def from_dict(cls, d: dict, scene: Scene | None = None, where: str = "pose") -> "Pose":
        if not isinstance(d, dict):
            raise IRError(f"{where}: expected an object with roots and joints")
        roots, joints = {}, {}
        for name, t in dict(d.get("roots", {})).items():
            a = np.asarray(t, float)
            if a.shape != (7,) or not np.all(np.isfinite(a)):
                raise IRError(f"{where}.roots.{name}: expected 7 finite numbers [x y z w qx qy qz]")
            n = np.linalg.norm(a[3:])
            if abs(n - 1) > 1e-3:
                raise IRError(f"{where}.roots.{name}: rotation must be a unit quaternion, length {n:.4f}")
            a[3:] /= n
            roots[name] = a.tolist()
        for name, v in dict(d.get("joints", {})).items():
            joints[name] = [float(x) for x in v] if isinstance(v, (list, tuple)) else float(v)
        pose = cls(roots, joints)
        if scene is not None:
            pose = pose.completed(scene, where)
        return pose

    def completed(self, scene: Scene, where: str = "pose") -> "Pose":
        """This pose with every root and joint of the scene present (rest fills gaps)."""
        known_roots, known_joints = set(scene.roots), {j.name for j in scene.joints}
        for name in self.roots:
            if name not in known_roots:
                raise IRError(f"{where}.roots.{name}: not a root body of the scene")
        for name in self.joints:
            if name not in known_joints:
                raise IRError(f"{where}.joints.{name}: no joint of that name")
        full = Pose.rest(scene)
        full.roots.update(self.roots)
        full.joints.update(self.joints)
        return full

    def hash(self) -> str:
        return canonical_hash(self.to_dict())


@dataclass
class Tracks:
    """Baked per-frame values over frames frame_start .. frame_start+F-1."""

    frame_start: int
    roots: dict[str, np.ndarray] = field(default_factory=dict)     # (F, 7)
    joints: dict[str, np.ndarray] = field(default_factory=dict)    # (F,) or (F, 3)

    @property
    def n_frames(self) -> int:
        for a in (*self.roots.values(), *self.joints.values()):
            return int(a.shape[0])
        return 0

    @property
    def frames(self) -> np.ndarray:
        return np.arange(self.frame_start, self.frame_start + self.n_frames)

    @property
    def frame_end(self) -> int:
        return self.frame_start + self.n_frames - 1

    def pose_at(self, frame: int) -> Pose:
        i = frame - self.frame_start
        if not 0 <= i < self.n_frames:
            raise IndexError(f"frame {frame} is outside the tracks ({self.frame_start}..{self.frame_end})")
        return Pose({k: v[i].tolist() for k, v in self.roots.items()},
                    {k: (v[i].tolist() if v.ndim == 2 else float(v[i])) for k, v in self.joints.items()})

    @classmethod
    def from_poses(cls, frame_start: int, poses: list[Pose]) -> "Tracks":
        first = poses[0]
        return cls(frame_start,
                   {k: np.array([p.roots[k] for p in poses], float) for k in first.roots},
                   {k: np.array([p.joints[k] for p in poses], float) for k in first.joints})

    def slice(self, start: int, end: int) -> "Tracks":
        a, b = start - self.frame_start, end - self.frame_start + 1
        return Tracks(start, {k: v[a:b] for k, v in self.roots.items()},
                      {k: v[a:b] for k, v in self.joints.items()})

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        arrays = {f"root:{k}": v for k, v in self.roots.items()}
        arrays.update({f"joint:{k}": v for k, v in self.joints.items()})
        np.savez(buf, frame_start=np.array(self.frame_start), **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Tracks":
        with np.load(io.BytesIO(data)) as z:
            t = cls(int(z["frame_start"]))
            for key in z.files:
                if key.startswith("root:"):
                    t.roots[key[5:]] = z[key].astype(float)
                elif key.startswith("joint:"):
                    t.joints[key[6:]] = z[key].astype(float)
        return t

    def to_json_dict(self) -> dict:
        return {"frame_start": self.frame_start,
                "roots": {k: v.tolist() for k, v in self.roots.items()},
                "joints": {k: v.tolist() for k, v in self.joints.items()}}

    def hash(self) -> str:
        return canonical_hash(self.to_json_dict())
