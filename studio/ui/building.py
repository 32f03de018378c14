"""Building the scene in the window, without Qt: the tool calls the Scene dock's
forms and clicks turn into, and the small geometry they need (a camera from
the viewport's view, a named frame from a click on a surface).

Every action is one call of the tool layer (`create_body`, `add_frame`,
`add_camera`, `frame_action`, `add_material`, `allow_overlap`) on the
window's stack, so it is undoable, audited and replays from the project's
calls like the agent's edits. Refusals come back as ValueError with the tool's
words, which name the field.
"""
from __future__ import annotations

import math

import numpy as np

from studio.scene.ir import Scene
from studio.scene.parts import PARTS, part_schema
from studio.scene.transforms import invert, matrix_to_quat
from studio.store.names import check_id
from studio.timeline.commands import CommandStack
from studio.tools.box import ToolBox
from studio.tools.errors import ToolRefused

SHAPES = ("box", "cylinder", "sphere", "capsule")
SIZE = {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "description": "metres"}
SHAPE_SCHEMAS = {       # the sizes each primitive takes, as create_body names them
    "box": {"type": "object", "properties": {"size": {"type": "array", "items": SIZE, "minItems": 3, "maxItems": 3,
                                                      "default": [0.2, 0.2, 0.2],
                                                      "description": "x, y, z extents, metres"}},
            "required": ["size"]},
    "cylinder": {"type": "object", "properties": {"radius": {**SIZE, "default": 0.05},
                                                  "length": {**SIZE, "default": 0.3, "description": "along Z"}},
                 "required": ["radius", "length"]},
    "sphere": {"type": "object", "properties": {"radius": {**SIZE, "default": 0.1}}, "required": ["radius"]},
    "capsule": {"type": "object", "properties": {"radius": {**SIZE, "default": 0.05},
                                                 "length": {**SIZE, "default": 0.3,
                                                            "description": "along Z, caps included"}},
                "required": ["radius", "length"]},
}
JOINT_UNITS = {"revolute": "rad", "prismatic": "m", "ball": "rad", "fixed": ""}


def call(project, stack: CommandStack, tool: str, args: dict):
    """One tool call as the person; ValueError with the tool's words if refused."""
    try:
        return ToolBox(project, stack, actor="person").call(tool, args)
    except ToolRefused as e:
        raise ValueError(str(e)) from None


def free_name(scene: Scene, base: str) -> str:
    """`base`, or `base_2`, `base_3`… if the scene already has a body, camera or frame so named."""
    taken = set(scene.body_names) | {c.name for c in scene.cameras} | {f.name for f in scene.frames}
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def part_names() -> list[str]:
    return sorted(PARTS)


def part_form_schema(part: str) -> dict:
    return part_schema(part)


def shape_defaults(shape: str) -> dict:
    """The sizes a primitive is shown with before a person types any."""
    return {k: p["default"] for k, p in SHAPE_SCHEMAS[shape]["properties"].items()}


def yaw_quat(degrees: float) -> list[float]:
    half = math.radians(degrees) / 2
    return [math.cos(half), 0.0, 0.0, math.sin(half)]


def body_arguments(name: str, *, shape: str = "box", sizes: dict | None = None, part: str = "",
                   params: dict | None = None, mesh: str = "", kind: str = "rigid", material: str = "",
                   mass: float | None = None, position=(0.0, 0.0, 0.0), yaw_deg: float = 0.0,
                   offset=(0.0, 0.0, 0.0), parent: str = "", joint: dict | None = None) -> dict:
    """The create_body arguments of the Body form. `shape` is a primitive, "part" or "mesh";
    with a parent the body hangs on `joint` (name, type, axis, origin, lower, upper) and its
    position is the joint's; without one, `position` and `yaw_deg` are its rest placement."""
    check_id(name, "body name")
    a: dict = {"name": name, "kind": kind}
    if shape in SHAPES:
        a["shape"] = shape
        a.update(sizes or shape_defaults(shape))
    elif shape == "part":
        a["part"], a["params"] = part, dict(params or {})
    elif shape == "mesh":
        a["mesh"] = mesh
    else:
        raise ValueError(f"shape: expected one of {', '.join(SHAPES)}, part or mesh, got {shape!r}")
    if any(abs(v) > 0 for v in offset):
        a["offset"] = [float(v) for v in offset]
    if material:
        a["material"] = material
    if mass is not None:
        a["mass"] = float(mass)
    if parent:
        if not joint or not joint.get("name"):
            raise ValueError("joint.name: a body joined to a parent needs its joint named")
        a["parent"] = parent
        a["joint"] = {k: v for k, v in joint.items() if v is not None}
    else:
        a["rest"] = [*(float(v) for v in position), *yaw_quat(yaw_deg)]
    return a


