"""Parametric CAD parts: a registry of name -> build123d solid.

Every part is built in metres, +Z up, in its own frame (each function's
docstring says where its origin is); a body places it with Geometry.offset.
`build(name, params)` validates the parameters first, so a scene that names
an unknown part, leaves out a parameter or gives a bad value is refused with a
message naming the part and the parameter. build123d is imported only when a
part is actually built (a cached mesh never needs it).
"""
from __future__ import annotations

import hashlib
import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

REQUIRED = object()


class PartError(ValueError):
    """A part that cannot be built as asked; the message names the part and parameter."""


@dataclass(frozen=True)
class Param:
    """One parameter of a part: its kind (length, count, angle), default and range."""

    kind: str = "length"
    default: Any = REQUIRED
    low: float = 0.0
    high: float = math.inf
    open_low: bool = True          # lengths must be > 0, counts >= low

    def check(self, part: str, name: str, value: Any) -> float | int:
        where = f"part {part!r}, parameter {name!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PartError(f"{where}: expected a number, got {value!r}")
        if not math.isfinite(value):
            raise PartError(f"{where}: expected a finite number, got {value!r}")
        if self.kind == "count":
            if int(value) != value:
                raise PartError(f"{where}: expected a whole number, got {value!r}")
            value = int(value)
        too_low = value <= self.low if (self.open_low and self.kind != "count") else value < self.low
        if too_low or value > self.high:
            lo = f"> {self.low:g}" if (self.open_low and self.kind != "count") else f">= {self.low:g}"
            hi = f" and <= {self.high:g}" if math.isfinite(self.high) else ""
            raise PartError(f"{where}: expected a value {lo}{hi}, got {value!r}")
        return value if self.kind == "count" else float(value)


@dataclass(frozen=True)
class PartSpec:
    name: str
    build: Callable[..., Any]
    params: dict[str, Param]
    doc: str

    def source_hash(self) -> str:
        """Hash of the part's code: the function and the module's helpers it calls, so
        editing either invalidates cached meshes and makes approvals of the part stale."""
        fn = self.build
        if fn not in _SOURCE_HASHES:
            _SOURCE_HASHES[fn] = hashlib.sha256("\n".join(_code_text(f) for f in _called(fn)).encode()).hexdigest()[:16]
        return _SOURCE_HASHES[fn]


_SOURCE_HASHES: dict[Callable, str] = {}


