"""The character tool: a robot from its URDF or a skinned character from a glTF binary (or, by
name, either from the character library) added to the scene as one undoable EditScene.

The description is read and refused before anything is written; its link meshes go to the
project's assets by content; pairs of its links that overlap at rest (construction) are
declared allowed overlaps, each named in the result. A file outside the project and the
library's folders is read only when a person asks (the agent names library characters or
files inside the project).
"""
from __future__ import annotations

from pathlib import Path

from studio.scene.characters import find_entry, import_robot, library
from studio.scene.meshes import scene_meshes
from studio.scene.pose import Pose
from studio.scene.urdf import UrdfError

from studio.tools.context import ToolContext, ToolOutcome
from studio.tools.errors import ToolRefused
from studio.tools.scene_edit import EditScene


def _source(box: ToolContext, a: dict) -> Path:
    if ("character" in a) == ("file" in a):
        raise ToolRefused("import_character: give either character (a library name) or file, not both or neither")
    if "character" in a:
        try:
            return find_entry(a["character"]).file
        except KeyError as e:
            raise ToolRefused(f"import_character.character: {e.args[0]}") from None
    f = Path(a["file"])
    full = (box.project.path / f).resolve() if not f.is_absolute() else f.resolve()
    allowed = [box.project.path.resolve()] + [e.file.parent.resolve() for e in library()]
    from studio.scene.characters import shipped_folder
    allowed.append(shipped_folder().resolve())
    if box.actor != "person" and not any(full.is_relative_to(d) for d in allowed):
        raise ToolRefused(f"import_character.file: {a['file']!r} is outside the project and the character "
                          "library; only a person imports files from elsewhere")
    if full.suffix.lower() not in (".urdf", ".glb"):
        raise ToolRefused(f"import_character.file: {a['file']!r}: expected a .urdf robot description or a "
                          "skinned character (.glb)")
    return full


def _profile(box: ToolContext, a: dict) -> dict:
    from studio.scene.rig_profile import ProfileError, check_profile, human_profile, read_profile
    p = a.get("profile")
    try:
        if p is None:
            return human_profile()
        if isinstance(p, dict):
            return check_profile(p, "import_character.profile")
        f = Path(p) if Path(p).is_absolute() else box.project.path / p
        if box.actor != "person" and not f.resolve().is_relative_to(box.project.path.resolve()):
            raise ToolRefused(f"import_character.profile: {p!r} is outside the project; only a person names "
                              "files from elsewhere")
        return read_profile(f)
    except ProfileError as e:
        raise ToolRefused(f"import_character: {e}") from None


def import_skinned_character(box: ToolContext, a: dict, file: Path) -> ToolOutcome:
    from studio.checks.glb import GlbError
    from studio.checks.glb_skin import read_skin
    from studio.scene.characters import import_skinned
    profile = _profile(box, a)
    try:
        data = read_skin(file)
        scene, parts = import_skinned(box.project, file, data, a["name"], profile, a.get("position", [0.0, 0.0, 0.0]),
                                      float(a.get("yaw", 0.0)))
    except GlbError as e:
        raise ToolRefused(f"import_character: {e}") from None
    except ValueError as e:
        raise ToolRefused(f"import_character: {file}: {e}") from None
    result = {"character": a["name"], "bones": len(data.bones), "bodies": len(parts.bodies),
              "joints": len(parts.joints), "movable_joints": sum(j["type"] != "fixed" for j in parts.joints),
              "legs": [leg["sole"] for leg in parts.legs], "hands": [h["frame"] for h in parts.hands],
              "vertices": len(data.vertices), "file": str(file), "skin": parts.skin_body, "notes": []}
    return box.run("import_character", a, EditScene(box.project, scene, f"import character {a['name']}",
                                                    box.actor), result)


def import_character(box: ToolContext, a: dict) -> ToolOutcome:
    file = _source(box, a)
    if file.suffix.lower() == ".glb":
        return import_skinned_character(box, a, file)
    if "profile" in a:
        raise ToolRefused("import_character.profile: a rig profile is for skinned characters (.glb), not a URDF")
    try:
        imp = import_robot(box.project, file, a["name"], a.get("geometry", "hull"),
                           a.get("position", [0.0, 0.0, 0.0]), float(a.get("yaw", 0.0)))
    except UrdfError as e:
        raise ToolRefused(f"import_character: {e}") from None
    from studio.checks.rest_overlaps import overlapping_pairs
    scene = imp.scene
    mine = {b.name for b in scene.bodies if b.group == a["name"]}
    pairs = overlapping_pairs(scene, scene_meshes(scene, box.project.path), Pose.rest(scene), mine)
    d = scene.to_dict()
    for x, y, depth in pairs:
        d["allowed_overlaps"].append({"a": x, "b": y, "reason": f"construction: overlap {depth * 1000:.1f} mm "
                                                               f"at rest in {file.name}"})
    from studio.scene.ir import Scene
    after = Scene.from_dict(d, where=str(file))
    result = {"character": a["name"], "bodies": len(mine), "joints": len(imp.parts.joints),
              "movable_joints": sum(j["type"] != "fixed" for j in imp.parts.joints),
              "legs": [leg["sole"] for leg in imp.parts.legs], "hands": [h["frame"] for h in imp.parts.hands],
              "allowed_overlaps": len(pairs), "digest": imp.digest[:16], "file": str(file),
              "meshes_from_cache": imp.cached, "notes": imp.parts.notes}
    return box.run("import_character", a, EditScene(box.project, after, f"import character {a['name']}",
                                                    box.actor), result)


TOOLS = {"import_character": import_character}
