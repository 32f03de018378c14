"""The studio window's Qt-free models: playhead, session, failures, cards (headless)."""
from __future__ import annotations

import numpy as np

from studio.store.project import Project
from studio.store.reports import Report, save_reports
from studio.timeline.commands import CommandStack, ReviewState, SetPose
from studio.ui.failures import by_frame, current_failures
from studio.ui.playhead import Playhead
from studio.ui.session import Session
from ui_scenes import add_boxes


def test_playhead_clamps_and_wraps_only_while_playing():
    ph = Playhead(1001, 1010)
    seen = []
    ph.frame_changed.connect(seen.append)
    ph.set_frame(2000)
    assert ph.frame == 1010 and seen == [1010]
    ph.step()
    assert ph.frame == 1010                 # paused: stays at the end
    ph.set_playing(True)
    ph.step()
    assert ph.frame == 1001                 # playing: wraps to the start
    ph.set_range(1001, 1005)
    ph.set_frame(1004)
    ph.set_range(1001, 1003)
    assert ph.frame == 1003


def test_session_holds_each_state_until_the_next(tmp_project):
    add_boxes(tmp_project, states=3)
    s = Session(tmp_project)
    assert s.frame_range() == (1001, 1240)     # keys end at 1049; an empty timeline still spans 10 s at 24 fps
    # crate is a root at x = -1 + 0.5 i for state i; frame 1030 is held by s2 (1025)
    assert np.allclose(s.world_at(1030)["crate"][:3, 3], [-0.5, 0, 0])
    assert np.allclose(s.world_at(1049)["crate"][:3, 3], [0.0, 0, 0])
    # the arm hangs off the post 1 m up; the shoulder of s1 is -1.0 rad about +Z
    arm = s.world_at(1001)["arm"]
    assert np.allclose(arm[:3, 3], [1, 1, 1])
    assert np.isclose(np.arctan2(arm[1, 0], arm[0, 0]), -1.0)
    assert s.camera_at(1001).name == "wide"


def test_refresh_reports_scene_changes_only_when_the_scene_changed(tmp_project):
    add_boxes(tmp_project, states=2)
    s = Session(tmp_project)
    events = []
    s.scene_changed.connect(lambda: events.append("scene"))
    s.changed.connect(lambda: events.append("changed"))
    s.committed.connect(s.refresh)
    ReviewState(tmp_project, "s1", "approve").do()
    assert events == ["changed"]
    from studio.scene.io import save_scene
    scene = s.scene
    scene.bodies[1].geometry.size = [0.6, 0.5, 0.5]
    save_scene(tmp_project, scene)
    assert events[-2:] == ["scene", "changed"]


def test_poll_notices_a_commit_from_another_process_connection(tmp_project):
    add_boxes(tmp_project, states=2)
    s = Session(tmp_project)
    s.committed.connect(s.refresh)
    assert s.poll() is False
    with Project.open(tmp_project.path) as other:     # e.g. a job runner or the CLI
        ReviewState(other, "s2", "reject", "arm clips the post").do()
    assert s.poll() is True
    card = {c.state_id: c for c in s.cards}["s2"]
    assert card.status == "rejected" and "arm clips the post" in card.reasons[0]


def test_a_snapshot_is_one_version_of_the_project_even_when_another_commit_lands_mid_read(tmp_project):
    from studio.scene.pose import Pose
    from studio.timeline.storyboard import State, put_state
    from studio.ui.session import read_snapshot
    scene = add_boxes(tmp_project, states=2)
    landed = []

    def land_a_key_mid_read(sql: str) -> None:     # another process commits while the tracks are read
        if "FROM tracks" in sql and not landed:
            landed.append(sql)
            with Project.open(tmp_project.path) as other:
                put_state(other, scene, State(id="peek", frame=1012, pose=Pose({}, {}), shot="wide"))

    with Project.open(tmp_project.path) as reader:
        reader.db.conn.set_trace_callback(land_a_key_mid_read)
        first = read_snapshot(reader)
        assert landed                              # the commit did land between the read's queries
        assert [st.id for st in first.board.states] == ["s1", "s2"]    # the version the read began on
        reader.db.conn.set_trace_callback(None)
        second = read_snapshot(reader, first.sigs)
        assert [st.id for st in second.board.states] == ["s1", "peek", "s2"]


def test_a_jobs_progress_alone_redraws_the_job_views_and_nothing_else(tmp_project):
    from studio.jobs import queue
    add_boxes(tmp_project, states=2)
    s = Session(tmp_project)
    s.committed.connect(s.refresh)
    heard = {"changed": 0, "jobs": 0}
    s.changed.connect(lambda: heard.__setitem__("changed", heard["changed"] + 1))
    s.jobs_changed.connect(lambda: heard.__setitem__("jobs", heard["jobs"] + 1))
    with Project.open(tmp_project.path) as runner:        # a render job's process, moving along
        job = queue.submit(runner, "preview", lambda d: {"frames": [1001, 1010]})
        queue.mark_running(runner, job.id, "local")
        assert s.poll() is True
        before = dict(heard)
        for fraction in (0.25, 0.5, 0.75):
            queue.record_progress(runner, job.id, fraction, {})
            assert s.poll() is True
    assert heard == {"changed": before["changed"], "jobs": before["jobs"] + 3}      # the job views only
    with Project.open(tmp_project.path) as other:
        ReviewState(other, "s2", "approve").do()
    assert s.poll() is True
    assert heard == {"changed": before["changed"] + 1, "jobs": before["jobs"] + 4}  # a review: every view


