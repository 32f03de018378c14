"""The character library, and importing a character into a project's scene.

The library lists what the installed packages hold (the robots of the
`example-robot-data` package: the Unitree G1 and Go2, the Franka Panda, a
human of rigid segments), the skinned `person` shipped in resources/characters
(made by the Blender worker: `studio characters make-human`), and every URDF
and .glb under the folders the user adds in the settings (`character_folders`). `import_robot` reads a URDF, joins each
link's meshes (`studio.scene.robots`), writes them to the project's assets by
content and returns the scene with the character added (or replaced, when
one of that name is there), for the tool layer to store as one edit; nothing
is written to the scene here, and a description that cannot be read is
refused before any file is written.

Converted link meshes are kept in the user's cache
(~/.cache/keypose-studio/characters, keyed by the description's digest and the
geometry choice), so a second import of the same description costs only the
copy into the project.
"""
from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from studio.scene.ir import Scene
from studio.scene.robots import LinkMesh, RobotParts, description_digest, link_meshes, robot_parts, without_world
from studio.scene.urdf import UrdfError, read_urdf

CACHE_VERSION = 1
PACKAGE_ROBOTS = "cmeel.prefix/share/example-robot-data/robots"
INSTALLED = {           # library name -> (description inside the package's robots folder, what it is)
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", "Unitree G1 humanoid, 29 revolute joints"),
    "go2": ("go2_description/urdf/go2.urdf", "Unitree Go2 quadruped, 12 revolute joints"),
    "panda": ("panda_description/urdf/panda.urdf", "Franka Emika Panda arm with its gripper"),
    "human": ("human_description/robots/human.urdf", "a human body as 36-joint rigid segments"),
}
MAX_USER_FILES = 500
SHIPPED = {"person": "a skinned human, 23 bones (made by `studio characters make-human`)"}


def shipped_folder() -> Path:
    """The characters shipped beside the code (resources/characters)."""
    return Path(__file__).resolve().parents[2] / "resources" / "characters"


@dataclass
class Entry:
    name: str
    file: Path
    about: str
    where: str            # "package example-robot-data" or the user's folder


