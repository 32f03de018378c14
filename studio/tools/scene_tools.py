"""Scene tools: bodies (a primitive shape, CAD part, box, mesh file, or sandboxed build123d code),
named frames, cameras and allowed overlaps; each replaces the whole scene as
one undoable EditScene."""
from __future__ import annotations

from dataclasses import asdict

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Body, Geometry, Joint, Scene, Transform

from studio.tools.context import ToolContext, ToolOutcome
from studio.tools.errors import ToolRefused
from studio.sandbox.errors import SandboxRefused
from studio.sandbox.run import SandboxRun, new_job_dir, run_code
from studio.tools.scene_edit import EditScene


def _edit(box: ToolContext, name: str, a: dict, d: dict, label: str, result: dict) -> ToolOutcome:
    after = Scene.from_dict(d, where=name)
    return box.run(name, a, EditScene(box.project, after, label, box.actor), result)


PRIMITIVE_SIZES = {"cylinder": ("radius", "length"), "sphere": ("radius",), "capsule": ("radius", "length")}


def primitive_part(a: dict) -> tuple[str, dict] | None:
    """The CAD part a round primitive is made as (cylinder, sphere, capsule), with its sizes; None for
    a box or no shape. Sizes the shape does not take, or leaves out, are refused by name."""
    shape = a.get("shape", "box")
    wants = PRIMITIVE_SIZES.get(shape, ())
    for k in ("radius", "length"):
        if k in a and k not in wants:
            raise ToolRefused(f"create_body.{k}: a {shape} takes "
                              f"{' and '.join(wants) if wants else 'size [x, y, z]'}, not {k}")
        if k in wants and k not in a:
            raise ToolRefused(f"create_body.{k}: a {shape} needs its {k} (metres)")
    if "size" in a and shape != "box":
        raise ToolRefused(f"create_body.size: a {shape} takes {' and '.join(wants)}, not size")
    return (shape, {k: float(a[k]) for k in wants}) if wants else None