def test_cards_turn_stale_when_an_approved_pose_is_edited(tmp_project):
    add_boxes(tmp_project, states=2)
    s = Session(tmp_project)
    s.committed.connect(s.refresh)
    stack = CommandStack()
    stack.run(ReviewState(tmp_project, "s1", "approve"))
    card = s.cards[0]
    assert card.state_id == "s1" and not any(r.startswith("stale") for r in card.reasons)
    pose = s.states[0].pose.copy()
    pose.joints["shoulder"] = 0.3
    stack.run(SetPose(tmp_project, "s1", pose))
    assert s.cards[0].status == "stale"
    assert stack.undo_label == "Undo pose s1"
    stack.undo()
    assert s.cards[0].status != "stale"


def test_failures_become_pins_at_their_frames(tmp_project):
    scene = add_boxes(tmp_project, states=2)
    save_reports(tmp_project, "film", [
        Report("NoPenetration", "fail", [{"frame": 1003, "a": "crate", "b": "post", "depth_m": 0.012,
                                          "axis": [1, 0, 0], "push_m": 0.012, "point": [0.5, 0.5, 0.2]}]),
        Report("JointLimits", "fail", [{"joint": "shoulder", "frame": 1010, "frames": [1010, 1012],
                                        "value": 1.7, "limit": 1.5}]),
        Report("Supported", "fail", [{"frame": 1020, "body": "crate"}]),
        Report("AnimationWellFormed", "pass")], checked_hash="x")
    fails = current_failures(tmp_project, scene, [])
    pins = by_frame(fails)
    assert sorted(pins) == [1003, 1010, 1011, 1012, 1020]
    pen = pins[1003][0]
    assert pen.kind == "penetration" and pen.bodies == ("crate", "post") and "12.0 mm" in pen.text
    assert pen.required and pen.point == (0.5, 0.5, 0.2)
    assert pins[1011][0].bodies == ("arm",) and pins[1011][0].kind == "joint"
    assert pins[1020][0].kind == "floating" and not pins[1020][0].required


def test_cards_show_a_segment_passing_only_for_checks_of_its_tracks_as_they_are_now(tmp_project):
    from studio.scene.pose import Tracks
    from studio.timeline.bake import bounds_hash
    from studio.timeline.commands import SetPose
    from studio.timeline.film import save_segment
    add_boxes(tmp_project, states=3)
    s = Session(tmp_project)
    s.committed.connect(s.refresh)
    assert [c.segment_status for c in s.cards] == ["not baked", "not baked", ""]
    held = Tracks.from_poses(1001, [s.states[0].pose.completed(s.scene)] * 25)
    save_segment(tmp_project, "s1..s2", held, tool="hold", bounds_hash=bounds_hash(tmp_project, "s1..s2"))
    assert [(c.segment, c.segment_status) for c in s.cards[:2]] == [("s1..s2", "baked"), ("s2..s3", "not baked")]
    passing = [Report(n, "pass") for n in ("AnimationWellFormed", "JointLimits", "NoPenetration", "EventsSatisfied")]
    save_reports(tmp_project, "segment:s1..s2", passing, checked_hash="x")
    assert s.cards[0].segment_status == "baked"          # those checks were of other tracks: no verdict
    save_reports(tmp_project, "segment:s1..s2", passing, checked_hash=held.hash())
    assert s.cards[0].segment_status == "passing"
    save_reports(tmp_project, "segment:s1..s2", [Report("NoPenetration", "fail")], checked_hash=held.hash())
    assert s.cards[0].segment_status == "failing"
    moved = Tracks.from_poses(1001, [s.states[0].pose.completed(s.scene)] * 24 + [s.states[1].pose.completed(s.scene)])
    save_segment(tmp_project, "s1..s2", moved, tool="interpolate", bounds_hash=bounds_hash(tmp_project, "s1..s2"))
    assert s.cards[0].segment_status == "baked"          # re-baked after its checks ran
    pose = s.states[1].pose.completed(s.scene)
    pose.roots["crate"] = [-0.4, 0.1, 0, 1, 0, 0, 0]
    SetPose(tmp_project, "s2", pose).do()
    assert s.cards[0].segment_status == "stale"          # baked for s2 as it was


def test_an_empty_project_has_a_timeline_to_key_on(tmp_project):
    s = Session(tmp_project)
    assert s.states == [] and s.frame_range() == (1001, 1240)


def test_the_viewport_camera_follows_its_body_from_state_to_state(tmp_project):
    from studio.tools.box import ToolBox
    add_boxes(tmp_project, states=3)
    ToolBox(tmp_project, actor="person").call("add_camera", {"name": "wide", "position": [0, -3, 1.5],
                                                             "target": [0, 0, 0.2], "follow": "crate"})
    s = Session(tmp_project)
    a, b = s.camera_at(1001), s.camera_at(1030)     # the crate is at x -1, then -0.5
    assert a.name == b.name == "wide" and a.follow == ""
    assert np.allclose(np.subtract(b.position, a.position), [0.5, 0, 0])
    assert np.allclose(np.subtract(b.target, b.position), [0, 3, -1.3])
