"""Build the Blender scene from the Scene IR: meshes, materials, the joint
hierarchy, cameras, lights and the frame range.

Hierarchy: a root body is a top-level mesh object. Each joint is an empty
named `joint:<name>`, parented to its parent body with the joint origin as its
local transform; the child body is parented to that empty and carries the
joint's motion as its own local transform (revolute: axis-angle rotation,
prismatic: location along the axis, ball: quaternion). The joint's type,
axis and limits are kept as custom properties on the empty, so an animator
sees the IR's joints in the outliner. Parent-inverse matrices stay identity.
"""
from __future__ import annotations

import os

import bpy
import numpy as np
from mathutils import Matrix, Quaternion, Vector

from outputs import SpecError


def reset() -> None:
    """An empty file, as if Blender had just started with factory settings."""
    bpy.ops.wm.read_factory_settings(use_empty=True)


def load_mesh_arrays(path: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    if not os.path.isfile(path):
        raise SpecError(f"{where}: mesh file {path} is missing")
    try:
        with np.load(path) as z:
            v, f = np.asarray(z["vertices"], np.float64), np.asarray(z["faces"], np.int64)
    except Exception as e:   # a truncated or foreign file
        raise SpecError(f"{where}: mesh file {path} is not a vertices/faces .npz ({e})") from None
    if v.ndim != 2 or v.shape[1] != 3 or f.ndim != 2 or f.shape[1] != 3:
        raise SpecError(f"{where}: mesh file {path} needs vertices (N,3) and faces (M,3)")
    if len(f) and (f.min() < 0 or f.max() >= len(v)):
        raise SpecError(f"{where}: mesh file {path} has faces pointing past its {len(v)} vertices")
    return v, f


def make_mesh(name: str, vertices: np.ndarray, faces: np.ndarray) -> bpy.types.Mesh:
    me = bpy.data.meshes.new(name)
    me.vertices.add(len(vertices))
    me.vertices.foreach_set("co", vertices.astype(np.float32).ravel())
    me.loops.add(faces.size)
    me.loops.foreach_set("vertex_index", faces.astype(np.int32).ravel())
    me.polygons.add(len(faces))
    me.polygons.foreach_set("loop_start", np.arange(0, faces.size, 3, dtype=np.int32))
    me.update()
    me.validate()
    return me


def make_material(m: dict) -> bpy.types.Material:
    mat = bpy.data.materials.new(m["name"])
    color = tuple(m.get("color", [0.8, 0.8, 0.8, 1.0]))
    mat.diffuse_color = color            # what Workbench shows
    mat.roughness = float(m.get("roughness", 0.5))
    mat.metallic = float(m.get("metallic", 0.0))
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes.get("Principled BSDF")
    if bsdf is not None:                  # what Cycles shows
        bsdf.inputs["Base Color"].default_value = color
        bsdf.inputs["Roughness"].default_value = mat.roughness
        bsdf.inputs["Metallic"].default_value = mat.metallic
    return mat


def matrix_7(t) -> Matrix:
    """[x y z w qx qy qz] as a 4x4 Blender matrix."""
    return Matrix.LocRotScale(Vector(t[:3]), Quaternion(t[3:7]), None)


def look_at(position, target) -> Quaternion:
    """A camera at `position` looking at `target` with +Z up (cameras look down -Z)."""
    direction = Vector(target) - Vector(position)
    return direction.to_track_quat("-Z", "Y")


def place_camera(ob, position, target) -> None:
    """A camera object at `position` looking at `target` (no keys)."""
    ob.location = Vector(position)
    ob.rotation_mode = "QUATERNION"
    ob.rotation_quaternion = look_at(position, target)


def build_scene(ir: dict, mesh_files: dict[str, str]) -> dict[str, bpy.types.Object]:
    """Create every body, joint, camera and light of the IR; return objects by name."""
    scene = bpy.context.scene
    col = scene.collection
    materials = {m["name"]: make_material(m) for m in ir.get("materials", [])}
    objects: dict[str, bpy.types.Object] = {}
    for b in ir.get("bodies", []):
        where = f"spec meshes.{b['name']}"
        if b["name"] not in mesh_files:
            raise SpecError(f"{where}: no mesh file given for body {b['name']!r}")
        v, f = load_mesh_arrays(mesh_files[b["name"]], where)
        ob = bpy.data.objects.new(b["name"], make_mesh(b["name"], v, f))
        if b.get("material"):
            ob.data.materials.append(materials[b["material"]])
        ob["keypose_kind"] = b.get("kind", "rigid")
        ob.rotation_mode = "QUATERNION"
        col.objects.link(ob)
        objects[b["name"]] = ob
    for j in ir.get("joints", []):
        empty = bpy.data.objects.new(f"joint:{j['name']}", None)
        empty.empty_display_type = "ARROWS"
        empty.empty_display_size = 0.05
        empty["keypose_joint"] = j["name"]
        empty["type"] = j["type"]
        empty["axis"] = list(j["axis"])
        empty["lower"], empty["upper"] = float(j["lower"]), float(j["upper"])
        col.objects.link(empty)
        empty.parent = objects[j["parent"]]
        empty.matrix_parent_inverse = Matrix.Identity(4)
        o = j["origin"]
        empty.matrix_basis = matrix_7([*o["position"], *o["rotation"]])
        child = objects[j["child"]]
        child.parent = empty
        child.matrix_parent_inverse = Matrix.Identity(4)
        child.rotation_mode = "AXIS_ANGLE" if j["type"] == "revolute" else "QUATERNION"
        objects[empty.name] = empty
    rest = ir.get("rest", {})
    for name, t in rest.items():
        objects[name].matrix_basis = matrix_7(t)
    for c in ir.get("cameras", []):
        cam = bpy.data.cameras.new(c["name"])
        cam.lens = float(c["lens_mm"])
        cam.sensor_fit = "HORIZONTAL"
        cam.sensor_width = float(c["sensor_mm"])
        cam.clip_start, cam.clip_end = 0.01, 500.0
        ob = bpy.data.objects.new(c["name"], cam)
        place_camera(ob, c["position"], c["target"])
        ob["resolution"] = list(c["resolution"])
        col.objects.link(ob)
        objects[c["name"]] = ob
    add_lights(col)
    return objects


def add_lights(col) -> None:
    """A key sun and a soft world, enough for Workbench and Cycles alike."""
    sun = bpy.data.lights.new("Key", "SUN")
    sun.energy = 3.0
    ob = bpy.data.objects.new("Key", sun)
    ob.rotation_euler = (0.7, 0.2, 0.6)
    col.objects.link(ob)
    world = bpy.data.worlds.new("World")
    world.color = (0.05, 0.05, 0.06)
    bpy.context.scene.world = world


def set_threads(n: int) -> None:
    r = bpy.context.scene.render
    r.threads_mode = "FIXED"
    r.threads = max(1, n)


def add_studio_lights() -> None:
    """Fill and rim beside the key sun, and a world bright enough to lift the shadows."""
    col = bpy.context.scene.collection
    for name, energy, rotation in (("Fill", 1.0, (0.9, 0.0, -1.9)), ("Rim", 2.0, (-0.9, 0.0, 2.6))):
        light = bpy.data.lights.new(name, "SUN")
        light.energy = energy
        ob = bpy.data.objects.new(name, light)
        ob.rotation_euler = rotation
        col.objects.link(ob)
    world = bpy.context.scene.world
    if world is not None:
        world.color = (0.18, 0.19, 0.21)


def set_frame_range(fps: int, frame_start: int, frame_end: int) -> None:
    scene = bpy.context.scene
    scene.render.fps = int(fps)
    scene.render.fps_base = 1.0
    scene.frame_start, scene.frame_end = int(frame_start), int(frame_end)
    scene.frame_current = int(frame_start)


def set_shots(shots: list[dict], objects: dict) -> None:
    """One timeline marker per shot, named for it and bound to its camera (as Blender's Bind
    Camera to Markers does): the film cuts to each shot's camera at its first frame."""
    scene = bpy.context.scene
    for s in shots:
        cam = objects.get(s["camera"])
        if cam is None or cam.type != "CAMERA":
            raise SpecError(f"spec shots: no camera named {s['camera']!r}")
        marker = scene.timeline_markers.new(s.get("name") or s["camera"], frame=int(s["frame"]))
        marker.camera = cam
    if shots:
        scene.camera = objects[shots[0]["camera"]]


LOOKS = ("flat", "studio")


def set_render(engine: str, resolution, samples: int = 16, antialias: str = "8", look: str = "flat") -> None:
    """Engine, size and look: "flat" is plain studio-lit colour; "studio" adds, in Workbench,
    shadows from the key light and cavity (edges and creases picked out), and in Cycles a
    fill and a rim light beside the key, a brighter world and denoising."""
    if look not in LOOKS:
        raise SpecError(f"spec look: expected one of {LOOKS}, got {look!r}")
    scene = bpy.context.scene
    r = scene.render
    r.engine = engine
    r.resolution_x, r.resolution_y = int(resolution[0]), int(resolution[1])
    r.resolution_percentage = 100
    r.film_transparent = False
    scene.view_settings.view_transform = "Standard"
    if engine == "BLENDER_WORKBENCH":
        shading = scene.display.shading
        shading.light = "STUDIO"
        shading.color_type = "MATERIAL"
        shading.show_shadows = look == "studio"
        shading.show_cavity = look == "studio"
        if look == "studio":
            shading.shadow_intensity = 0.45
            shading.cavity_type = "WORLD"          # world-space cavity: no extra screen pass per sample
            scene.display.light_direction = (0.45, 0.35, 0.82)
        if antialias not in ("OFF", "FXAA", "5", "8", "11", "16", "32"):
            raise SpecError(f"spec antialias: expected OFF, FXAA or a sample count, got {antialias!r}")
        scene.display.render_aa = antialias   # on a software GL, 8 samples cost 8 renders a frame
    elif engine == "CYCLES":
        scene.cycles.device = "CPU"
        scene.cycles.samples = int(samples)
        scene.cycles.use_denoising = look == "studio"
        if look == "studio":
            add_studio_lights()
    else:
        raise SpecError(f"spec engine: expected BLENDER_WORKBENCH or CYCLES, got {engine!r}")
