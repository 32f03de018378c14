"""Hashes cover content: a CAD part's code is in its geometry hash, a state's frame in its content hash."""
from __future__ import annotations

import pytest
from timeline_scenes import author_arm

from studio.scene import parts
from studio.scene.io import save_scene
from studio.scene.ir import Scene
from studio.scene.meshes import geometry_hash
from studio.timeline.commands import CommandStack, MoveKey
from studio.timeline.gate import state_status
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import State, content_hash, get_state, put_state
from studio.scene.pose import Pose


def _half(x):
    return x / 2


def _slab_v1(width, depth, thickness):
    """A slab, origin at its centre."""
    b = parts._b()
    return b.Box(width, depth, thickness)


def _slab_v2(width, depth, thickness):
    """A slab, origin at its centre, a little thicker than asked."""
    b = parts._b()
    return b.Box(width, depth, thickness + 0.001)


def _slab_v3(width, depth, thickness):
    """A slab whose size goes through a helper of this module."""
    b = parts._b()
    return b.Box(_half(2 * width), depth, thickness)


@pytest.fixture
def slab_part():
    """Registers the part `slab_under_test`; `edit(fn)` re-registers it with other code, as a reload would."""
    def edit(fn):
        parts.part("slab_under_test", width=parts.Param(default=0.4), depth=parts.Param(default=0.3),
                   thickness=parts.Param(default=0.05))(fn)
    edit(_slab_v1)
    yield edit
    parts.PARTS.pop("slab_under_test", None)


def _slab_scene() -> Scene:
    return Scene.from_dict({
        "name": "slab",
        "bodies": [{"name": "floor", "kind": "ground", "geometry": {"size": [3, 3, 0.1],
                                                                  "offset": {"position": [0, 0, -0.05]}}},
                   {"name": "slab", "geometry": {"source": "cad", "part": "slab_under_test", "params": {}}}],
        "cameras": [{"name": "cam", "position": [1.5, -1.5, 1.0], "target": [0, 0, 0]}],
        "rest": {"slab": [0, 0, 0.025, 1, 0, 0, 0]}})


def test_editing_a_parts_code_changes_its_geometry_hash(slab_part):
    g = _slab_scene().body("slab").geometry
    first = geometry_hash(g)
    slab_part(_slab_v2)
    second = geometry_hash(g)
    slab_part(_slab_v3)
    third = geometry_hash(g)
    assert len({first, second, third}) == 3
    slab_part(_slab_v1)
    assert geometry_hash(g) == first                 # the same code, the same hash


def test_editing_a_parts_code_makes_its_approval_stale(tmp_project, slab_part):
    scene = _slab_scene()
    save_scene(tmp_project, scene)
    put_state(tmp_project, scene, State("lying", 1001, Pose.rest(scene)))
    from studio.checks.run import verify_state
    verify_state(tmp_project, "lying")
    record_review(tmp_project, "lying", "approve", "", "ana", scene)
    assert state_status(tmp_project, "lying").status == "approved"
    slab_part(_slab_v2)                               # same name, same parameters, other code
    status = state_status(tmp_project, "lying")
    assert status.status == "stale" and status.reasons[0].startswith("stale: the scene design changed since review")


def test_moving_a_state_to_another_frame_makes_its_review_stale(tmp_project):
    scene = author_arm(tmp_project)
    bent = get_state(tmp_project, "bent")
    assert content_hash(scene, bent.pose, 1024) != content_hash(scene, bent.pose, 1030)
    stack = CommandStack()
    stack.run(MoveKey(tmp_project, "bent", 1030))
    status = state_status(tmp_project, "bent")
    assert status.reasons[0] == "stale: the state's pose, frame or cameras changed since review"
    stack.undo()
    assert state_status(tmp_project, "bent").status == "approved"