def _code_text(fn: Callable) -> str:
    """A function's source; a frozen (installed) studio ships none, so its compiled code stands in."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        code = fn.__code__
        return repr((code.co_code, code.co_consts, code.co_names))


def _called(fn: Callable) -> list[Callable]:
    """`fn` and every function of its own module it names, transitively, in a stable order."""
    seen: dict[str, Callable] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        key = f"{f.__module__}.{f.__qualname__}"
        if key in seen:
            continue
        seen[key] = f
        codes = [f.__code__]
        while codes:
            c = codes.pop()
            codes += [k for k in c.co_consts if inspect.iscode(k)]
            for name in c.co_names:
                g = f.__globals__.get(name)
                if inspect.isfunction(g) and g.__module__ == fn.__module__:
                    todo.append(g)
    return [seen[k] for k in sorted(seen)]


PARTS: dict[str, PartSpec] = {}


def part(name: str, **params: Param):
    """Register a part-building function under `name` with its parameters."""
    def register(fn):
        PARTS[name] = PartSpec(name, fn, params, (fn.__doc__ or "").strip().splitlines()[0])
        return fn
    return register


def spec(name: str) -> PartSpec:
    try:
        return PARTS[name]
    except KeyError:
        raise PartError(f"unknown part {name!r}; known parts: {', '.join(sorted(PARTS))}") from None


def resolve(name: str, params: dict) -> dict[str, float | int]:
    """The full, checked parameter set (defaults filled in) for a part."""
    s = spec(name)
    if not isinstance(params, dict):
        raise PartError(f"part {name!r}: parameters must be an object, got {params!r}")
    unknown = sorted(set(params) - set(s.params))
    if unknown:
        raise PartError(f"part {name!r}: unknown parameter {unknown[0]!r}; "
                        f"expected some of {', '.join(s.params)}")
    out = {}
    for pname, p in s.params.items():
        if pname not in params:
            if p.default is REQUIRED:
                raise PartError(f"part {name!r}: missing parameter {pname!r} ({p.kind})")
            out[pname] = p.default
        else:
            out[pname] = p.check(name, pname, params[pname])
    return out


def build(name: str, params: dict):
    """Build the named part as a build123d solid (parameters checked first)."""
    full = resolve(name, params)
    shape = spec(name).build(**full)
    if shape is None or shape.volume <= 0:
        raise PartError(f"part {name!r} with {full}: the parameters give an empty solid")
    return shape


def _b():
    import build123d
    return build123d


def _fillet_all(shape, radius: float):
    b = _b()
    return b.fillet(shape.edges(), radius) if radius > 0 else shape


L = Param  # short alias for length parameters in the table below


# ---- set pieces ----------------------------------------------------------

@part("floor_slab", width=L(default=10.0), depth=L(default=8.0), thickness=L(default=0.05))
def floor_slab(width, depth, thickness):
    """A floor slab, centred on the origin with its top face at z = 0."""
    b = _b()
    return b.Box(width, depth, thickness, align=(b.Align.CENTER, b.Align.CENTER, b.Align.MAX))


@part("wall_with_opening", width=L(default=5.0), height=L(default=2.6), thickness=L(default=0.15),
      door_width=L(default=0.9), door_height=L(default=2.1), door_offset=Param("length", 0.0, -math.inf))
def wall_with_opening(width, height, thickness, door_width, door_height, door_offset):
    """A wall along Y (thickness along X), base at z = 0, with a door opening centred at y = door_offset."""
    b = _b()
    if door_width >= width - 2 * abs(door_offset) or door_height >= height:
        raise PartError(f"part 'wall_with_opening': the opening ({door_width} x {door_height}) "
                        f"does not fit in the wall ({width} x {height})")
    base = (b.Align.CENTER, b.Align.CENTER, b.Align.MIN)
    wall = b.Box(thickness, width, height, align=base)
    return wall - b.Pos(0, door_offset, 0) * b.Box(2 * thickness, door_width, door_height, align=base)


@part("panel", width=L(default=1.2), depth=L(default=0.6), thickness=L(default=0.02),
      edge_radius=Param("length", 0.003, 0.0, open_low=False))
def panel(width, depth, thickness, edge_radius):
    """A flat panel, width along Y, depth along X, centred on the origin."""
    b = _b()
    if edge_radius >= thickness / 2:
        raise PartError("part 'panel', parameter 'edge_radius': must be below half the thickness")
    return _fillet_all(b.Box(depth, width, thickness), edge_radius)


@part("stand", width=L(default=0.8), depth=L(default=0.45), height=L(default=0.55),
      top=L(default=0.03), leg=L(default=0.04))
def stand(width, depth, height, top, leg):
    """A low table: top of `width` (Y) × `depth` (X) at z = height, four square legs down to z = 0."""
    b = _b()
    if top >= height or 2 * leg >= min(width, depth):
        raise PartError("part 'stand': the top or legs are too thick for its size")
    shape = b.Pos(0, 0, height) * b.Box(depth, width, top, align=(b.Align.CENTER, b.Align.CENTER, b.Align.MAX))
    for sx in (-1, 1):
        for sy in (-1, 1):
            shape += b.Pos(sx * (depth - leg) / 2, sy * (width - leg) / 2, 0) * b.Box(
                leg, leg, height - top, align=(b.Align.CENTER, b.Align.CENTER, b.Align.MIN))
    return shape


@part("mat", width=L(default=1.0), depth=L(default=0.6), thickness=L(default=0.01),
      corner_radius=Param("length", 0.05, 0.0, open_low=False))
def mat(width, depth, thickness, corner_radius):
    """A thin mat with rounded corners, base at z = 0, width along Y."""
    b = _b()
    r = min(corner_radius, 0.49 * min(width, depth))
    sketch = b.RectangleRounded(depth, width, r) if r > 0 else b.Rectangle(depth, width)
    return b.extrude(sketch, thickness)


@part("track", length=L(default=1.0), width=L(default=0.06), rail_height=L(default=0.02),
      thickness=L(default=0.005))
def track(length, width, rail_height, thickness):
    """A straight rolling track along X: a base plate with two side rails, base at z = 0, centred."""
    b = _b()
    if 2 * thickness >= width:
        raise PartError("part 'track': the rails are thicker than half the width")
    mn = (b.Align.CENTER, b.Align.CENTER, b.Align.MIN)
    shape = b.Box(length, width, thickness, align=mn)
    for s in (-1, 1):
        shape += b.Pos(0, s * (width - thickness) / 2, 0) * b.Box(length, thickness, thickness + rail_height, align=mn)
    return shape


@part("cylinder", radius=L(default=0.05), length=L(default=0.2))
def cylinder(radius, length):
    """A cylinder along Z of `length` and `radius`, centred on the origin (a post, a can, a wheel)."""
    return _b().Cylinder(radius, length)


@part("sphere", radius=L(default=0.01))
def sphere(radius):
    """A sphere (a ball, a bead) centred on the origin."""
    return _b().Sphere(radius)


@part("cup", radius=L(default=0.04), height=L(default=0.05), wall=L(default=0.004), base=L(default=0.004))
def cup(radius, height, wall, base):
    """An open cup (a catcher for a rolling ball): a cylinder of outer `radius`, hollow above a `base`, base at z = 0."""
    b = _b()
    if wall >= radius or base >= height:
        raise PartError("part 'cup': the wall or base is too thick for its size")
    mn = (b.Align.CENTER, b.Align.CENTER, b.Align.MIN)
    return b.Cylinder(radius, height, align=mn) - b.Pos(0, 0, base) * b.Cylinder(radius - wall, height, align=mn)


@part("spur_gear", teeth=Param("count", 20, 6, 400), module=L(default=0.002), thickness=L(default=0.005),
      bore=Param("length", 0.0, 0.0, open_low=False))
def spur_gear(teeth, module, thickness, bore):
    """A spur gear of `teeth` trapezoidal teeth, pitch radius module·teeth/2, centred, axis Z."""
    b = _b()
    rp = module * teeth / 2
    ra, rf = rp + module, rp - 1.25 * module
    if bore >= rf * 0.9:
        raise PartError(f"part 'spur_gear', parameter 'bore': {bore} does not fit inside the root radius {rf:.4f}")
    pitch = 2 * math.pi / teeth
    pts = []
    for i in range(teeth):                      # root, flank up, tip, flank down per tooth
        a = i * pitch
        for da, r in ((-0.25, rf), (-0.16, ra), (0.16, ra), (0.25, rf)):
            pts.append((r * math.cos(a + da * pitch), r * math.sin(a + da * pitch)))
    gear = b.extrude(b.Polygon(*pts, align=None), thickness / 2, both=True)
    if bore > 0:
        gear -= b.Cylinder(bore, 2 * thickness)
    return gear


# ---- character links -----------------------------------------------------

@part("capsule", length=L(), radius=L())
def capsule(length, radius):
    """A capsule along Z of total `length` (caps included), centred on the origin."""
    b = _b()
    if length <= 2 * radius:
        return b.Sphere(radius)
    half = length / 2 - radius
    return b.Cylinder(radius, 2 * half) + b.Pos(0, 0, half) * b.Sphere(radius) + b.Pos(0, 0, -half) * b.Sphere(radius)


@part("rounded_box", size_x=L(), size_y=L(), size_z=L(), radius=Param("length", 0.01, 0.0, open_low=False))
def rounded_box(size_x, size_y, size_z, radius):
    """A box with rounded edges, centred on the origin (pelvis, torso, hand, foot)."""
    b = _b()
    r = min(radius, 0.45 * min(size_x, size_y, size_z))
    return _fillet_all(b.Box(size_x, size_y, size_z), r)


@part("robot_head", radius=L(default=0.09), visor=L(default=0.02))
def robot_head(radius, visor):
    """A round head with a flat visor facing +X, centred on the origin."""
    b = _b()
    head = b.Sphere(radius)
    return head + b.Pos(radius * 0.7, 0, 0) * b.Box(visor, radius * 1.2, radius * 0.6)


@part("rounded_trunk", length=L(default=0.6), width=L(default=0.22), height=L(default=0.24))
def rounded_trunk(length, width, height):
    """An animal's trunk: a well-rounded block, long axis X, centred."""
    b = _b()
    return _fillet_all(b.Box(length, width, height), 0.4 * min(width, height))


