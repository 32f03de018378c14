"""A robot description (URDF) made into scene bodies, joints and frames.

Every link becomes a body named `<character>-<link>` (its group the
character). What is rendered is the link's visual geometry. What the checks
use is chosen at import (`geometry`):
- "hull" (the default): the convex hull of the link's collision geometry (of
  its visual geometry where it declares none). Why: the checks need closed
  solids, to say how deep one body is inside another, and robot meshes are
  often open shells (22 of the G1's 40 link meshes are not closed; its feet
  are 13,000 open triangles, its collision four spheres at the sole's
  corners); a hull is closed, measured exactly by its face planes, and holds
  the whole link, so a film that passes on hulls passes on the links
  themselves. Planners and simulators keep robots clear the same way (the
  Go2 ships its collision geometry as hulls).
- "collision": the collision geometry as declared (a link without one: its
  visual), for descriptions whose collision meshes are closed and which must
  be judged on their concave shape; preparing such meshes costs more.
- "visual": what is shown, everywhere.
Each link's elements (meshes scaled and placed by their origins, boxes,
cylinders, spheres) are joined into one mesh written to the project's assets
by content, so a changed mesh is a changed design. A link with neither
geometry is a body without surface (it moves and carries frames; the checks
skip it).

Every joint keeps its type, origin, axis and limits (a continuous joint is a
revolute one of +-100 rad; a floating joint makes its child a root; a planar
joint is refused), every link origin is a named frame of the same name, and
masses and centres of mass come from the inertials. The character stands at
rest with every joint at zero (or its limit nearest zero), its lowest point on
the floor.

Legs are found from the structure: the links that touch the floor at rest
(within FOOT_BAND of the lowest point), deepest first, each with the movable
joints from the trunk down to it (at least two); each gets a level sole frame
`<foot>-sole` at the centre of its underside, or, for a round foot (one that
touches the floor over less than POINT_FOOT across: a quadruped's ball), at
the ball's centre, where the walk places it without levelling it. A biped's legs swing at phases 0
and 0.5, a quadruped's in diagonal pairs. Hands are links named like a hand,
palm, gripper or tool centre point at the end of a chain that is not a leg;
each gets a `<hand>-grip` frame (a tool centre point itself, the middle of a
gripper's fingers, or for a hand without fingers the point of its surface
facing the character's middle, level with its centroid: a humanoid's palm).
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh

from studio.scene.urdf import Description, Element, UrdfError, origin_matrix

FOOT_BAND = 0.005          # metres above the lowest point a link may reach and still stand on the floor
POINT_FOOT = 0.03          # a foot touching the floor over less than this across is round (placed by its centre)
HAND_WORDS = ("tcp", "gripper", "palm", "hand")
MAX_NAME = 64


@dataclass
class LinkMesh:
    """A link's joined elements as a mesh in the link frame (None: no such elements)."""
    checks: trimesh.Trimesh | None
    visual: trimesh.Trimesh | None
    rgba: tuple | None = None
    material: str = ""


@dataclass
class RobotParts:
    """What an import adds: the scene dict's new entries (meshes still to be written)."""
    bodies: list[dict] = field(default_factory=list)
    joints: list[dict] = field(default_factory=list)
    frames: list[dict] = field(default_factory=list)
    materials: list[dict] = field(default_factory=list)
    meshes: dict[str, tuple[trimesh.Trimesh | None, trimesh.Trimesh | None]] = field(default_factory=dict)
    root: str = ""
    rest: list[float] = field(default_factory=list)
    legs: list[dict] = field(default_factory=list)
    hands: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)   # link -> body
    notes: list[str] = field(default_factory=list)


