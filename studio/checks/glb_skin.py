"""A skinned mesh in a glTF 2.0 binary: its skin's joints, inverse bind matrices and the
JOINTS_0 / WEIGHTS_0 of every vertex (up to four influences), read as plain arrays.

Read with the same hardened reader as every film (`glb.Glb`: types checked, counts capped,
NaN refused), and turned to the studio's +Z up: a bone's world matrix W becomes B W (B the
turn), a vertex v becomes B v, so a vertex deforms as sum_k w_k (B W_k) (IBM_k B^-1) (B v).
A vertex whose weights do not sum to 1 (within 1e-3) or that names a joint the skin does not
have is refused, naming the accessor; weights are renormalised only within that tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.checks.glb import Y_UP_TO_Z_UP, Glb, read_glb, skinned_mesh
from studio.checks.gltf_schema import studio_extras


@dataclass
class SkinData:
    """One skin: bones in parent-first order and the mesh it deforms, in the studio's frame."""
    bones: list[str]                  # bone names (node names), parents before children
    parents: list[int]                # index of each bone's parent bone, -1 for a top bone
    rest: np.ndarray                  # (J,4,4) each bone's world matrix at rest (+Z up)
    ibm: np.ndarray                   # (J,4,4) inverse bind matrices, in the +Z up frame
    vertices: np.ndarray              # (N,3) bind-pose vertices (+Z up)
    faces: np.ndarray                 # (T,3)
    joints: np.ndarray                # (N,4) bone index of each influence
    weights: np.ndarray               # (N,4) its weight
    mesh_node: str


def read_skin(path: str | Path) -> SkinData:
    """The first skinned mesh node of a .glb; GlbError naming the file and the JSON path otherwise."""
    skin = read_glb(path, _Skin)
    with np.errstate(all="ignore"):
        return skin.read()


class _Skin(Glb):
    def read(self) -> SkinData:
        nodes, skins = self._list("nodes"), self._list("skins")
        scenes = self._list("scenes")
        si = int(self.doc.get("scene", 0)) if scenes else None
        gscene = scenes[si] if si is not None and si < len(scenes) else {}
        z_up = str((studio_extras(gscene, "scene") or {}).get("up", "Y")).upper() == "Z"
        base = np.eye(4) if z_up else Y_UP_TO_Z_UP
        order, parent = self._tree(nodes, gscene.get("nodes") if gscene else None, si)
        skinned = [i for i in order if "skin" in nodes[i] and "mesh" in nodes[i]]
        if not skinned:
            raise self.fail("no mesh node with a skin")
        node = skinned[0]
        s = int(nodes[node]["skin"])
        if not 0 <= s < len(skins):
            raise self.fail(f"nodes[{node}].skin: no skin {s} (the file declares {len(skins)})")
        skin = skins[s]
        joints = [int(j) for j in skin.get("joints", [])]
        if not joints or any(not 0 <= j < len(nodes) for j in joints) or len(set(joints)) != len(joints):
            raise self.fail(f"skins[{s}].joints: expected distinct node indices of the file")
        world = {}
        for i in order:
            above = world[parent[i]] if i in parent else base[None]
            world[i] = above @ self._local(i, {}, np.zeros(1))
        rank = {n: k for k, n in enumerate(order)}
        ordered = sorted(joints, key=rank.get)
        if any(j not in rank for j in joints):
            raise self.fail(f"skins[{s}].joints: a joint is not in the scene's node tree")
        where = {j: k for k, j in enumerate(ordered)}
        names = [str(nodes[j].get("name") or f"node{j}") for j in ordered]
        if len(set(names)) != len(names):
            raise self.fail(f"skins[{s}].joints: two joints share the name; bones need names of their own")
        parents = []
        for j in ordered:
            p = parent.get(j)
            while p is not None and p not in where:
                p = parent.get(p)
            parents.append(where[p] if p is not None else -1)
        rest = np.stack([world[j][0] for j in ordered])
        if "inverseBindMatrices" in skin:
            m = self.accessor(skin["inverseBindMatrices"], f"skins[{s}].inverseBindMatrices", ("MAT4",))
            if len(m) != len(joints):
                raise self.fail(f"skins[{s}].inverseBindMatrices: {len(m)} matrices for {len(joints)} joints")
            ibm_file = m.reshape(-1, 4, 4).transpose(0, 2, 1)            # glTF matrices are column-major
        else:
            ibm_file = np.tile(np.eye(4), (len(joints), 1, 1))
        perm = [joints.index(j) for j in ordered]
        ibm = ibm_file[perm] @ np.linalg.inv(base)
        verts, faces, jw = self._skinned_mesh(int(nodes[node]["mesh"]), node, len(joints))
        mesh_world = world[node][0]
        if not np.allclose(mesh_world[:3, :3] @ mesh_world[:3, :3].T, np.eye(3), atol=1e-6):
            raise self.fail(f"nodes[{node}]: a skinned mesh node must not be scaled")
        j_idx, w = jw
        remap = np.array([where[joints[k]] for k in range(len(joints))])
        return SkinData(names, parents, rest, ibm, (verts @ base[:3, :3].T), faces, remap[j_idx], w,
                        str(nodes[node].get("name") or f"node{node}"))

    def _skinned_mesh(self, mi: int, node: int, n_joints: int):
        return skinned_mesh(self, mi, node, n_joints)