@part("snouted_head", size=L(default=0.16), snout=L(default=0.1))
def snouted_head(size, snout):
    """An animal's head with a snout pointing +X, centred on the skull."""
    b = _b()
    skull = _fillet_all(b.Box(size, size * 0.9, size), 0.3 * size)
    nose = b.Pos(size / 2 + snout / 2 - 0.1 * size, 0, -0.15 * size) * _fillet_all(
        b.Box(snout + 0.2 * size, size * 0.5, size * 0.45), 0.1 * size)
    return skull + nose


@part("leg_segment", length=L(default=0.2), radius=L(default=0.03), taper=Param("length", 0.8, 0.0, 1.0))
def leg_segment(length, radius, taper):
    """A tapered leg segment hanging down -Z from its top at the origin, rounded ends."""
    b = _b()
    r2 = radius * taper
    body = b.Cone(radius, r2, length - radius - r2, align=(b.Align.CENTER, b.Align.CENTER, b.Align.MAX))
    body = b.Pos(0, 0, -radius) * body
    return body + b.Pos(0, 0, -radius) * b.Sphere(radius) + b.Pos(0, 0, -length + r2) * b.Sphere(r2)


def part_schema(name: str) -> dict:
    """The part's parameters as a JSON schema (numbers with their ranges, defaults, kinds), for a
    form or an agent; `resolve` stays the one that decides, and its message names the parameter."""
    s = spec(name)
    props, required = {}, []
    for pname, p in s.params.items():
        prop: dict[str, Any] = {"type": "integer" if p.kind == "count" else "number",
                                "description": {"length": "metres", "count": "a whole number",
                                                "angle": "radians"}.get(p.kind, p.kind)}
        if math.isfinite(p.low):
            prop["exclusiveMinimum" if (p.open_low and p.kind != "count") else "minimum"] = p.low
        if math.isfinite(p.high):
            prop["maximum"] = p.high
        if p.default is REQUIRED:
            required.append(pname)
        else:
            prop["default"] = p.default
        props[pname] = prop
    return {"type": "object", "title": s.doc, "properties": props, "required": required,
            "additionalProperties": False}


def catalogue() -> list[tuple[str, str, dict[str, Any]]]:
    """(name, what it is, parameter defaults) of every part, for people and the agent."""
    return [(s.name, s.doc, {k: (None if p.default is REQUIRED else p.default) for k, p in s.params.items()})
            for s in sorted(PARTS.values(), key=lambda s: s.name)]