def body_name(prefix: str, link: str) -> str:
    """`<prefix>-<link>` in the studio's id alphabet, shortened with a hash past 64 characters."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", link)
    name = f"{prefix}-{clean}"
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME - 9] + "-" + hashlib.sha256(link.encode()).hexdigest()[:8]
    return name


def _element_mesh(e: Element, where: str) -> trimesh.Trimesh:
    if e.kind == "mesh":
        from studio.scene.importers import Y_UP_TO_Z_UP
        try:
            m = trimesh.load(str(e.path), force="mesh", process=False)
        except Exception as err:       # trimesh raises many kinds for malformed files
            raise UrdfError(f"{where}: mesh {e.path} cannot be read ({type(err).__name__}: {err})") from None
        if not isinstance(m, trimesh.Trimesh) or len(m.faces) == 0:
            raise UrdfError(f"{where}: mesh {e.path} holds no triangles")
        m = trimesh.Trimesh(np.asarray(m.vertices, float), np.asarray(m.faces, np.int64), process=False)
        if e.path.suffix.lower() in (".glb", ".gltf"):
            m.apply_transform(Y_UP_TO_Z_UP)
        if not np.all(np.isfinite(m.vertices)):
            raise UrdfError(f"{where}: mesh {e.path} has vertices that are not finite numbers")
        m.vertices = m.vertices * np.asarray(e.scale, float)
        if np.prod(np.sign(e.scale)) < 0:
            m.invert()
    elif e.kind == "box":
        m = trimesh.creation.box(extents=e.size)
    elif e.kind == "cylinder":
        m = trimesh.creation.cylinder(radius=e.size[0], height=e.size[1], sections=32)
    elif e.kind == "capsule":
        m = trimesh.creation.capsule(height=e.size[1], radius=e.size[0], count=[16, 16])
    else:
        m = trimesh.creation.icosphere(subdivisions=2, radius=e.size[0])
    m.apply_transform(e.origin)
    return m


def _joined(elements: list[Element], where: str) -> trimesh.Trimesh | None:
    if not elements:
        return None
    parts = [_element_mesh(e, f"{where} #{k + 1}") for k, e in enumerate(elements)]
    return trimesh.util.concatenate(parts) if len(parts) > 1 else parts[0]


GEOMETRIES = ("hull", "collision", "visual")


def link_meshes(desc: Description, geometry: str = "hull") -> dict[str, LinkMesh]:
    """Each link's check and visual meshes in its own frame."""
    if geometry not in GEOMETRIES:
        raise UrdfError(f"geometry {geometry!r}: expected one of {', '.join(GEOMETRIES)}")
    out = {}
    for link in desc.links:
        where = f"{desc.file}: <link name={link.name!r}>"
        visual = _joined(link.visuals, f"{where} <visual>")
        declared = link.collisions if geometry != "visual" else []
        checks = _joined(declared, f"{where} <collision>") if declared else visual
        if geometry == "hull" and checks is not None:
            checks = _hull(checks)
        first = next((e for e in link.visuals if e.rgba is not None), None)
        out[link.name] = LinkMesh(checks, visual, first.rgba if first else None,
                                  first.material if first else "")
    return out


def _hull(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """The closed convex hull of a mesh (a flat or tiny mesh keeps its own triangles)."""
    try:
        hull = mesh.convex_hull
    except Exception:            # qhull refuses flat input: keep the mesh as it is
        return mesh
    return trimesh.Trimesh(np.asarray(hull.vertices, float), np.asarray(hull.faces, np.int64), process=False)


def _tree(desc: Description) -> tuple[dict, list[str]]:
    by_child = {j.child: j for j in desc.joints}
    children: dict[str, list[str]] = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j.child)
    order, stack = [], [desc.root]
    while stack:
        cur = stack.pop()
        order.append(cur)
        stack.extend(reversed(children.get(cur, [])))
    return by_child, order


