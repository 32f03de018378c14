"""A skinned surface and linear blend skinning, vectorised over frames.

A skin is a mesh whose every vertex follows up to four bones: at a frame with bone world
matrices W_k, a vertex v of the bind pose goes to  sum_k w_k (W_k IBM_k) v  (IBM_k the bone's
inverse bind matrix), which is what glTF specifies and what Blender's armature modifier does
without "preserve volume". The skin lives in the project's assets as one .npz (bind vertices,
triangles, four bone indices and weights per vertex, inverse bind matrices, and the bodies that
are its bones, in that order), named by its content like every asset, so a changed skin is a
changed design. `deform` takes the bones' world matrices for any number of frames at once and
works in chunks of frames so a long film never holds more than CHUNK frames of per-vertex
matrices; `Deformed` keeps each frame's vertices once computed.
"""
from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CHUNK = 32                        # frames of (N,3,4) blended matrices held at once
_MEMO: dict[str, "Skin"] = {}


class SkinError(ValueError):
    """A skin asset that cannot be read; the message names the file."""


@dataclass
class Skin:
    bones: list[str]              # the bodies that move it, in the order of `joints`' indices
    vertices: np.ndarray          # (N,3) bind pose, in the skin body's frame at rest
    faces: np.ndarray             # (T,3)
    joints: np.ndarray            # (N,4) int
    weights: np.ndarray           # (N,4), each row summing to 1
    ibm: np.ndarray               # (J,4,4) inverse bind matrices
    digest: str = ""

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, vertices=self.vertices, faces=self.faces.astype(np.int32), joints=self.joints.astype(np.int32),
                 weights=self.weights, ibm=self.ibm,
                 bones=np.frombuffer("\n".join(self.bones).encode("utf-8"), np.uint8))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "skin") -> "Skin":
        try:
            with np.load(io.BytesIO(data)) as z:
                bones = bytes(z["bones"]).decode("utf-8").split("\n")
                s = cls(bones, z["vertices"].astype(float), z["faces"].astype(np.int64),
                        z["joints"].astype(np.int64), z["weights"].astype(float), z["ibm"].astype(float),
                        hashlib.sha256(data).hexdigest())
        except (OSError, KeyError, ValueError, UnicodeDecodeError) as e:
            raise SkinError(f"{where}: not a skin asset ({e})") from None
        n, j = len(s.vertices), len(s.bones)
        if s.joints.shape != (n, 4) or s.weights.shape != (n, 4) or s.ibm.shape != (j, 4, 4) \
                or (n and (s.joints.min() < 0 or s.joints.max() >= j)) or s.faces.ndim != 2 \
                or (len(s.faces) and s.faces.max() >= n):
            raise SkinError(f"{where}: the skin's arrays do not agree (vertices, weights, bones, triangles)")
        return s


def load_skin(path: Path) -> Skin:
    """The skin asset at `path` (kept in memory by its content)."""
    data = Path(path).read_bytes()
    key = hashlib.sha256(data).hexdigest()
    if key not in _MEMO:
        _MEMO[key] = Skin.from_bytes(data, str(path))
        while len(_MEMO) > 16:
            _MEMO.pop(next(iter(_MEMO)))
    return _MEMO[key]


def weight_matrix(skin: Skin) -> np.ndarray:
    """(N,J) each vertex's weight for each bone (zero where it has no influence), made once."""
    w = getattr(skin, "_dense", None)
    if w is None:
        w = np.zeros((len(skin.vertices), len(skin.bones)))
        np.add.at(w, (np.repeat(np.arange(len(skin.vertices)), 4), skin.joints.reshape(-1)), skin.weights.reshape(-1))
        skin._dense = w
    return w


def deform(skin: Skin, bone_world: np.ndarray) -> np.ndarray:
    """(F,N,3) vertices for bone world matrices (F,J,4,4) (or (J,4,4): one frame, (N,3)).

    Blended per vertex as one matrix product: (N,J) weights times each frame's (J,12) skinning
    matrices, then each vertex through its blended 3x4."""
    one = bone_world.ndim == 3
    w = np.asarray(bone_world, float)[None] if one else np.asarray(bone_world, float)
    skinning = (w @ skin.ibm[None])[:, :, :3, :].reshape(len(w), len(skin.bones), 12)   # (F,J,12)
    dense = weight_matrix(skin)
    v = skin.vertices
    out = np.empty((len(w), len(v), 3))
    J = len(skin.bones)
    for a in range(0, len(w), CHUNK):
        part = skinning[a:a + CHUNK]
        f = len(part)
        blended = (dense @ part.transpose(1, 0, 2).reshape(J, f * 12)).reshape(len(v), f, 3, 4)   # one GEMM
        out[a:a + f] = np.einsum("nfij,nj->fni", blended[..., :3], v) + blended[..., 3].transpose(1, 0, 2)
    return out[0] if one else out


@dataclass
class Deformed:
    """A skin's vertices at the frames asked for, each frame computed once."""
    skin: Skin
    frames: dict[int, np.ndarray] = field(default_factory=dict)

    def at(self, index: np.ndarray, bone_world: np.ndarray) -> np.ndarray:
        """(len(index),N,3) for frame indices `index`; bone_world (F,J,4,4) over all frames."""
        index = np.asarray(index, np.int64)
        todo = [int(i) for i in np.unique(index) if int(i) not in self.frames]
        if todo:
            got = deform(self.skin, bone_world[todo])
            for i, v in zip(todo, got):
                self.frames[i] = v
        return np.stack([self.frames[int(i)] for i in index]) if len(index) else np.zeros((0, len(self.skin.vertices), 3))
