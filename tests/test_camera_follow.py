"""A camera may follow a body: the field round-trips through the scene file, is written only
when set (so older scenes and their state hashes are unchanged), is refused by add_camera
naming the field when the body does not exist, and places the camera for a pose."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from studio.tools.errors import ToolRefused
from studio.tools.box import ToolBox
from studio.scene.cameras import placed
from studio.scene.io import load_scene
from studio.scene.ir import IRError, Scene
from studio.scene.kinematics import pose_world
from studio.scene.pose import Pose
from studio.store.project import Project
from studio.timeline.reviews import list_reviews
from studio.timeline.storyboard import content_hash, list_states

ROOT = Path(__file__).resolve().parents[1]


def _project(tmp_path) -> tuple[Project, ToolBox]:
    p = Project.create(tmp_path / "p", name="p")
    box = ToolBox(p, actor="person")
    box.call("create_body", {"name": "cart", "kind": "rigid", "size": [0.4, 0.3, 0.2], "rest": [0, 0, 0.1, 1, 0, 0, 0]})
    return p, box


def test_follow_round_trips_and_is_written_only_when_set(tmp_path):
    p, box = _project(tmp_path)
    with p:
        box.call("add_camera", {"name": "still_cam", "position": [3, -3, 2], "target": [0, 0, 0.5]})
        box.call("add_camera", {"name": "chase", "position": [2, -2, 1], "target": [0, 0, 0.2], "follow": "cart"})
        scene = load_scene(p)
    assert [c.follow for c in scene.cameras] == ["", "cart"]
    d = scene.to_dict()
    assert "follow" not in d["cameras"][0] and d["cameras"][1]["follow"] == "cart"
    again = Scene.from_json(scene.to_json())
    assert again == scene and again.to_json() == scene.to_json()
    with pytest.raises(IRError, match=r"scene.cameras\[1\].follow: no body named 'ghost'"):
        Scene.from_dict(dict(d, cameras=[d["cameras"][0], dict(d["cameras"][1], follow="ghost")]))


def test_a_follow_of_no_body_is_refused_naming_the_field_and_nothing_changes(tmp_path):
    p, box = _project(tmp_path)
    with p:
        before = load_scene(p)
        with pytest.raises(ToolRefused, match=r"add_camera.follow: no body named 'ghost'"):
            box.call("add_camera", {"name": "chase", "position": [2, -2, 1], "target": [0, 0, 0], "follow": "ghost"})
        assert load_scene(p) == before


def test_a_following_camera_keeps_its_offset_from_the_body(tmp_path):
    p, box = _project(tmp_path)
    with p:
        box.call("add_camera", {"name": "chase", "position": [2, -2, 1], "target": [0, 0, 0.2], "follow": "cart"})
        scene = load_scene(p)
    cam = scene.camera("chase")
    pose = Pose.rest(scene)
    pose.roots["cart"] = [1.5, 0.5, 0.1, 0.7071068, 0, 0, 0.7071068]      # moved and turned a quarter
    at = placed(cam, pose_world(scene, pose))
    assert at.position == pytest.approx([3.5, -1.5, 1.1]) and at.target == pytest.approx([1.5, 0.5, 0.3])
    assert at.follow == "" and placed(at, {}) is at                        # a placed camera stands still


def test_older_scenes_keep_their_text_and_state_hashes():
    """The committed doorway film was made before cameras could follow: its cameras write back
    as stored, and its reviews' content hashes still match its states."""
    with Project.open(ROOT / "projects" / "doorway") as p:
        scene = load_scene(p)
        rows = [json.loads(r["body"]) for r in
                p.db.query("SELECT body FROM scene_objects WHERE kind = 'camera' ORDER BY position")]
        assert rows and scene.to_dict()["cameras"] == rows                # written back as stored
        reviewed = {r.state_id: r.content_hash for r in list_reviews(p)}
        states = list_states(p)
    assert reviewed and all(reviewed[s.id] == content_hash(scene, s.pose, s.frame) for s in states)
    assert np.all([c.follow == "" for c in scene.cameras])
