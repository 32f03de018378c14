"""The one generic bake: any registered motion tool, named by the plan or the
call, runs between approved states; what it reports is kept beside the
tracks; a tool that cannot author its segment changes nothing."""
from __future__ import annotations

import numpy as np
import pytest
from calls_scenes import calls, fingerprint

from studio.tools.box import ToolBox
from studio.scene.io import load_scene
from studio.scene.pose import Tracks
from studio.timeline.author import authored
from studio.timeline.bake import hits_states
from studio.timeline.commands import CommandStack
from studio.timeline.film import load_segment
from studio.timeline.motion import MOTION_TOOLS, Authored, MotionError, MotionTool, motion_tools, register
from studio.timeline.segment_commands import AuthorSegment


def arc(seg, params):
    """crate_a only, lifted by `height` mid-way; everything else is left to the bake."""
    n = seg.frames
    a, b = np.asarray(seg.a.pose.roots["crate_a"]), np.asarray(seg.b.pose.roots["crate_a"])
    s = np.linspace(0, 1, n)[:, None]
    root = (1 - s) * a + s * b
    root[:, 3:] /= np.linalg.norm(root[:, 3:], axis=1, keepdims=True)
    root[:, 2] += params["height"] * np.sin(np.pi * s[:, 0])
    return Authored(Tracks(seg.a.frame, {"crate_a": root}, {}),
                    attachments=[{"frame": "crate_a_top", "body": "crate_b", "start": seg.a.frame, "end": seg.b.frame}],
                    notes=[f"crate_a leaves the floor for {n - 2} frames"])


def refuse(seg, params):
    raise MotionError(f"refuse {seg.id}: crate_a has nowhere to go")


@pytest.fixture
def tools():
    motion_tools()                                   # the registered tools first, then ours
    added = [register(MotionTool("arc", "lift a crate over an arc",
                                 {"type": "object", "required": ["height"], "additionalProperties": False,
                                  "properties": {"height": {"type": "number", "minimum": 0}}}, arc)),
             register(MotionTool("refuse", "never authors", {"type": "object"}, refuse))]
    yield
    for t in added:
        MOTION_TOOLS.pop(t.name)


def approved(project):
    box = ToolBox(project, CommandStack(), actor="person")
    for c in calls()[:15]:
        box.call(c["tool"], c["arguments"])
    return box


def test_any_registered_tool_bakes_through_the_gate_and_its_report_is_kept(tmp_project, tools):
    box = approved(tmp_project)
    cmd = box.stack.run(AuthorSegment(tmp_project, "start..slid", "person", "arc", {"height": 0.2}))
    tracks = load_segment(tmp_project, "start..slid")
    scene = load_scene(tmp_project)
    a, b = (box.state(s).pose.completed(scene) for s in ("start", "slid"))
    assert hits_states(tracks, a, b)
    assert tracks.roots["crate_a"][:, 2].max() > 0.15 + 0.19          # lifted, as the tool said
    np.testing.assert_allclose(tracks.roots["crate_b"], np.tile(a.roots["crate_b"], (tracks.n_frames, 1)))
    kept = authored(tmp_project, "start..slid")
    assert kept["tool"] == "arc" and kept["params"] == {"height": 0.2}
    assert kept["notes"] == ["crate_a leaves the floor for 11 frames"] and kept["attachments"][0]["body"] == "crate_b"
    assert cmd.label == "bake start..slid (arc)"
    box.stack.undo()
    assert load_segment(tmp_project, "start..slid") is None and authored(tmp_project, "start..slid") is None


def test_a_tool_that_cannot_author_or_bad_params_change_nothing(tmp_project, tools):
    box = approved(tmp_project)
    before = fingerprint(tmp_project)
    with pytest.raises(MotionError, match="refuse start..slid: crate_a has nowhere to go"):
        box.stack.run(AuthorSegment(tmp_project, "start..slid", "person", "refuse", {}))
    with pytest.raises(MotionError, match=r"start..slid arc params: 'height' is a required property"):
        box.stack.run(AuthorSegment(tmp_project, "start..slid", "person", "arc", {}))
    assert fingerprint(tmp_project) == before and not box.stack.undo_label.startswith("Undo bake")