def body_arguments_of(scene: Scene, name: str) -> dict:
    """The create_body arguments that make `name` again as it is (to change one thing of it)."""
    b = scene.body(name)
    g = b.geometry
    a: dict = {"name": b.name, "kind": b.kind, "mass": b.mass}
    if g.source == "box":
        a["size"] = list(g.size)
    elif g.source == "cad":
        a["part"], a["params"], a["tolerance"] = g.part, dict(g.params), g.tolerance
    else:
        a["mesh"] = g.path
    if g.offset.position != [0.0, 0.0, 0.0]:
        a["offset"] = list(g.offset.position)
    if g.offset.rotation != [1.0, 0.0, 0.0, 0.0]:
        a["offset_rotation"] = list(g.offset.rotation)
    for k in ("material", "group"):
        if getattr(b, k):
            a[k] = getattr(b, k)
    if b.flags:
        a["flags"] = list(b.flags)
    j = scene.joint_of_child(name)
    if j is not None:
        a["parent"] = j.parent
        a["joint"] = {"name": j.name, "type": j.type, "axis": list(j.axis), "origin": list(j.origin.position),
                      "rotation": list(j.origin.rotation), "lower": j.lower, "upper": j.upper}
    elif name in scene.rest:
        a["rest"] = list(scene.rest[name])
    return a


def camera_from_view(name: str, position, focal_point, view_angle_deg: float,
                     resolution=(640, 360), sensor_mm: float = 36.0) -> dict:
    """add_camera arguments that see what the viewport sees: VTK's view angle is the vertical one,
    and the studio's sensor spans the image's larger side (Blender's sensor fit AUTO)."""
    w, h = int(resolution[0]), int(resolution[1])
    sensor_h = sensor_mm * (h / w if w >= h else 1.0)
    lens = sensor_h / 2 / math.tan(math.radians(view_angle_deg) / 2)
    return {"name": name, "position": [float(v) for v in position], "target": [float(v) for v in focal_point],
            "lens_mm": round(float(lens), 3), "sensor_mm": sensor_mm, "resolution": [w, h]}


def frame_on_surface(name: str, body: str, world: np.ndarray, point, normal) -> dict:
    """add_frame arguments for a frame where a click met a body's surface: at the point, its Z
    axis along the surface's outward normal, in the body's own frame."""
    inv = invert(np.asarray(world, float))
    p = inv[:3, :3] @ np.asarray(point, float) + inv[:3, 3]
    n = inv[:3, :3] @ np.asarray(normal, float)
    n = n / max(np.linalg.norm(n), 1e-12)
    x = np.cross([0.0, 1.0, 0.0], n) if abs(n[1]) < 0.9 else np.cross(n, [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    y = np.cross(n, x)
    q = matrix_to_quat(np.column_stack([x, y, n]))
    q = q if q[0] >= 0 else -q
    return {"name": name, "body": body, "position": [round(float(v), 6) for v in p],
            "rotation": [float(v) for v in q]}


def scene_rows(scene: Scene) -> list[tuple[str, list[tuple[str, str]]]]:
    """What the Scene dock's outline lists: (section, [(name, what it is)])."""
    def what(b) -> str:
        g = b.geometry
        shape = {"box": f"box {' × '.join(f'{v:g}' for v in g.size)} m", "mesh": f"mesh {g.path}"}.get(
            g.source, f"{g.part} " + ", ".join(f"{k}={v:g}" for k, v in g.params.items()))
        j = scene.joint_of_child(b.name)
        joint = (f" · {j.type} {j.name} on {j.parent} [{j.lower:+.2f}, {j.upper:+.2f}] "
                 f"{JOINT_UNITS[j.type]}") if j else ""
        return f"{b.kind} · {shape}{joint}" + (f" · {b.material}" if b.material else "")
    return [("Bodies", [(b.name, what(b)) for b in scene.bodies]),
            ("Named frames", [(f.name, f"on {f.body} at {', '.join(f'{v:.3f}' for v in f.local.position)}")
                              for f in scene.frames]),
            ("Cameras", [(c.name, f"at {', '.join(f'{v:.2f}' for v in c.position)} looking at "
                                  f"{', '.join(f'{v:.2f}' for v in c.target)}, {c.lens_mm:g} mm"
                                  + (f", following {c.follow}" if c.follow else "")) for c in scene.cameras]),
            ("Materials", [(m.name, "rgba " + ", ".join(f"{v:.2f}" for v in m.color)) for m in scene.materials]),
            ("Allowed overlaps", [(f"{o.a} × {o.b}", o.reason) for o in scene.allowed_overlaps])]