def rest_world(desc: Description) -> dict[str, np.ndarray]:
    """Each link's frame at rest (joints at zero or the limit nearest it), the root at the origin."""
    by_child, order = _tree(desc)
    world = {desc.root: np.eye(4)}
    for link in order[1:]:
        j = by_child[link]
        m = world[j.parent] @ origin_matrix(j.xyz, j.rpy)
        q = min(max(0.0, j.lower), j.upper) if j.type in ("revolute", "prismatic") else 0.0
        if q and j.type == "revolute":
            from studio.scene.transforms import compose, quat_from_axis_angle
            m = m @ compose(np.zeros(3), quat_from_axis_angle(np.asarray(j.axis), np.array(q)))
        elif q and j.type == "prismatic":
            t = np.eye(4)
            t[:3, 3] = q * np.asarray(j.axis)
            m = m @ t
        world[link] = m
    return world


def _chain(desc: Description, link: str) -> list:
    by_child = {j.child: j for j in desc.joints}
    out, cur = [], link
    while cur in by_child:
        out.append(by_child[cur])
        cur = by_child[cur].parent
    return list(reversed(out))


def find_legs(desc: Description, meshes: dict[str, LinkMesh], world: dict[str, np.ndarray]) -> list[dict]:
    """Legs: chains from the trunk to a link on the floor at rest (see the module docstring)."""
    low = {n: float((m.checks.vertices @ world[n][:3, :3].T + world[n][:3, 3])[:, 2].min())
           for n, m in meshes.items() if m.checks is not None}
    if not low:
        return []
    floor = min(low.values())
    on_floor = [n for n, z in low.items() if z <= floor + FOOT_BAND]
    chains = {n: _chain(desc, n) for n in on_floor}
    feet = [n for n in on_floor if not any(n != o and any(j.parent == n for j in chains[o]) for o in on_floor)]
    legs = []
    for foot in feet:
        movable = [j for j in chains[foot] if j.type in ("revolute", "continuous", "prismatic")]
        if len(movable) < 2:
            continue
        w = world[foot]
        v = meshes[foot].checks.vertices @ w[:3, :3].T + w[:3, 3]
        contact = v[v[:, 2] <= v[:, 2].min() + 0.002]
        if np.ptp(contact[:, :2], axis=0).max() < POINT_FOOT:      # a ball: placed by its centre
            centre, kind = w[:3, :3] @ meshes[foot].checks.centroid + w[:3, 3], "point"
        else:
            under = v[v[:, 2] <= v[:, 2].min() + 0.01]
            centre, kind = np.array([*under[:, :2].mean(axis=0), v[:, 2].min()]), "flat"
        legs.append({"foot": foot, "joints": [j.name for j in movable], "at": centre, "kind": kind})
    if len(legs) < 2:
        return []
    c = np.mean([leg["at"][:2] for leg in legs], axis=0)
    if len(legs) == 4:                       # diagonal pairs: front-left with hind-right
        for leg in legs:
            dx, dy = leg["at"][:2] - c
            leg["phase"] = 0.0 if (dx > 0) == (dy > 0) else 0.5
    else:                                    # round the body, alternately (a biped: left, then right)
        ang = {id(leg): math.atan2(*(leg["at"][:2] - c)[::-1]) for leg in legs}
        for k, leg in enumerate(sorted(legs, key=lambda leg: ang[id(leg)])):
            leg["phase"] = 0.5 * (k % 2)
    return legs


