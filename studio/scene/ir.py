"""Scene IR: the explicit, editable structure of a film's world.

Units are metres, +Z is up, rotations are unit quaternions in (w, x, y, z)
order (Blender's order). A body is one rigid mesh. An articulated character
is a tree of bodies connected by joints; a body that is no joint's child is a
*root* and carries its own world transform in a pose. Everything here is plain
data with a JSON round-trip; `Scene.from_dict` validates and names the field
that is wrong.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from studio.store.names import NameProblem, check_id, relative_inside

BODY_KINDS = ("rigid", "link", "ground", "static", "effect", "bone")   # bone: moves a skin; the skin is the surface
JOINT_TYPES = ("revolute", "prismatic", "fixed", "ball")
GEOMETRY_SOURCES = ("cad", "mesh", "box", "none", "skin")   # none: no surface (a frame link); skin: a skinned mesh
FLAGS = ("static", "self_propelled", "buoyant", "liquid", "consumable")


class IRError(ValueError):
    """A scene description that does not hold; the message names the field."""


def _vec(value: Any, n: int, where: str) -> list[float]:
    try:
        out = [float(v) for v in value]
    except (TypeError, ValueError):
        raise IRError(f"{where}: expected {n} numbers, got {value!r}") from None
    if len(out) != n or not all(math.isfinite(v) for v in out):
        raise IRError(f"{where}: expected {n} finite numbers, got {value!r}")
    return out


def _quat(value: Any, where: str) -> list[float]:
    q = _vec(value, 4, where)
    norm = math.sqrt(sum(v * v for v in q))
    if abs(norm - 1.0) > 1e-3:
        raise IRError(f"{where}: quaternion (w, x, y, z) must have unit length, has {norm:.4f}")
    return [v / norm for v in q]


IDENTITY = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


@dataclass
class Transform:
    """A rigid transform: position then (w, x, y, z) rotation."""

    position: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    rotation: list[float] = field(default_factory=lambda: [1.0, 0.0, 0.0, 0.0])

    @classmethod
    def from_dict(cls, d: Any, where: str) -> "Transform":
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise IRError(f"{where}: expected an object with position and rotation")
        return cls(_vec(d.get("position", [0, 0, 0]), 3, f"{where}.position"),
                   _quat(d.get("rotation", [1, 0, 0, 0]), f"{where}.rotation"))

    def as_list(self) -> list[float]:
        return [*self.position, *self.rotation]


@dataclass
class Geometry:
    """Where a body's mesh comes from: a CAD part, an imported mesh, a box, or none (a link
    between joints with no surface of its own: it moves and carries frames, the checks skip it)."""

    source: str = "box"
    part: str = ""                      # CAD part name in studio.scene.parts
    params: dict[str, Any] = field(default_factory=dict)
    path: str = ""                      # mesh file, relative to the project
    size: list[float] = field(default_factory=lambda: [0.1, 0.1, 0.1])  # box extents
    tolerance: float = 0.5e-3           # tessellation tolerance, metres
    offset: Transform = field(default_factory=Transform)  # mesh placement in the body frame

    @classmethod
    def from_dict(cls, d: dict, where: str) -> "Geometry":
        src = d.get("source", "box")
        if src not in GEOMETRY_SOURCES:
            raise IRError(f"{where}.source: expected one of {GEOMETRY_SOURCES}, got {src!r}")
        g = cls(source=src, part=str(d.get("part", "")), params=dict(d.get("params", {})),
                path=str(d.get("path", "")),
                size=_vec(d.get("size", [0.1, 0.1, 0.1]), 3, f"{where}.size"),
                tolerance=float(d.get("tolerance", 0.5e-3)),
                offset=Transform.from_dict(d.get("offset"), f"{where}.offset"))
        if src == "cad" and not g.part:
            raise IRError(f"{where}.part: a CAD geometry needs a part name")
        if src in ("mesh", "skin") and not g.path:
            raise IRError(f"{where}.path: a {src} geometry needs a file path")
        if src in ("mesh", "skin"):
            _named(relative_inside, g.path, "assets", f"{where}.path")
        if src == "box" and min(g.size) <= 0:
            raise IRError(f"{where}.size: box extents must be positive, got {g.size}")
        return g


@dataclass
class Material:
    name: str
    color: list[float] = field(default_factory=lambda: [0.8, 0.8, 0.8, 1.0])
    roughness: float = 0.5
    metallic: float = 0.0


@dataclass
class Body:
    name: str
    kind: str = "rigid"
    geometry: Geometry = field(default_factory=Geometry)
    material: str = ""
    group: str = ""                     # the character or assembly it belongs to
    flags: list[str] = field(default_factory=list)
    mass: float = 1.0
    visual: Geometry | None = None      # what is rendered, when it is not what is checked (a robot's link)
    com: list[float] | None = None      # centre of mass in the body frame, when known (a URDF's inertial)

    @property
    def is_static(self) -> bool:
        return self.kind in ("ground", "static") or "static" in self.flags

    def has(self, flag: str) -> bool:
        return flag in self.flags

    @property
    def has_surface(self) -> bool:
        """Does the body take part in contact? Not a link without one, nor a bone (its skin does)."""
        return self.geometry.source != "none" and self.kind != "bone"

    @property
    def is_skin(self) -> bool:
        return self.geometry.source == "skin"

    @property
    def shown(self) -> Geometry:
        """The geometry that is rendered and drawn: the visual one where there is one."""
        return self.visual if self.visual is not None else self.geometry

    def to_dict(self) -> dict:
        """Written only with what is set, so a body without a visual or a centre of mass hashes as before."""
        d = asdict(self)
        for k in ("visual", "com"):
            if d[k] is None:
                d.pop(k)
        return d


@dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: Transform = field(default_factory=Transform)   # child frame at zero, in the parent frame
    axis: list[float] = field(default_factory=lambda: [0.0, 0.0, 1.0])
    lower: float = -math.pi
    upper: float = math.pi

    @property
    def dof(self) -> int:
        return {"revolute": 1, "prismatic": 1, "fixed": 0, "ball": 3}[self.type]


@dataclass
class NamedFrame:
    """A named coordinate frame on a body, e.g. a gripper or a handle."""

    name: str
    body: str
    local: Transform = field(default_factory=Transform)


@dataclass
class Camera:
    """A camera looking from `position` at `target`; one that follows a body reads both
    as offsets from that body's origin, so it moves with the body without turning with it."""
    name: str
    position: list[float] = field(default_factory=lambda: [4.0, -4.0, 2.0])
    target: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.8])
    lens_mm: float = 35.0
    sensor_mm: float = 36.0
    resolution: list[int] = field(default_factory=lambda: [640, 360])
    follow: str = ""                  # a body's name; written only when set, so older scenes hash as before

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.follow:
            d.pop("follow")
        return d