def package_robots() -> Path | None:
    """The robots folder of the installed example-robot-data package, if it is installed."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        try:
            root = Path(distribution("example-robot-data").locate_file(PACKAGE_ROBOTS))
            if root.is_dir():
                return root
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    import sys
    import sysconfig
    for base in (sysconfig.get_paths().get("purelib", ""), getattr(sys, "_MEIPASS", ""), sys.prefix):
        if base and (Path(base) / PACKAGE_ROBOTS).is_dir():
            return Path(base) / PACKAGE_ROBOTS
    return None


def user_folders(settings: dict | None = None) -> list[Path]:
    if settings is None:
        from studio.store.settings import load_settings
        settings = load_settings()
    raw = settings.get("character_folders") or []
    if isinstance(raw, str):
        raw = [p for p in raw.split(os.pathsep) if p]
    return [Path(p).expanduser() for p in raw]


def library(settings: dict | None = None) -> list[Entry]:
    """Every character the studio can import without being told a file."""
    out = []
    robots = package_robots()
    if robots is not None:
        for name, (rel, about) in INSTALLED.items():
            if (robots / rel).is_file():
                out.append(Entry(name, robots / rel, about, "package example-robot-data"))
    for name, about in SHIPPED.items():
        f = shipped_folder() / f"{name}.glb"
        if f.is_file():
            out.append(Entry(name, f, about, "shipped with the studio"))
    taken = {e.name for e in out}
    for folder in user_folders(settings):
        if not folder.is_dir():
            continue
        files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".urdf", ".glb", ".gltf"))
        for f in files[:MAX_USER_FILES]:
            base = "".join(c if c.isalnum() or c in "_-" else "_" for c in f.stem)[:48] or "character"
            name, k = base, 2
            while name in taken:
                name, k = f"{base}-{k}", k + 1
            taken.add(name)
            out.append(Entry(name, f, f"{f.suffix[1:].upper()} file", str(folder)))
    return out


def find_entry(name: str, settings: dict | None = None) -> Entry:
    entries = library(settings)
    for e in entries:
        if e.name == name:
            return e
    known = ", ".join(e.name for e in entries) or "none (is example-robot-data installed?)"
    raise KeyError(f"no character {name!r} in the library; it holds {known}")


# ---- converted meshes, cached by content ---------------------------------------------------
def cache_dir() -> Path:
    root = os.environ.get("KEYPOSE_CACHE") or str(Path.home() / ".cache" / "keypose-studio")
    return Path(root) / "characters"


def _pack(meshes: dict[str, LinkMesh]) -> bytes:
    arrays, meta = {}, []
    for i, (link, lm) in enumerate(meshes.items()):
        for kind, m in (("c", lm.checks), ("v", lm.visual)):
            if m is not None:
                arrays[f"{kind}{i}v"] = np.asarray(m.vertices, float)
                arrays[f"{kind}{i}f"] = np.asarray(m.faces, np.int32)
        meta.append([link, list(lm.rgba) if lm.rgba else None, lm.material])
    import json
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
    return buf.getvalue()


def _unpack(data: bytes) -> dict[str, LinkMesh]:
    import json
    out = {}
    with np.load(io.BytesIO(data)) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        for i, (link, rgba, material) in enumerate(meta):
            got = []
            for kind in ("c", "v"):
                got.append(trimesh.Trimesh(z[f"{kind}{i}v"], z[f"{kind}{i}f"].astype(np.int64), process=False)
                           if f"{kind}{i}v" in z.files else None)
            out[link] = LinkMesh(got[0], got[1], tuple(rgba) if rgba else None, material)
    return out


def cached_link_meshes(desc, digest: str, geometry: str) -> tuple[dict[str, LinkMesh], bool]:
    """The description's link meshes, from the cache when it has them; and whether it did."""
    path = cache_dir() / f"{hashlib.sha256(f'{CACHE_VERSION}:{digest}:{geometry}'.encode()).hexdigest()[:32]}.npz"
    if path.is_file():
        try:
            return _unpack(path.read_bytes()), True
        except (OSError, ValueError, KeyError):
            pass                             # damaged: convert again
    meshes = link_meshes(desc, geometry)
    try:
        from studio.store.project import write_atomic
        write_atomic(path, _pack(meshes))
    except OSError:
        pass                                 # a read-only cache only costs time
    return meshes, False


# ---- import -----------------------------------------------------------------------------------
@dataclass
class Imported:
    scene: Scene
    parts: RobotParts
    digest: str
    cached: bool
    written: int


def _stl(mesh: trimesh.Trimesh) -> bytes:
    return trimesh.exchange.stl.export_stl(mesh)


def import_robot(project, file: str | Path, name: str, geometry: str = "hull",
                 position=(0.0, 0.0, 0.0), yaw: float = 0.0) -> Imported:
    """The project's scene with the URDF's character added as `name` (replacing one of that name)."""
    from studio.scene.io import load_scene
    file = Path(file)
    desc = without_world(read_urdf(file))
    digest = description_digest(desc)
    meshes, cached = cached_link_meshes(desc, digest, geometry)
    parts = robot_parts(desc, name, geometry, position, yaw, meshes)
    scene = load_scene(project)
    d = scene.to_dict()
    mine = {b.name for b in scene.bodies if b.group == name}
    clash = [b for b in scene.bodies if b.name not in mine and b.name in {x["name"] for x in parts.bodies}]
    if clash:
        raise UrdfError(f"{file}: the scene already has a body named {clash[0].name!r} outside character {name!r}")
    written = 0
    for body in parts.bodies:
        checks, visual = parts.meshes[body["name"]]
        for key, m in (("geometry", checks), ("visual", visual)):
            if m is None:
                if key == "geometry":
                    body["geometry"] = {"source": "none"}
                continue
            data = _stl(m)
            digest_m = hashlib.sha256(data).hexdigest()
            written += not project.asset_path(digest_m, "stl").exists()
            asset = project.asset_path(project.put_asset(data, "stl"))
            body[key] = {"source": "mesh", "path": asset.relative_to(project.path).as_posix()}
        if body.get("visual") == body.get("geometry"):
            body.pop("visual", None)         # one geometry, checked and shown
    d["bodies"] = [b for b in d["bodies"] if b["name"] not in mine] + parts.bodies
    d["joints"] = [j for j in d["joints"] if j["child"] not in mine and j["parent"] not in mine] + parts.joints
    d["frames"] = [f for f in d["frames"] if f["body"] not in mine] + parts.frames
    have = {m["name"] for m in parts.materials}
    d["materials"] = [m for m in d["materials"] if m["name"] not in have] + parts.materials
    d["allowed_overlaps"] = [o for o in d["allowed_overlaps"] if o["a"] not in mine and o["b"] not in mine]
    d["rest"] = {k: v for k, v in d["rest"].items() if k not in mine}
    d["rest"][parts.root] = parts.rest
    d["characters"] = [c for c in d.get("characters", []) if c["name"] != name] + [{
        "name": name, "source": "urdf", "file": file.name, "digest": digest, "root": parts.root,
        "geometry": geometry, "legs": parts.legs, "hands": parts.hands}]
    if not scene.bodies and scene.name == "untitled":
        d["name"] = project.name
    return Imported(Scene.from_dict(d, where=str(file)), parts, digest, cached, written)


