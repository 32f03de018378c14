"""The agent's hands: each tool call checked, then run as one undoable command.

`ToolBox.call(name, raw_arguments)` parses the arguments against the tool's
schema, checks them against the project (names exist, joint values inside
their limits, paths inside the project), builds the edit as a Command and runs
it on the shared CommandStack, so a person can undo it like any other edit.
A refused call raises ToolRefused and changes nothing; its message is what the
agent reads as the tool result.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.scene.io import load_scene
from studio.scene.ir import Body, Geometry, IRError, Joint, Scene, Transform
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.scene.transforms import compose, from_7, to_7
from studio.store.project import Project
from studio.timeline.commands import Command, CommandStack, SetState
from studio.timeline.storyboard import State, get_state

from .errors import ToolRefused
from .sandbox import new_job_dir, run_code
from .scene_edit import EditScene
from .tool_schemas import parse_arguments

MESH_TYPES = (".stl", ".obj", ".glb", ".gltf", ".ply")


@dataclass
class ToolOutcome:
    name: str
    arguments: dict
    result: dict
    command: Command | None = None

    def as_text(self) -> str:
        return json.dumps({"ok": True, **self.result}, sort_keys=True)


class ToolBox:
    """The tools of one project, issuing their edits on `stack`."""

    def __init__(self, project: Project, stack: CommandStack | None = None, actor: str = "agent",
                 code_time_limit: float = 60.0):
        self.project, self.stack, self.actor = project, stack or CommandStack(), actor
        self.code_time_limit = code_time_limit

    def call(self, name: str, raw_arguments: str) -> ToolOutcome:
        args = parse_arguments(name, raw_arguments)
        try:
            return getattr(self, f"_{name}")(args)
        except ToolRefused:
            raise
        except (IRError, KeyError, ValueError) as e:   # the studio's own refusals, e.g. the gate's
            msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            raise ToolRefused(f"{name}: {msg}") from None
        except Exception as e:   # a tool that breaks must not take the agent's session down
            raise ToolRefused(f"{name} failed: {type(e).__name__}: {e}") from None

    # ---- helpers --------------------------------------------------------
    def _run(self, name: str, args: dict, cmd: Command, result: dict) -> ToolOutcome:
        self.stack.run(cmd)
        return ToolOutcome(name, args, {"done": cmd.label, **result}, cmd)

    def _state(self, state_id: str) -> State:
        st = get_state(self.project, state_id)
        if st is None:
            raise ToolRefused(f"there is no state {state_id!r}; create it with set_state first")
        return st

    def _project_file(self, rel: str) -> Path:
        p = Path(rel)
        root = self.project.path.resolve()
        full = (root / p).resolve()
        if p.is_absolute() or not full.is_relative_to(root):
            raise ToolRefused(f"path {rel!r}: names a file outside the project folder; refused")
        if full.suffix.lower() not in MESH_TYPES:
            raise ToolRefused(f"path {rel!r}: expected a mesh file ({', '.join(MESH_TYPES)})")
        if not full.is_file():
            raise ToolRefused(f"path {rel!r}: no such file in the project")
        return full

    @staticmethod
    def _check_joint(scene: Scene, name: str, value: Any, where: str) -> None:
        j = scene.joint(name)
        if j.type == "fixed":
            raise ToolRefused(f"{where}: joint {name!r} is fixed and has no value")
        if j.type == "ball":
            if not isinstance(value, list) or float(np.linalg.norm(value)) > j.upper + 1e-9:
                raise ToolRefused(f"{where}: ball joint {name!r} takes a rotation vector of length "
                                  f"at most {j.upper:.3f}, got {value!r}")
        elif isinstance(value, list) or not j.lower - 1e-9 <= float(value) <= j.upper + 1e-9:
            raise ToolRefused(f"{where}: {value!r} is outside the limits of joint {name!r} "
                              f"[{j.lower:.4f}, {j.upper:.4f}]")

    # ---- scene tools ----------------------------------------------------
    def _create_body(self, a: dict) -> ToolOutcome:
        scene = load_scene(self.project)
        sources = [k for k in ("part", "size", "mesh") if k in a]
        if len(sources) > 1:
            raise ToolRefused(f"create_body: give one of part, size or mesh, not {' and '.join(sources)}")
        if "part" in a:
            from studio.scene.parts import PartError, resolve
            try:
                params = resolve(a["part"], a.get("params", {}))
            except PartError as e:
                raise ToolRefused(f"create_body: {e}") from None
            geom = Geometry(source="cad", part=a["part"], params=params)
        elif "mesh" in a:
            self._project_file(a["mesh"])
            geom = Geometry(source="mesh", path=a["mesh"])
        else:
            geom = Geometry(source="box", size=list(a.get("size", [0.1, 0.1, 0.1])))
        body = Body(a["name"], kind=a.get("kind", "rigid"), geometry=geom, material=a.get("material", ""),
                    group=a.get("group", ""), flags=list(a.get("flags", [])), mass=float(a.get("mass", 1.0)))
        return self._put_body(scene, body, a, f"create body {a['name']}")

    def _put_body(self, scene: Scene, body: Body, a: dict, label: str) -> ToolOutcome:
        d = scene.to_dict()
        existing = [i for i, b in enumerate(scene.bodies) if b.name == body.name]
        bodies = d["bodies"]
        if existing:
            bodies[existing[0]] = asdict(body)
        else:
            bodies.append(asdict(body))
        if "parent" in a:
            if "joint" not in a:
                raise ToolRefused("create_body: a parent needs a joint (name and type)")
            jd = a["joint"]
            joint = Joint(jd["name"], jd["type"], a["parent"], body.name,
                          Transform(list(jd.get("origin", [0, 0, 0]))), list(jd.get("axis", [0, 0, 1])),
                          float(jd.get("lower", -np.pi)), float(jd.get("upper", np.pi)))
            d["joints"] = [j for j in d["joints"] if j["child"] != body.name and j["name"] != joint.name]
            d["joints"].append(asdict(joint))
            d["rest"].pop(body.name, None)
        elif "rest" in a:
            d["rest"][body.name] = list(a["rest"])
        after = Scene.from_dict(d, where="create_body")
        return self._run("create_body", a, EditScene(self.project, after, label, self.actor),
                         {"body": body.name, "bodies": len(after.bodies)})

    def _build_part_code(self, a: dict) -> ToolOutcome:
        scene = load_scene(self.project)
        job = new_job_dir(self.project.path, "part")
        run = run_code(a["code"], job, "python", time_limit=min(float(a.get("time_limit", 60)), self.code_time_limit))
        if not run.ok:
            raise ToolRefused(f"build_part_code: {run.failure()} (job folder {job.name})")
        stl = job / "part.stl"
        if "part.stl" not in run.files:
            raise ToolRefused(f"build_part_code: the code ran but wrote no part.stl in its job folder "
                              f"(it wrote {run.files or 'nothing'})")
        import trimesh
        try:
            mesh = trimesh.load(stl, file_type="stl", force="mesh")
        except Exception as e:
            raise ToolRefused(f"build_part_code: part.stl is not a readable mesh ({e})") from None
        if len(mesh.faces) == 0 or not np.all(np.isfinite(mesh.vertices)) or np.abs(mesh.vertices).max() > 100:
            raise ToolRefused("build_part_code: part.stl is empty or larger than 100 m; expected metres")
        name = self.project.put_asset(stl.read_bytes(), "stl")
        rel = str(self.project.asset_path(name).relative_to(self.project.path))
        try:
            body = scene.body(a["body"])
            body = Body(body.name, body.kind, Geometry(source="mesh", path=rel), body.material, body.group,
                        body.flags, body.mass)
        except KeyError:
            body = Body(a["body"], geometry=Geometry(source="mesh", path=rel))
        return self._put_body(scene, body, {}, f"build part {a['body']}")

    # ---- state tools ----------------------------------------------------
    def _set_state(self, a: dict) -> ToolOutcome:
        scene = load_scene(self.project)
        cur = get_state(self.project, a["state"])
        if cur is None and "frame" not in a:
            raise ToolRefused(f"set_state: state {a['state']!r} is new; give its frame")
        pose = cur.pose.copy() if cur else Pose.rest(scene)
        for body, t in a.get("roots", {}).items():
            if body not in scene.roots:
                raise ToolRefused(f"set_state.roots.{body}: not a root body of the scene "
                                  f"(roots: {', '.join(scene.roots)})")
            pose.roots[body] = list(t)
        for joint, v in a.get("joints", {}).items():
            self._check_joint(scene, joint, v, f"set_state.joints.{joint}")
            pose.joints[joint] = v
        pose = Pose.from_dict(pose.to_dict(), scene, where="set_state")
        st = State(a["state"], int(a.get("frame", cur.frame if cur else 0)), pose,
                   a.get("shot", cur.shot if cur else ""), a.get("description", cur.description if cur else ""),
                   cur.still if cur else "", cur.visible if cur else [])
        return self._run("set_state", a, SetState(self.project, st, self.actor), {"state": st.id, "frame": st.frame})

    def _pose_edit(self, name: str, a: dict, st: State, pose: Pose, extra: dict) -> ToolOutcome:
        new = State(st.id, st.frame, pose, st.shot, st.description, st.still, st.visible)
        cmd = SetState(self.project, new, self.actor)
        cmd.label = f"{name} {st.id}"
        return self._run(name, a, cmd, {"state": st.id, **extra})

    def _set_joint(self, a: dict) -> ToolOutcome:
        scene = load_scene(self.project)
        st = self._state(a["state"])
        self._check_joint(scene, a["joint"], a["value"], "set_joint.value")
        pose = st.pose.completed(scene)
        pose.joints[a["joint"]] = a["value"]
        return self._pose_edit("set_joint", a, st, pose, {"joint": a["joint"], "value": a["value"]})

    def _place_relative(self, a: dict) -> ToolOutcome:
        scene = load_scene(self.project)
        st = self._state(a["state"])
        if a["body"] not in scene.roots:
            raise ToolRefused(f"place_relative.body: {a['body']!r} is not a root body (roots: {', '.join(scene.roots)})")
        frame = scene.frame(a["frame"])
        if scene.group_root(frame.body) == a["body"]:
            raise ToolRefused(f"place_relative: frame {a['frame']!r} is on {a['body']!r} itself")
        pose = st.pose.completed(scene)
        world = pose_world(scene, pose)[frame.body] @ from_7(np.asarray(frame.local.as_list()))
        rot = np.asarray(a.get("rotation", [1, 0, 0, 0]), float)
        if abs(np.linalg.norm(rot) - 1) > 1e-3:
            raise ToolRefused(f"place_relative.rotation: expected a unit quaternion, length {np.linalg.norm(rot):.4f}")
        local = compose(np.asarray(a.get("offset", [0, 0, 0]), float)[None], (rot / np.linalg.norm(rot))[None])[0]
        placed = to_7(world @ local)
        pose.roots[a["body"]] = [float(v) for v in placed]
        return self._pose_edit("place_relative", a, st, pose, {"body": a["body"], "at": pose.roots[a["body"]]})

    def _solve_ik(self, a: dict) -> ToolOutcome:
        from studio.timeline.ik import Goal, IKError, frame_pose, solve_ik
        scene = load_scene(self.project)
        st = self._state(a["state"])
        if ("target_frame" in a) == ("target_position" in a):
            raise ToolRefused("solve_ik: give exactly one of target_frame or target_position")
        pose = st.pose.completed(scene)
        try:
            target = (frame_pose(scene, pose, a["target_frame"])[:3, 3] if "target_frame" in a
                      else np.asarray(a["target_position"], float))
            for j in a["joints"]:
                scene.joint(j)
            solved, err = solve_ik(scene, pose, a["joints"], [Goal(a["effector"], target)])
        except IKError as e:
            raise ToolRefused(f"solve_ik: {e}") from None
        if err > 0.01:
            raise ToolRefused(f"solve_ik: the effector {a['effector']!r} cannot reach the target "
                              f"(closest {err * 1000:.1f} mm away within the joint limits); the state is unchanged")
        return self._pose_edit("solve_ik", a, st, solved, {"error_m": round(err, 6),
                                                           "joints": {j: solved.joints[j] for j in a["joints"]}})

    # ---- motion, checks, renders ----------------------------------------
    def _author_segment(self, a: dict) -> ToolOutcome:
        from studio.timeline.commands import BakeSegment
        from studio.timeline.gate import parse_segment, require_storyboards
        from studio.timeline.interpolate import interpolate_poses
        scene = load_scene(self.project)
        require_storyboards(self.project, a["segment"], scene)     # GateError is the agent's answer
        sa, sb = (get_state(self.project, s) for s in parse_segment(a["segment"]))
        tracks = interpolate_poses(scene, [(sa.frame, sa.pose.completed(scene)), (sb.frame, sb.pose.completed(scene))])
        tool = a.get("tool", "interpolate")
        if tool == "carry":
            tracks = self._carried(scene, tracks, sa.frame, sb.frame)
        return self._run("author_segment", a, BakeSegment(self.project, a["segment"], tracks, tool, self.actor),
                         {"segment": a["segment"], "frames": [sa.frame, sb.frame]})

    def _carried(self, scene: Scene, tracks, first: int, last: int):
        """The in-betweens with every body the plan has grasped riding on its hand's frame."""
        from studio.scene.kinematics import tracks_world
        from studio.timeline.carry import carry, carry_windows
        windows = [w for w in carry_windows(self.project.get_doc("plan") or {}, scene)
                   if w.grasp <= last and w.release >= first]
        if not windows:
            raise ToolRefused(f"author_segment: carry needs a plan grasp event (subjects [hand frame, body]) "
                              f"holding during frames {first}..{last}; the plan has none")
        world = tracks_world(scene, tracks)
        for w in windows:
            if w.body not in tracks.roots:
                raise ToolRefused(f"author_segment: carried body {w.body!r} is not a root body")
            f = scene.frame(w.frame)
            hand = world[f.body] @ from_7(np.asarray(f.local.as_list()))
            tracks.roots[w.body] = carry(tracks.roots[w.body], hand, tracks.frames, max(w.grasp, first), w.release)
        return tracks

    def _run_verifiers(self, a: dict) -> ToolOutcome:
        from .verify import verify_and_store
        self._state(a["state"])
        reports = verify_and_store(self.project, a["state"])
        summary = {r.name: r.verdict for r in reports}
        evidence = {r.name: r.evidence[:3] for r in reports if r.verdict == "fail"}
        return ToolOutcome("run_verifiers", a, {"verdicts": summary, "evidence": evidence})

    def _request_render(self, a: dict) -> ToolOutcome:
        from .verify import queue_still
        self._state(a["state"])
        job = queue_still(self.project, a["state"])
        return ToolOutcome("request_render", a, {"queued": job})
