"""Reading a robot description (URDF) into plain data, trusting nothing in it.

A URDF names links (each with visual and collision elements: meshes, boxes,
cylinders, spheres, each placed by an origin within the link's frame, and an
inertial mass) and joints (type, parent and child link, origin, axis,
limits). The link frame *is* the frame of the joint that carries it, which is
also the Scene IR's convention, so a joint's origin and axis carry over as
they are.

`package://PKG/REST` and relative mesh paths are resolved inside the
description's own folder (the nearest folder above the file named
`*_description` or holding a `package.xml`, else the file's own folder):
PKG may name that folder or any folder above it (`package://example-robot-
data/robots/g1_description/meshes/pelvis.STL` for the G1 of the
example-robot-data package), and the resolved path must lie inside the
description folder, so a description cannot reach files beside it.

Refused, naming the file and the element: a file that is not XML or not a
<robot>; a link or joint without a name or named twice; a joint whose parent
or child is no link, whose type is unknown, whose lower limit is above its
upper, whose origin, axis or limits hold a non-finite number, or that makes
the links a graph instead of a tree (a link with two parents, a cycle, two
separate trees); a mesh outside the description folder, missing, or of a
format the studio cannot read.
"""
from __future__ import annotations

import math
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MESH_FORMATS = (".stl", ".obj", ".dae", ".glb", ".gltf", ".ply")
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
CONTINUOUS_LIMIT = 100.0          # radians either way for a continuous joint (the tools' joint-value range)
MAX_FILE_BYTES = 32 << 20         # a URDF of at most 32 MiB
MAX_ELEMENTS = 20_000             # links plus joints


class UrdfError(ValueError):
    """A description that cannot be imported; the message names the file and the element."""


@dataclass
class Element:
    """One visual or collision element: what it is, where it sits in the link, its colour."""
    kind: str                          # mesh, box, cylinder, sphere
    origin: np.ndarray                 # (4,4) in the link frame
    path: Path | None = None           # a mesh file (resolved inside the description folder)
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    size: tuple[float, ...] = ()       # box (x, y, z); cylinder (radius, length); sphere (radius,)
    rgba: tuple[float, float, float, float] | None = None
    material: str = ""


@dataclass
class Link:
    name: str
    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)   # the inertial origin, link frame
    visuals: list[Element] = field(default_factory=list)
    collisions: list[Element] = field(default_factory=list)


@dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    lower: float = 0.0
    upper: float = 0.0
    mimic: tuple[str, float, float] | None = None       # (joint, multiplier, offset)


@dataclass
class Description:
    """A parsed URDF: its links and joints in the file's order, and the root link."""
    name: str
    file: Path
    folder: Path                        # the description folder every file must lie inside
    links: list[Link]
    joints: list[Joint]
    root: str
    files: list[Path] = field(default_factory=list)     # every file it names, for the content hash

    def link(self, name: str) -> Link:
        return next(l for l in self.links if l.name == name)


def description_folder(file: Path) -> Path:
    """The folder a description's files must lie inside."""
    start = Path(file).resolve().parent
    for d in (start, *start.parents):
        if d.name.endswith("_description") or (d / "package.xml").is_file():
            if d.name.endswith("_description") or d == start or d == start.parent:
                return d
            break
    if start.name in ("urdf", "robots", "robot") and start.parent != start:
        return start.parent
    return start


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's roll-pitch-yaw (fixed axes X, then Y, then Z): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def origin_matrix(xyz, rpy) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rpy_matrix(rpy)
    m[:3, 3] = [float(v) for v in xyz]
    return m