def create_body(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    sources = [k for k in ("shape", "part", "mesh") if k in a]
    if "size" in a and a.get("shape") != "box":        # a box's size goes with its shape or alone
        sources.append("size")
    if len(sources) > 1:
        raise ToolRefused(f"create_body: give one of shape, part, size or mesh, not {' and '.join(sources)}")
    offset = Transform(list(a.get("offset", [0, 0, 0])), list(a.get("offset_rotation", [1, 0, 0, 0])))
    round_part = primitive_part(a)
    if round_part is not None:
        geom = Geometry(source="cad", part=round_part[0], params=round_part[1], offset=offset,
                        tolerance=float(a.get("tolerance", Geometry.tolerance)))
    elif "part" in a:
        from studio.scene.parts import PartError, resolve
        try:
            resolve(a["part"], a.get("params", {}))       # checked; stored as said, defaults filled at build
        except PartError as e:
            raise ToolRefused(f"create_body: {e}") from None
        geom = Geometry(source="cad", part=a["part"], params=dict(a.get("params", {})), offset=offset,
                        tolerance=float(a.get("tolerance", Geometry.tolerance)))
    elif "mesh" in a:
        box.project_file(a["mesh"])
        geom = Geometry(source="mesh", path=a["mesh"], offset=offset)
    else:
        geom = Geometry(source="box", size=list(a.get("size", [0.1, 0.1, 0.1])), offset=offset)
    body = Body(a["name"], kind=a.get("kind", "rigid"), geometry=geom, material=a.get("material", ""),
                group=a.get("group", ""), flags=list(a.get("flags", [])), mass=float(a.get("mass", 1.0)))
    if geom.source == "cad":
        _check_solid(box, body)
    return _put_body(box, scene, body, a, "create_body", f"create body {a['name']}")


def _check_solid(box: ToolContext, body: Body) -> None:
    """A CAD part is built now (into the project's mesh cache, which the viewport and the checks
    then read), so parameters that give no solid are refused here, not found when it is drawn."""
    from studio.scene.meshes import MeshError, build_body_mesh
    from studio.scene.parts import PartError
    try:
        build_body_mesh(body, box.project.path)
    except (PartError, MeshError) as e:
        raise ToolRefused(f"create_body: {e}") from None
    except Exception as e:          # the CAD kernel's own failure: said in one line
        raise ToolRefused(f"create_body: part {body.geometry.part!r} with {body.geometry.params}: "
                          f"could not be built ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                          ) from None


def _put_body(box: ToolContext, scene: Scene, body: Body, a: dict, name: str, label: str) -> ToolOutcome:
    d = scene.to_dict()
    existing = [i for i, b in enumerate(scene.bodies) if b.name == body.name]
    if existing:
        d["bodies"][existing[0]] = asdict(body)
    else:
        d["bodies"].append(asdict(body))
    if "parent" in a:
        if "joint" not in a:
            raise ToolRefused(f"{name}: a parent needs a joint (name and type)")
        jd = a["joint"]
        joint = Joint(jd["name"], jd["type"], a["parent"], body.name,
                      Transform(list(jd.get("origin", [0, 0, 0])), list(jd.get("rotation", [1, 0, 0, 0]))), list(jd.get("axis", [0, 0, 1])),
                      float(jd.get("lower", -np.pi)), float(jd.get("upper", np.pi)))
        d["joints"] = [j for j in d["joints"] if j["child"] != body.name and j["name"] != joint.name]
        d["joints"].append(asdict(joint))
        d["rest"].pop(body.name, None)
    elif "rest" in a:
        d["rest"][body.name] = list(a["rest"])
    return _edit(box, name, a, d, label, {"body": body.name, "bodies": len(d["bodies"])})


def run_part_code(project, code: str, time_limit: float) -> SandboxRun:
    """The agent's CAD code run in a new job folder under the project's jobs/, behind the sandbox."""
    return run_code(code, new_job_dir(project.path, "part"), "python", time_limit=time_limit)


def build_part_code(box: ToolContext, a: dict) -> ToolOutcome:
    try:
        return _build_part_code(box, a)
    except SandboxRefused as e:       # the sandbox's refusal (it cannot run here, a bad path) is the tool's
        raise ToolRefused(str(e)) from None


def _build_part_code(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    run = run_part_code(box.project, a["code"], min(float(a.get("time_limit", 60)), box.code_time_limit))
    if not run.ok:
        raise ToolRefused(f"build_part_code: {run.failure()} (job folder {run.job_dir.name})")
    if "part.stl" not in run.files:
        raise ToolRefused(f"build_part_code: the code ran but wrote no part.stl in its job folder "
                          f"(it wrote {run.files or 'nothing'})")
    import io

    import trimesh
    stl = run.read_bytes("part.stl")
    try:
        mesh = trimesh.load(io.BytesIO(stl), file_type="stl", force="mesh")
    except Exception as e:
        raise ToolRefused(f"build_part_code: part.stl is not a readable mesh ({e})") from None
    if len(mesh.faces) == 0 or not np.all(np.isfinite(mesh.vertices)) or np.abs(mesh.vertices).max() > 100:
        raise ToolRefused("build_part_code: part.stl is empty or larger than 100 m; expected metres")
    name = box.project.put_asset(stl, "stl")
    rel = str(box.project.asset_path(name).relative_to(box.project.path))
    try:
        body = scene.body(a["body"])
        body = Body(body.name, body.kind, Geometry(source="mesh", path=rel), body.material, body.group,
                    body.flags, body.mass)
    except KeyError:
        body = Body(a["body"], geometry=Geometry(source="mesh", path=rel))
    return _put_body(box, scene, body, {}, "build_part_code", f"build part {a['body']}")


def _replace(items: list[dict], key, item: dict) -> list[dict]:
    return [x for x in items if key(x) != key(item)] + [item]


def add_frame(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    scene.body(a["body"])
    d = scene.to_dict()
    frame = {"name": a["name"], "body": a["body"],
             "local": {"position": list(a.get("position", [0, 0, 0])), "rotation": list(a.get("rotation", [1, 0, 0, 0]))}}
    d["frames"] = _replace(d["frames"], lambda f: f["name"], frame)
    return _edit(box, "add_frame", a, d, f"frame {a['name']} on {a['body']}", {"frame": a["name"]})


def camera_entry(a: dict) -> dict:
    """A camera as the scene stores it, from add_camera's arguments (defaults filled)."""
    return {"name": a["name"], "position": list(a["position"]), "target": list(a["target"]),
            "lens_mm": float(a.get("lens_mm", 35.0)), "sensor_mm": float(a.get("sensor_mm", 36.0)),
            "resolution": list(a.get("resolution", [640, 360]))}


def put_camera(box: ToolContext, name: str, a: dict, scene: Scene, cam: dict, label: str,
               result: dict) -> ToolOutcome:
    d = scene.to_dict()
    d["cameras"] = _replace(d["cameras"], lambda c: c["name"], cam)
    return _edit(box, name, a, d, label, result)


def add_camera(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    cam = camera_entry(a)
    if np.allclose(cam["position"], cam["target"]):
        raise ToolRefused("add_camera.target: the camera stands on its target; it would look nowhere")
    if a.get("follow"):
        if a["follow"] not in scene.body_names:
            raise ToolRefused(f"add_camera.follow: no body named {a['follow']!r} to follow")
        cam["follow"] = a["follow"]
    return put_camera(box, "add_camera", a, scene, cam, f"camera {a['name']}", {"camera": a["name"]})


def name_scene(box: ToolContext, a: dict) -> ToolOutcome:
    d = load_scene(box.project).to_dict()
    d["name"] = a["name"]
    return _edit(box, "name_scene", a, d, f"name the scene {a['name']}", {"scene": a["name"]})


def add_material(box: ToolContext, a: dict) -> ToolOutcome:
    d = load_scene(box.project).to_dict()
    mat = {"name": a["name"], "color": list(a["color"]), "roughness": float(a.get("roughness", 0.5)),
           "metallic": float(a.get("metallic", 0.0))}
    d["materials"] = _replace(d["materials"], lambda m: m["name"], mat)
    return _edit(box, "add_material", a, d, f"material {a['name']}", {"material": a["name"]})


def allow_overlap(box: ToolContext, a: dict) -> ToolOutcome:
    scene = load_scene(box.project)
    names = {b.name for b in scene.bodies} | {b.group for b in scene.bodies if b.group}
    for k in ("a", "b"):
        if a[k] not in names:
            raise ToolRefused(f"allow_overlap.{k}: {a[k]!r} is not a body or group of the scene")
    d = scene.to_dict()
    pair = {"a": a["a"], "b": a["b"], "reason": a.get("reason", "construction")}
    d["allowed_overlaps"] = _replace(d["allowed_overlaps"], lambda o: frozenset((o["a"], o["b"])), pair)
    return _edit(box, "allow_overlap", a, d, f"allow {a['a']} to overlap {a['b']}", {"pair": [a["a"], a["b"]]})


TOOLS = {"create_body": create_body, "build_part_code": build_part_code, "add_frame": add_frame,
         "add_camera": add_camera, "allow_overlap": allow_overlap, "name_scene": name_scene,
         "add_material": add_material}