def find_hands(desc: Description, meshes: dict[str, LinkMesh], world: dict[str, np.ndarray],
               legs: list[dict]) -> list[dict]:
    """Hands and the grip point of each, in the hand link's frame."""
    leg_links = {leg["foot"] for leg in legs} | {j for leg in legs for j in leg["joints"]}
    children: dict[str, list] = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j)

    def handlike(n: str) -> bool:
        low = n.lower()
        return any(w in low for w in HAND_WORDS) and n not in leg_links

    def below(n: str) -> list[str]:
        out, stack = [], [n]
        while stack:
            cur = stack.pop()
            for j in children.get(cur, []):
                out.append(j.child)
                stack.append(j.child)
        return out
    hands = []
    for link in desc.links:
        n = link.name
        if not handlike(n) or any(handlike(d) for d in below(n) if "tcp" in d.lower() or "hand" in d.lower()):
            continue
        inv = np.linalg.inv(world[n])
        if "tcp" in n.lower():
            grip = np.zeros(3)
        else:
            fingers = [j.child for j in children.get(n, []) if j.type in ("prismatic", "revolute")
                       and meshes[j.child].checks is not None]
            if len(fingers) >= 2:
                pts = [world[f][:3, :3] @ meshes[f].checks.centroid + world[f][:3, 3] for f in fingers]
                grip = (inv @ np.array([*np.mean(pts, axis=0), 1.0]))[:3]
            elif meshes[n].checks is not None:
                grip = _palm(meshes[n].checks, world[n], world[desc.root])
            else:
                continue
        hands.append({"link": n, "grip": grip})
    tcp_parents = {j.parent for j in desc.joints if "tcp" in j.child.lower()}
    hands = [h for h in hands if h["link"] not in tcp_parents]
    chains = {h["link"]: [j for j in _chain(desc, h["link"]) if j.type in ("revolute", "continuous", "prismatic")]
              for h in hands}
    for h in hands:          # an arm: its own joints, below where it meets another hand's chain or a leg's
        others = {j.name for o, c in chains.items() if o != h["link"] for j in c} | leg_links
        mine = chains[h["link"]]
        cut = max((k + 1 for k, j in enumerate(mine) if j.name in others), default=0)
        h["joints"] = [j.name for j in mine[cut:]]
    return hands


def without_world(desc: Description) -> Description:
    """A description whose root is a bare 'world' link joined to the robot by a floating or fixed
    joint, read from the robot's own base (the studio places the character in the world itself)."""
    top = desc.link(desc.root)
    out_of_root = [j for j in desc.joints if j.parent == desc.root]
    if (top.visuals or top.collisions or len(out_of_root) != 1
            or (out_of_root[0].type != "floating" and top.name.lower() != "world")):
        return desc
    j = out_of_root[0]
    return Description(desc.name, desc.file, desc.folder, [l for l in desc.links if l.name != desc.root],
                       [k for k in desc.joints if k is not j], j.child, desc.files)


def _palm(mesh: trimesh.Trimesh, hand: np.ndarray, root: np.ndarray) -> np.ndarray:
    """A hand without fingers holds with the side that faces the character's middle (a humanoid's
    palms face each other at rest): the point of its surface on that side, level with its centroid."""
    c = np.asarray(mesh.centroid, float)
    side = np.linalg.inv(root) @ hand @ np.array([*c, 1.0])
    inward = -np.sign(side[1]) * (root[:3, :3] @ np.array([0.0, 1.0, 0.0]))   # world, towards the middle
    if abs(side[1]) < 1e-3:
        return c
    d = hand[:3, :3].T @ inward                                               # in the hand's frame
    reach = float(np.max(np.asarray(mesh.vertices, float) @ d) - c @ d)
    return c + reach * d