class _Reader:
    def __init__(self, file: Path):
        self.file = Path(file)
        self.folder = description_folder(self.file)
        self.files: list[Path] = [self.file.resolve()]

    def fail(self, where: str, what: str) -> UrdfError:
        return UrdfError(f"{self.file}: {where}: {what}")

    def numbers(self, el, attr: str, n: int, where: str, default: str | None = None) -> tuple[float, ...]:
        raw = el.get(attr, default) if el is not None else default
        if raw is None:
            raise self.fail(where, f"needs {attr}=\"...\" ({n} numbers)")
        parts = raw.split()
        try:
            vals = tuple(float(v) for v in parts)
        except ValueError:
            raise self.fail(where, f"{attr}=\"{raw}\" is not {n} numbers") from None
        if len(vals) != n:
            raise self.fail(where, f"{attr}=\"{raw}\" has {len(vals)} numbers, expected {n}")
        if not all(math.isfinite(v) for v in vals):
            raise self.fail(where, f"{attr}=\"{raw}\" holds a number that is not finite")
        return vals

    def origin(self, el, where: str) -> tuple[tuple, tuple]:
        o = el.find("origin") if el is not None else None
        if o is None:
            return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        return (self.numbers(o, "xyz", 3, f"{where} <origin>", "0 0 0"),
                self.numbers(o, "rpy", 3, f"{where} <origin>", "0 0 0"))

    def resolve(self, filename: str, where: str) -> Path:
        """A mesh's file, inside the description folder, existing and of a known format."""
        parts = urllib.parse.urlsplit(filename)
        folder = self.folder.resolve()
        if parts.scheme == "package":
            pkg, rest = parts.netloc, urllib.parse.unquote(parts.path).lstrip("/")
            candidates = [d / rest for d in (folder, *folder.parents) if d.name == pkg]
            candidates += [folder / rest]                  # a package named otherwise: the path from the folder
            target = next((c for c in candidates if c.resolve().is_file()), candidates[0])
        elif parts.scheme == "file":
            target = Path(urllib.parse.unquote(parts.path))
        elif parts.scheme:
            raise self.fail(where, f"mesh {filename!r}: only package://, file:// and relative paths are read")
        else:
            target = self.file.resolve().parent / urllib.parse.unquote(filename)
        target = target.resolve()
        if not target.is_relative_to(folder):
            raise self.fail(where, f"mesh {filename!r} resolves to {target}, outside the description folder "
                                   f"{folder}; a description may only use files inside its own folder")
        if target.suffix.lower() not in MESH_FORMATS:
            raise self.fail(where, f"mesh {filename!r}: unknown format {target.suffix!r}; expected one of "
                                   f"{', '.join(MESH_FORMATS)}")
        if not target.is_file():
            raise self.fail(where, f"mesh {filename!r} is missing (expected {target})")
        if target not in self.files:
            self.files.append(target)
        return target

    def element(self, el, where: str, colours: dict) -> Element | None:
        xyz, rpy = self.origin(el, where)
        geo = el.find("geometry")
        if geo is None or len(geo) == 0:
            raise self.fail(where, "has no <geometry>")
        g = geo[0]
        gw = f"{where} <{g.tag}>"
        out = Element(g.tag, origin_matrix(xyz, rpy))
        if g.tag == "mesh":
            name = g.get("filename")
            if not name:
                raise self.fail(gw, "needs filename=\"...\"")
            out.path = self.resolve(name, gw)
            out.scale = self.numbers(g, "scale", 3, gw, "1 1 1")
            if min(abs(s) for s in out.scale) <= 0:
                raise self.fail(gw, f"scale {out.scale} flattens the mesh")
        elif g.tag == "box":
            out.size = self.numbers(g, "size", 3, gw)
        elif g.tag == "cylinder":
            out.size = (self.numbers(g, "radius", 1, gw)[0], self.numbers(g, "length", 1, gw)[0])
        elif g.tag == "sphere":
            out.size = self.numbers(g, "radius", 1, gw)
        elif g.tag == "capsule":
            out.size = (self.numbers(g, "radius", 1, gw)[0], self.numbers(g, "length", 1, gw)[0])
        else:
            raise self.fail(gw, "unknown geometry; expected mesh, box, cylinder, sphere or capsule")
        if out.size and min(out.size) <= 0:
            raise self.fail(gw, f"sizes must be positive, got {out.size}")
        mat = el.find("material")
        if mat is not None:
            out.material = mat.get("name", "")
            c = mat.find("color")
            if c is not None:
                out.rgba = self.numbers(c, "rgba", 4, f"{where} <material> <color>")
            elif out.material in colours:
                out.rgba = colours[out.material]
        return out

    def read(self) -> Description:
        try:
            size = self.file.stat().st_size
        except OSError as e:
            raise UrdfError(f"{self.file}: cannot read ({e.strerror})") from None
        if size > MAX_FILE_BYTES:
            raise UrdfError(f"{self.file}: {size} bytes; the largest URDF read is {MAX_FILE_BYTES} bytes")
        try:
            root = ET.fromstring(self.file.read_bytes())
        except ET.ParseError as e:
            raise UrdfError(f"{self.file}: not valid XML ({e})") from None
        if root.tag != "robot":
            raise UrdfError(f"{self.file}: the top element is <{root.tag}>, expected <robot>")
        if len(root.findall("link")) + len(root.findall("joint")) > MAX_ELEMENTS:
            raise UrdfError(f"{self.file}: more than {MAX_ELEMENTS} links and joints")
        colours = {}
        for i, m in enumerate(root.findall("material")):
            c = m.find("color")
            if m.get("name") and c is not None:
                colours[m.get("name")] = self.numbers(c, "rgba", 4, f"<material name={m.get('name')!r}>")
        links: list[Link] = []
        seen: set[str] = set()
        for i, el in enumerate(root.findall("link")):
            name = el.get("name")
            where = f"<link> #{i + 1}" if not name else f"<link name={name!r}>"
            if not name:
                raise self.fail(where, "has no name")
            if name in seen:
                raise self.fail(where, "a second link of that name")
            seen.add(name)
            link = Link(name)
            inertial = el.find("inertial")
            if inertial is not None:
                link.com = self.origin(inertial, f"{where} <inertial>")[0]
                m = inertial.find("mass")
                if m is not None:
                    link.mass = self.numbers(m, "value", 1, f"{where} <inertial> <mass>")[0]
                    if link.mass < 0:
                        raise self.fail(f"{where} <inertial> <mass>", f"negative mass {link.mass}")
            for tag, into in (("visual", link.visuals), ("collision", link.collisions)):
                for k, v in enumerate(el.findall(tag)):
                    into.append(self.element(v, f"{where} <{tag}> #{k + 1}", colours))
            links.append(link)
        if not links:
            raise UrdfError(f"{self.file}: the robot has no <link>")
        joints: list[Joint] = []
        jseen: set[str] = set()
        parent_of: dict[str, str] = {}
        for i, el in enumerate(root.findall("joint")):
            name = el.get("name")
            where = f"<joint> #{i + 1}" if not name else f"<joint name={name!r}>"
            if not name:
                raise self.fail(where, "has no name")
            if name in jseen:
                raise self.fail(where, "a second joint of that name")
            jseen.add(name)
            jt = el.get("type")
            if jt not in JOINT_TYPES:
                raise self.fail(where, f"type {jt!r}; expected one of {', '.join(JOINT_TYPES)}")
            ends = {}
            for end in ("parent", "child"):
                e = el.find(end)
                ln = e.get("link") if e is not None else None
                if ln not in seen:
                    raise self.fail(where, f"<{end} link={ln!r}>: no link of that name")
                ends[end] = ln
            if ends["child"] in parent_of:
                raise self.fail(where, f"link {ends['child']!r} is already the child of joint "
                                       f"{parent_of[ends['child']]!r}; the links must form a tree")
            if ends["child"] == ends["parent"]:
                raise self.fail(where, f"link {ends['child']!r} is its own parent (a cycle)")
            parent_of[ends["child"]] = name
            xyz, rpy = self.origin(el, where)
            j = Joint(name, jt, ends["parent"], ends["child"], xyz, rpy)
            if jt in ("revolute", "continuous", "prismatic", "planar"):
                ax = self.numbers(el.find("axis"), "xyz", 3, f"{where} <axis>", "1 0 0")
                n = math.sqrt(sum(a * a for a in ax))
                if n < 1e-9:
                    raise self.fail(f"{where} <axis>", "the axis is zero")
                j.axis = tuple(a / n for a in ax)
            if jt in ("revolute", "prismatic"):
                lim = el.find("limit")
                if lim is None:
                    raise self.fail(where, f"a {jt} joint needs <limit lower=... upper=...>")
                j.lower = self.numbers(lim, "lower", 1, f"{where} <limit>", "0")[0]
                j.upper = self.numbers(lim, "upper", 1, f"{where} <limit>", "0")[0]
                if j.lower > j.upper:
                    raise self.fail(f"{where} <limit>", f"lower {j.lower:g} is above upper {j.upper:g}")
            elif jt == "continuous":
                j.lower, j.upper = -CONTINUOUS_LIMIT, CONTINUOUS_LIMIT
            mim = el.find("mimic")
            if mim is not None:
                j.mimic = (mim.get("joint", ""), self.numbers(mim, "multiplier", 1, f"{where} <mimic>", "1")[0],
                           self.numbers(mim, "offset", 1, f"{where} <mimic>", "0")[0])
            joints.append(j)
        by_parent: dict[str, list[str]] = {}
        for j in joints:
            by_parent.setdefault(j.parent, []).append(j.child)
        order = {j.name: k for k, j in enumerate(joints)}
        by_name = {j.name: j for j in joints}
        for start in parent_of:                 # a cycle: walking up from a link comes back to it
            seen, cur = [], start
            while cur in parent_of and cur not in seen:
                seen.append(cur)
                cur = by_name[parent_of[cur]].parent
            if cur in seen:
                loop = [parent_of[x] for x in seen[seen.index(cur):]]
                last = max(loop, key=order.get)      # the joint that closed it, in the file's order
                raise self.fail(f"<joint name={last!r}>", f"closes a cycle of joints {sorted(loop, key=order.get)}; "
                                                          "the links must form a tree")
        roots = [l.name for l in links if l.name not in parent_of]
        if len(roots) > 1:
            raise self.fail(f"<link name={roots[1]!r}>", f"a second root: links {roots[:4]} have no parent; "
                                                         "a description is one tree")
        return Description(root.get("name") or self.file.stem, self.file, self.folder, links, joints, roots[0],
                           self.files)


def read_urdf(file: str | Path) -> Description:
    """The description in a URDF file; UrdfError naming the file and element if it cannot be imported."""
    return _Reader(Path(file)).read()