def import_skinned(project, file: str | Path, data, name: str, profile: dict, position=(0.0, 0.0, 0.0),
                   yaw: float = 0.0) -> tuple[Scene, "object"]:
    """The project's scene with the skinned character (data: the file's skin, read by the caller with
    the verifiers' glTF reader) added as `name`, replacing one of that name. Returns (scene, parts)."""
    import json
    from studio.scene.io import load_scene
    from studio.scene.skinned import skinned_parts
    file = Path(file)
    parts = skinned_parts(data, name, profile, position, yaw)
    scene = load_scene(project)
    d = scene.to_dict()
    mine = {b.name for b in scene.bodies if b.group == name}
    clash = [b for b in scene.bodies if b.name not in mine and b.name in {x["name"] for x in parts.bodies}]
    if clash:
        raise ValueError(f"{file}: the scene already has a body named {clash[0].name!r} outside character {name!r}")
    skin_asset = project.asset_path(project.put_asset(parts.skin.to_bytes(), "npz"))
    skin_rel = skin_asset.relative_to(project.path).as_posix()
    for body in parts.bodies:
        if body["geometry"] is not None:
            continue
        if body["name"] == parts.skin_body:
            body["geometry"] = {"source": "skin", "path": skin_rel}
            body["material"] = f"{name}-skin"
        else:
            asset = project.asset_path(project.put_asset(_stl(parts.hulls[body["name"]]), "stl"))
            body["geometry"] = {"source": "mesh", "path": asset.relative_to(project.path).as_posix()}
    d["bodies"] = [b for b in d["bodies"] if b["name"] not in mine] + parts.bodies
    d["joints"] = [j for j in d["joints"] if j["child"] not in mine and j["parent"] not in mine] + parts.joints
    d["frames"] = [f for f in d["frames"] if f["body"] not in mine] + parts.frames
    d["materials"] = [m for m in d["materials"] if m["name"] != f"{name}-skin"] + [
        {"name": f"{name}-skin", "color": [0.78, 0.64, 0.55, 1.0], "roughness": 0.6, "metallic": 0.0}]
    d["allowed_overlaps"] = [o for o in d["allowed_overlaps"] if o["a"] not in mine and o["b"] not in mine]
    d["rest"] = {k: v for k, v in d["rest"].items() if k not in mine}
    d["rest"][parts.root] = parts.rest
    h = hashlib.sha256(file.read_bytes())
    h.update(json.dumps(profile, sort_keys=True).encode())
    d["characters"] = [c for c in d.get("characters", []) if c["name"] != name] + [{
        "name": name, "source": "gltf", "file": file.name, "digest": h.hexdigest(), "root": parts.root,
        "geometry": "skin", "legs": parts.legs, "hands": parts.hands,
        "skin": {"body": parts.skin_body, "path": skin_rel, "profile": profile}}]
    if not scene.bodies and scene.name == "untitled":
        d["name"] = project.name
    return Scene.from_dict(d, where=str(file)), parts