def robot_parts(desc: Description, name: str, geometry: str = "hull",
                position=(0.0, 0.0, 0.0), yaw: float = 0.0, meshes: dict[str, LinkMesh] | None = None) -> RobotParts:
    """The character's bodies, joints, frames and materials (meshes to be written by the caller)."""
    desc = without_world(desc)
    for j in desc.joints:
        if j.type == "planar":
            raise UrdfError(f"{desc.file}: <joint name={j.name!r}>: planar joints are not supported")
    meshes = meshes if meshes is not None else link_meshes(desc, geometry)
    world = rest_world(desc)
    out = RobotParts()
    out.names = {link.name: body_name(name, link.name) for link in desc.links}
    if len(set(out.names.values())) != len(out.names):
        raise UrdfError(f"{desc.file}: two links have the same name once made into studio names")
    mats: dict[tuple, str] = {}
    for link in desc.links:
        lm = meshes[link.name]
        mat = ""
        if lm.visual is not None or lm.checks is not None:
            rgba = tuple(round(float(c), 4) for c in (lm.rgba or (0.7, 0.7, 0.72, 1.0)))
            if rgba not in mats:
                mats[rgba] = body_name(name, f"mat{len(mats)}")
                out.materials.append({"name": mats[rgba], "color": list(rgba), "roughness": 0.45, "metallic": 0.1})
            mat = mats[rgba]
        out.bodies.append({"name": out.names[link.name], "kind": "link", "material": mat, "group": name,
                           "mass": float(link.mass), "com": [float(v) for v in link.com]})
        out.meshes[out.names[link.name]] = (lm.checks, lm.visual)
        out.frames.append({"name": out.names[link.name], "body": out.names[link.name]})
    root_link = desc.root
    for j in desc.joints:
        if j.type == "floating":
            raise UrdfError(f"{desc.file}: <joint name={j.name!r}>: a floating joint is only read from a root "
                            "link without geometry (a 'world' link); here its parent has geometry or a parent")
        jt = {"continuous": "revolute"}.get(j.type, j.type)
        rot = _quat(origin_matrix(j.xyz, j.rpy)[:3, :3])
        out.joints.append({"name": body_name(name, j.name), "type": jt, "parent": out.names[j.parent],
                           "child": out.names[j.child], "origin": {"position": list(j.xyz), "rotation": rot},
                           "axis": list(j.axis), "lower": float(j.lower), "upper": float(j.upper)})
        if j.mimic:
            out.notes.append(f"joint {j.name} mimics {j.mimic[0]} in the description; the studio poses it on "
                             "its own (set both)")
    out.root = out.names[root_link]
    lows = [float((m.checks.vertices @ world[n][:3, :3].T + world[n][:3, 3])[:, 2].min())
            for n, m in meshes.items() if m.checks is not None]
    z0 = -min(lows) if lows else 0.0
    out.rest = [float(position[0]), float(position[1]), float(position[2]) + z0,
                math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    place = np.eye(4)
    place[:3, :3] = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    place[:3, 3] = out.rest[:3]
    found = find_legs(desc, meshes, world)
    for leg in found:
        foot = out.names[leg["foot"]]
        sole = body_name(name, f"{leg['foot']}-sole")
        level = np.eye(4)                   # level with the character's own axes at rest
        level[:3, 3] = leg["at"]
        local = np.linalg.inv(world[leg["foot"]]) @ level
        out.frames.append({"name": sole, "body": foot, "local": {"position": local[:3, 3].tolist(),
                                                                  "rotation": _quat(local[:3, :3])}})
        out.legs.append({"joints": [body_name(name, j) for j in leg["joints"]], "sole": sole,
                         "phase": leg["phase"], "foot": leg["kind"]})
    for hand in find_hands(desc, meshes, world, found):
        grip = body_name(name, f"{hand['link']}-grip")
        out.frames.append({"name": grip, "body": out.names[hand["link"]],
                           "local": {"position": [float(v) for v in hand["grip"]], "rotation": [1.0, 0, 0, 0]}})
        out.hands.append({"frame": grip, "joints": [body_name(name, j) for j in hand["joints"]]})
    return out


def _quat(m: np.ndarray) -> list[float]:
    from studio.scene.transforms import matrix_to_quat
    q = matrix_to_quat(np.asarray(m, float))
    return [float(v) for v in (q if q[0] >= 0 else -q)]


def description_digest(desc: Description) -> str:
    """sha256 of the description file and every file it names (paths relative to its folder)."""
    h = hashlib.sha256()
    for f in sorted(desc.files):
        rel = Path(f).resolve().relative_to(desc.folder.resolve()).as_posix() if Path(f).resolve().is_relative_to(
            desc.folder.resolve()) else Path(f).name
        h.update(rel.encode() + b"\0" + hashlib.sha256(Path(f).read_bytes()).digest())
    return h.hexdigest()