@dataclass
class AllowedOverlap:
    """A declared overlap that is construction, not a defect."""

    a: str
    b: str
    reason: str = "construction"


@dataclass
class Character:
    """An imported character: where it came from and what was found in it.

    `digest` hashes the source file and every file it names, so a character whose
    description changed and was imported again changes the scene's design (and the
    reviews of every state go stale). `legs` are the legs found from its structure
    (joints from the trunk down, the sole frame, the gait phase, the kind of foot),
    which the walk tool uses when a segment names the character instead of declaring
    legs; `hands` likewise each hand's grip frame and its arm's joints."""

    name: str
    source: str                       # "urdf" or "gltf"
    file: str                         # the source file's name (for people; the digest is what counts)
    digest: str
    root: str
    geometry: str = "hull"            # which of the description's geometry the checks use
    legs: list[dict] = field(default_factory=list)
    hands: list[dict] = field(default_factory=list)    # {"frame": grip frame, "joints": its arm's chain}
    skin: dict = field(default_factory=dict)           # a skinned character: mesh asset, bones, profile


@dataclass
class Scene:
    name: str = "untitled"
    bodies: list[Body] = field(default_factory=list)
    joints: list[Joint] = field(default_factory=list)
    frames: list[NamedFrame] = field(default_factory=list)
    cameras: list[Camera] = field(default_factory=list)
    materials: list[Material] = field(default_factory=list)
    allowed_overlaps: list[AllowedOverlap] = field(default_factory=list)
    rest: dict[str, list[float]] = field(default_factory=dict)   # root body -> rest transform (7)
    characters: list[Character] = field(default_factory=list)

    # ---- look-ups -------------------------------------------------------
    def body(self, name: str) -> Body:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(f"no body named {name!r}")

    def joint(self, name: str) -> Joint:
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(f"no joint named {name!r}")

    def frame(self, name: str) -> NamedFrame:
        for f in self.frames:
            if f.name == name:
                return f
        raise KeyError(f"no named frame {name!r}")

    def character(self, name: str) -> Character:
        for c in self.characters:
            if c.name == name:
                return c
        raise KeyError(f"no character named {name!r}")

    def camera(self, name: str) -> Camera:
        for c in self.cameras:
            if c.name == name:
                return c
        raise KeyError(f"no camera named {name!r}")

    @property
    def body_names(self) -> list[str]:
        return [b.name for b in self.bodies]

    @property
    def roots(self) -> list[str]:
        children = {j.child for j in self.joints}
        return [b.name for b in self.bodies if b.name not in children]

    def joint_of_child(self, child: str) -> Joint | None:
        for j in self.joints:
            if j.child == child:
                return j
        return None

    def group_root(self, body: str) -> str:
        """The root body of the tree that `body` belongs to."""
        j = self.joint_of_child(body)
        while j is not None:
            body = j.parent
            j = self.joint_of_child(body)
        return body

    # ---- serialisation --------------------------------------------------
    def to_dict(self) -> dict:
        d = asdict(self)
        d["cameras"] = [c.to_dict() for c in self.cameras]
        d["bodies"] = [b.to_dict() for b in self.bodies]
        if not self.characters:
            d.pop("characters")         # written only when there are some, so older scenes hash as before
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: str = "scene") -> "Scene":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise IRError(f"{where}: not valid JSON ({e.msg} at line {e.lineno})") from None
        return cls.from_dict(data, where)

    @classmethod
    def from_dict(cls, d: Any, where: str = "scene") -> "Scene":
        if not isinstance(d, dict):
            raise IRError(f"{where}: expected an object")
        s = cls(name=str(d.get("name", "untitled")))
        for i, m in enumerate(d.get("materials", [])):
            s.materials.append(Material(name=_name(m, f"{where}.materials[{i}]"),
                                        color=_vec(m.get("color", [0.8, 0.8, 0.8, 1]), 4, f"{where}.materials[{i}].color"),
                                        roughness=float(m.get("roughness", 0.5)),
                                        metallic=float(m.get("metallic", 0.0))))
        mats = {m.name for m in s.materials}
        for i, b in enumerate(d.get("bodies", [])):
            at = f"{where}.bodies[{i}]"
            kind = b.get("kind", "rigid")
            if kind not in BODY_KINDS:
                raise IRError(f"{at}.kind: expected one of {BODY_KINDS}, got {kind!r}")
            flags = list(b.get("flags", []))
            bad = [f for f in flags if f not in FLAGS]
            if bad:
                raise IRError(f"{at}.flags: unknown flag {bad[0]!r}; expected some of {FLAGS}")
            mat = str(b.get("material", ""))
            if mat and mat not in mats:
                raise IRError(f"{at}.material: no material named {mat!r}")
            visual = b.get("visual")
            com = b.get("com")
            s.bodies.append(Body(name=_file_name(b, at), kind=kind,
                                 geometry=Geometry.from_dict(b.get("geometry", {}), f"{at}.geometry"),
                                 material=mat, group=str(b.get("group", "")), flags=flags,
                                 mass=float(b.get("mass", 1.0)),
                                 visual=None if visual is None else Geometry.from_dict(visual, f"{at}.visual"),
                                 com=None if com is None else _vec(com, 3, f"{at}.com")))
        names = _unique([b.name for b in s.bodies], f"{where}.bodies")
        for i, j in enumerate(d.get("joints", [])):
            at = f"{where}.joints[{i}]"
            jt = j.get("type")
            if jt not in JOINT_TYPES:
                raise IRError(f"{at}.type: expected one of {JOINT_TYPES}, got {jt!r}")
            for end in ("parent", "child"):
                if j.get(end) not in names:
                    raise IRError(f"{at}.{end}: no body named {j.get(end)!r}")
            lower, upper = float(j.get("lower", -math.pi)), float(j.get("upper", math.pi))
            if lower > upper:
                raise IRError(f"{at}: lower limit {lower} is above upper limit {upper}")
            axis = _vec(j.get("axis", [0, 0, 1]), 3, f"{at}.axis")
            n = math.sqrt(sum(a * a for a in axis))
            if n < 1e-9:
                raise IRError(f"{at}.axis: must not be zero")
            s.joints.append(Joint(name=_name(j, at), type=jt, parent=j["parent"], child=j["child"],
                                  origin=Transform.from_dict(j.get("origin"), f"{at}.origin"),
                                  axis=[a / n for a in axis], lower=lower, upper=upper))
        _unique([j.name for j in s.joints], f"{where}.joints")
        children = [j.child for j in s.joints]
        if len(set(children)) != len(children):
            raise IRError(f"{where}.joints: a body is the child of two joints")
        for j in s.joints:   # no cycles: walking up from any child must end at a root
            seen, cur = set(), j.child
            while (pj := s.joint_of_child(cur)) is not None:
                if cur in seen:
                    raise IRError(f"{where}.joints: the joint tree has a cycle through {cur!r}")
                seen.add(cur)
                cur = pj.parent
        for i, f in enumerate(d.get("frames", [])):
            at = f"{where}.frames[{i}]"
            if f.get("body") not in names:
                raise IRError(f"{at}.body: no body named {f.get('body')!r}")
            s.frames.append(NamedFrame(name=_name(f, at), body=f["body"],
                                       local=Transform.from_dict(f.get("local"), f"{at}.local")))
        _unique([f.name for f in s.frames], f"{where}.frames")
        for i, c in enumerate(d.get("cameras", [])):
            at = f"{where}.cameras[{i}]"
            res = [int(v) for v in _vec(c.get("resolution", [640, 360]), 2, f"{at}.resolution")]
            if min(res) < 16:
                raise IRError(f"{at}.resolution: at least 16 pixels each way, got {res}")
            lens = float(c.get("lens_mm", 35.0))
            if lens <= 0:
                raise IRError(f"{at}.lens_mm: must be positive, got {lens}")
            s.cameras.append(Camera(name=_file_name(c, at), position=_vec(c.get("position", [4, -4, 2]), 3, f"{at}.position"),
                                    target=_vec(c.get("target", [0, 0, 0.8]), 3, f"{at}.target"),
                                    lens_mm=lens, sensor_mm=float(c.get("sensor_mm", 36.0)), resolution=res,
                                    follow=str(c.get("follow", ""))))
            if s.cameras[-1].follow and s.cameras[-1].follow not in names:
                raise IRError(f"{at}.follow: no body named {s.cameras[-1].follow!r}")
        _unique([c.name for c in s.cameras], f"{where}.cameras")
        for i, o in enumerate(d.get("allowed_overlaps", [])):
            at = f"{where}.allowed_overlaps[{i}]"
            for end in ("a", "b"):
                if o.get(end) not in names:
                    raise IRError(f"{at}.{end}: no body named {o.get(end)!r}")
            s.allowed_overlaps.append(AllowedOverlap(o["a"], o["b"], str(o.get("reason", "construction"))))
        for i, c in enumerate(d.get("characters", []) or []):
            at = f"{where}.characters[{i}]"
            if not isinstance(c, dict):
                raise IRError(f"{at}: expected an object")
            if c.get("root") not in names:
                raise IRError(f"{at}.root: no body named {c.get('root')!r}")
            for key in ("legs", "hands"):
                for k, item in enumerate(c.get(key, []) or []):
                    if not isinstance(item, dict) or not isinstance(item.get("joints"), list):
                        raise IRError(f"{at}.{key}[{k}]: expected an object with its joints")
            s.characters.append(Character(name=_file_name(c, at), source=str(c.get("source", "")),
                                          file=str(c.get("file", "")), digest=str(c.get("digest", "")),
                                          root=c["root"], geometry=str(c.get("geometry", "hull")),
                                          legs=[dict(leg) for leg in c.get("legs", []) or []],
                                          hands=[dict(h) for h in c.get("hands", []) or []],
                                          skin=dict(c.get("skin", {}) or {})))
        _unique([c.name for c in s.characters], f"{where}.characters")
        roots = set(s.roots)
        for body, t in dict(d.get("rest", {})).items():
            if body not in roots:
                raise IRError(f"{where}.rest.{body}: not a root body")
            s.rest[body] = [*_vec(t[:3], 3, f"{where}.rest.{body}"), *_quat(t[3:], f"{where}.rest.{body}")]
        return s


