"""Export from the window: the gate decides (headless), the dialog offers exceptions, real Blender jobs deliver."""
from __future__ import annotations

import json

import pytest

from studio.jobs import queue
from studio.jobs.deliver import DeliveryError
from studio.scene.io import load_scene, save_scene
from studio.checks.run import verify_film, verify_state
from studio.timeline.bake import bake_segment
from studio.timeline.motion.easing import interpolate_poses
from studio.timeline.reviews import record_review
from studio.timeline.storyboard import get_state
from studio.ui.export import ExportRefused, finish_export, plan_export, queue_blend_check, submit_export
from ui_scenes import add_boxes


def baked(project, failing: bool):
    """Two approved states and 25 frames baked between them at 160x90, verified by the real verifiers;
    failing: the crate is pushed into the post at frames 1010..1012, a real penetration."""
    add_boxes(project, states=2)
    scene = load_scene(project)
    scene.cameras[0].resolution = [160, 90]
    save_scene(project, scene)
    for sid in ("s1", "s2"):
        verify_state(project, sid)
        record_review(project, sid, "approve", "", "ana", scene)
    a, b = get_state(project, "s1"), get_state(project, "s2")
    tracks = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
    if failing:
        tracks.roots["crate"][9:12] = [1.0, 1.0, 0.0, 1, 0, 0, 0]
    bake_segment(project, "s1..s2", tracks, "interpolate", scene=scene)
    reports = {r.name: r.verdict for r in verify_film(project)}
    assert reports["NoPenetration"] == ("fail" if failing else "pass")
    return scene


def test_failing_required_checks_refuse_the_export_and_queue_nothing(tmp_project, tmp_path):
    baked(tmp_project, failing=True)
    export = plan_export(tmp_project, tmp_path / "out")
    assert export.refused and len(export.failing) == 1 and export.failing[0].startswith("NoPenetration")
    with pytest.raises(ExportRefused, match="NoPenetration"):
        submit_export(tmp_project, export, {})
    assert queue.list_jobs(tmp_project) == []
    export.with_exceptions = True
    film, blend = submit_export(tmp_project, export, {})
    jobs = {j.id: j for j in queue.list_jobs(tmp_project)}
    assert (jobs[film].kind, jobs[blend].kind) == ("film", "export_blend")
    assert jobs[film].spec["deliver"] == {"out/film.mp4": str(tmp_path / "out" / "film.mp4")}
    assert jobs[blend].spec["deliver"] == {"out/film.blend": str(tmp_path / "out" / "film.blend")}
    assert finish_export(tmp_project, export) is None           # queued, not finished
    assert queue_blend_check(tmp_project, export) is None       # the .blend is checked only once it exists
    assert not (tmp_path / "out" / "delivery-report.json").exists()


def test_passing_checks_export_directly_and_a_file_is_no_folder(tmp_project, tmp_path):
    baked(tmp_project, failing=False)
    export = plan_export(tmp_project, tmp_path / "out")
    assert not export.refused and export.failing == []
    (tmp_path / "plain").write_text("x")
    with pytest.raises(DeliveryError, match="is a file"):
        plan_export(tmp_project, tmp_path / "plain")


def test_stale_reports_refuse_the_export(tmp_project, tmp_path):
    scene = baked(tmp_project, failing=False)
    a, b = get_state(tmp_project, "s1"), get_state(tmp_project, "s2")
    tracks = interpolate_poses(scene, [(a.frame, a.pose), (b.frame, b.pose)])
    tracks.roots["crate"][5:20, 1] += 0.3                    # baked again, not verified again
    bake_segment(tmp_project, "s1..s2", tracks, "interpolate", scene=scene)
    export = plan_export(tmp_project, tmp_path / "out")
    assert export.refused and len(export.failing) == 1 and "verify again" in export.failing[0]


def test_a_rejected_state_refuses_the_export_from_the_window(tmp_project, tmp_path):
    scene = baked(tmp_project, failing=False)
    record_review(tmp_project, "s2", "reject", "the crate stops short", "ben", scene)
    export = plan_export(tmp_project, tmp_path / "out")
    assert export.refused and export.failing[0].startswith("state s2: rejected by ben")
    with pytest.raises(ExportRefused, match="state s2: rejected by ben"):
        submit_export(tmp_project, export, {})
    assert queue.list_jobs(tmp_project) == []


@pytest.mark.gui
@pytest.mark.blender
def test_refused_export_offers_exceptions_and_delivers_with_a_report(qtbot, tmp_project, tmp_path):
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    baked(tmp_project, failing=True)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    w.show()
    assert w.export_action.isEnabled()
    exporter = w.panels["Jobs"].exporter
    out = tmp_path / "delivered"
    exporter.export_to(out)
    box = exporter.refusal
    assert box is not None and box.isVisible()
    assert "NoPenetration" in box.informativeText()
    assert queue.list_jobs(tmp_project) == []                   # refused: nothing queued
    [accept] = [b for b in box.buttons() if b.text() == "Export with exceptions"]
    with qtbot.waitSignal(exporter.message, timeout=180000,
                          check_params_cb=lambda m: m.startswith(("exported", "export failed"))) as said:
        accept.click()
    assert said.args[0].startswith("exported WITH EXCEPTIONS"), said.args[0]
    assert "checked the .blend at 2 storyboard frames" in said.args[0]      # reopened in a fresh worker
    assert sorted((j.kind, j.state) for j in queue.list_jobs(w.session.project)) == \
        [("export_blend", "succeeded"), ("film", "succeeded"), ("verify", "succeeded")]
    assert (out / "film.mp4").stat().st_size > 1000
    assert (out / "film.blend").read_bytes()[:7] == b"BLENDER" or \
        (out / "film.blend").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"      # plain or zstd-compressed
    report = json.loads((out / "delivery-report.json").read_text())
    assert report["exported_with_exceptions"] and report["reasons"][0].startswith("NoPenetration")
    assert report["failing_checks"][0]["evidence"][0]["frame"] == 1010
    assert "crate" in (out / "delivery-report.md").read_text()


@pytest.mark.gui
@pytest.mark.blender
def test_passing_checks_export_from_the_jobs_panel_without_a_dialog_or_report(qtbot, tmp_project, tmp_path):
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    baked(tmp_project, failing=False)
    w = MainWindow(Session.open(tmp_project.path))
    qtbot.addWidget(w)
    jobs = w.panels["Jobs"]
    out = tmp_path / "clean"
    with qtbot.waitSignal(jobs.message, timeout=180000,
                          check_params_cb=lambda m: m.startswith(("exported", "export failed"))) as said:
        jobs.exporter.export_to(out)
        assert jobs.exporter.refusal is None                  # nothing to accept: straight to the jobs
        assert jobs.table.rowCount() == 2
    assert said.args[0].startswith(f"exported {out / 'film.mp4'} and {out / 'film.blend'}"), said.args[0]
    assert (out / "film.mp4").stat().st_size > 1000 and (out / "film.blend").stat().st_size > 1000
    assert not (out / "delivery-report.json").exists()