def _name(d: Any, where: str) -> str:
    if not isinstance(d, dict):
        raise IRError(f"{where}: expected an object")
    n = d.get("name")
    if not isinstance(n, str) or not n.strip():
        raise IRError(f"{where}.name: expected a non-empty name")
    return n


def _file_name(d: Any, where: str) -> str:
    """A name that ends up in file names (bodies, cameras): it must match the id pattern."""
    return _named(check_id, _name(d, where), f"{where}.name")


def _named(check, *args) -> str:
    try:
        return check(*args)
    except NameProblem as e:
        raise IRError(str(e)) from None


def _unique(names: list[str], where: str) -> set[str]:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise IRError(f"{where}: the name {n!r} is used twice")
        seen.add(n)
    return seen


def canonical_hash(obj: Any) -> str:
    """sha256 of a canonical JSON form; floats are rounded to 1e-9 so that
    a value written and read back hashes the same."""
    def norm(v: Any) -> Any:
        if isinstance(v, float):
            return round(v, 9) + 0.0
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if hasattr(v, "tolist"):
            return norm(v.tolist())
        return v
    return hashlib.sha256(json.dumps(norm(obj), sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def design_id(scene: Scene, geometry_hashes: dict[str, str]) -> str:
    """Hash of the scene's structure: bodies and their geometry, joints, frames.
    Poses and cameras are not part of the design."""
    d = scene.to_dict()
    structure = {"bodies": d["bodies"], "joints": d["joints"], "frames": d["frames"],
                 "allowed_overlaps": d["allowed_overlaps"], "geometry": dict(sorted(geometry_hashes.items()))}
    if scene.characters:                # an imported character's sources count (older scenes hash as before)
        structure["characters"] = d["characters"]
    return canonical_hash(structure)[:16]
