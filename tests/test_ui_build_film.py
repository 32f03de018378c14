"""A film made in the window from an empty project, as an animator would make it:
`studio new`, then only the window's widgets and actions (no CLI, no calls file,
no tool calls from the test): materials, a floor, a table (a CAD part from its
parameter form) and a box; an arm of two links on revolute joints with limits,
with allowed overlaps at its joints; a named frame placed by clicking on the
arm; a camera from the view and one framing the action; three keys posed in
the Pose dock; the plan from the keys; approvals; a motion tool for each
segment chosen in the Motion dock's form (a bad value refused by name, a
preview ghost first); Bake, Verify, Render preview and File › Export. Then the
project's calls (`studio agent log --calls`) replay into an empty project with
the same hashes. Screenshots of each step go to the `shots` folder."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

from calls_scenes import fingerprint
from studio.cli import main
from studio.jobs import queue
from studio.store.project import Project
from studio.store.reports import load_reports
from studio.timeline.film import list_segments
from studio.timeline.storyboard import list_states

pytestmark = [pytest.mark.gui, pytest.mark.blender]
JOB_S = 600_000            # a busy machine: Blender starts, renders and exports in well under this


def click(qtbot, button) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def choose(combo, data=None, text=None) -> None:
    i = combo.findData(data) if data is not None else combo.findText(text)
    assert i >= 0, (data, text, [combo.itemText(k) for k in range(combo.count())])
    combo.setCurrentIndex(i)


def screen_point(vp, world_point) -> QPoint:
    r = vp.plotter.renderer
    r.SetWorldPoint(*world_point, 1.0)
    r.WorldToDisplay()
    x, y, _ = r.GetDisplayPoint()
    widget = vp.plotter.interactor
    ratio = widget.devicePixelRatioF()
    return QPoint(round(x / ratio), round(widget.height() - y / ratio))


def add_body(qtbot, w, name, source, sizes=None, part=None, params=None, kind="rigid", material="", mass=None,
             position=None, offset=None, parent="", joint=None):
    """Fill the Scene dock's Body form field by field and press Add body."""
    form = w.panels["Scene"].body_form
    choose(form.source, data=source)
    if part:
        choose(form.part, text=part)
        for k, v in (params or {}).items():
            form.part_form.fields[k].setText(v)
    for k, v in (sizes or {}).items():
        form.size_forms[source].fields[k].setText(v)
    choose(form.kind, text=kind)
    choose(form.material, data=material)
    choose(form.parent_body, data=parent)
    for k, v in (("mass", mass), ("position", position), ("offset", offset)):
        form.place.fields[k].setText(v if v is not None else form.place.fields[k].text())
    if joint:
        form.joint_name.setText(joint["name"])
        choose(form.joint_type, text=joint["type"])
        for k in ("axis", "origin", "lower", "upper"):
            form.joint.fields[k].setText(joint[k])
    form.name.setText(name)
    click(qtbot, form.add_button)
    qtbot.waitUntil(lambda: name in w.session.scene.body_names, timeout=10_000)
    qtbot.waitUntil(lambda: name in w.viewport.actors, timeout=60_000)     # tessellated and drawn


def pick_export_folder(folder: Path) -> None:
    """Answer File › Export's folder dialog as a person would: type the folder, press Choose."""
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, QFileDialog), dialog
    edit = dialog.findChild(QLineEdit, "fileNameEdit")
    dialog.setDirectory(str(folder.parent))
    edit.setText(str(folder))
    dialog.accept()


def test_a_film_from_an_empty_project_in_the_window_replays_from_its_calls(qtbot, tmp_path, shots, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))     # a reviewer key and layout of its own
    monkeypatch.setenv("KEYPOSE_MODEL_BASE_URL", "")
    path = tmp_path / "arm_film"
    assert main(["new", str(path)]) == 0
    from studio.ui.main_window import MainWindow
    from studio.ui.session import Session
    w = MainWindow(Session.open(path))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    n = iter(range(1, 100))

    def snap(what: str) -> None:
        QApplication.processEvents()
        w.grab().save(str(shots / f"build-{next(n):02d}-{what}.png"))

    # an empty project: nothing to key, and the Plan panel says what to do without a model
    assert not w.storyboard.key_button.isEnabled()
    plan = w.panels["Plan"]
    assert "Making the film by hand" in plan.text.toPlainText() and "studio agent" not in plan.text.toPlainText()
    qtbot.waitUntil(lambda: w.viewport.width() >= w.width() // 2, timeout=5000)   # the 3D view: half the window
    snap("empty")

    build = w.panels["Scene"]
    w._raise_dock("Scene")
    build.tabs.setCurrentIndex(3)                         # Material
    for name, rgba in (("concrete", "0.55, 0.55, 0.58, 1"), ("oak", "0.62, 0.43, 0.25, 1"),
                       ("steel", "0.45, 0.5, 0.58, 1"), ("paint", "0.85, 0.35, 0.15, 1")):
        build.material_name.setText(name)
        build.material_form.fields["color"].setText(rgba)
        click(qtbot, build.material_button)
    assert [m.name for m in w.session.scene.materials] == ["concrete", "oak", "steel", "paint"]

    build.tabs.setCurrentIndex(0)                         # Body
    add_body(qtbot, w, "floor", "box", sizes={"size": "4, 4, 0.1"}, kind="ground", material="concrete",
             mass="0", position="0, 0, 0", offset="0, 0, -0.05")
    add_body(qtbot, w, "table", "part", part="stand", params={"depth": "0.5"}, kind="static", material="oak",
             mass="0", position="0.6, 0, 0", offset="0, 0, 0")
    add_body(qtbot, w, "crate", "box", sizes={"size": "0.2, 0.2, 0.2"}, material="paint", mass="2",
             position="0.6, 0, 0.65")
    add_body(qtbot, w, "base", "cylinder", sizes={"radius": "0.08", "length": "0.1"}, kind="static",
             material="steel", mass="0", position="-0.6, 0, 0.05")
    add_body(qtbot, w, "upper", "box", sizes={"size": "0.06, 0.06, 0.4"}, kind="link", material="steel",
             mass="1", offset="0, 0, 0.21", parent="base",
             joint={"name": "shoulder", "type": "revolute", "axis": "0, 1, 0", "origin": "0, 0, 0.05",
                    "lower": "-1.2", "upper": "1.2"})
    add_body(qtbot, w, "forearm", "box", sizes={"size": "0.05, 0.05, 0.3"}, kind="link", material="steel",
             mass="0.5", offset="0, 0, 0.16", parent="upper",
             joint={"name": "elbow", "type": "revolute", "axis": "0, 1, 0", "origin": "0, 0, 0.42",
                    "lower": "-1.5", "upper": "1.5"})
    scene = w.session.scene
    assert scene.body("table").geometry.part == "stand" and scene.body("table").geometry.params["depth"] == 0.5
    assert scene.body("base").geometry.part == "cylinder"
    elbow = scene.joint("elbow")
    assert (elbow.parent, elbow.child, elbow.type, elbow.lower, elbow.upper) == ("upper", "forearm", "revolute",
                                                                               -1.5, 1.5)
    assert "shoulder on base" in build.outline.topLevelItem(0).child(4).text(1)
    snap("bodies")

    build.tabs.setCurrentIndex(4)                         # Overlap: the links meet at their joints by construction
    for a, b, why in (("base", "upper", "the shoulder joint"), ("upper", "forearm", "the elbow joint")):
        choose(build.overlap_a, text=a)
        choose(build.overlap_b, text=b)
        build.overlap_reason.setText(why)
        click(qtbot, build.overlap_button)
    assert len(w.session.scene.allowed_overlaps) == 2

    build.tabs.setCurrentIndex(1)                         # Frame: click on the forearm's end
    build.frame_name.setText("tip")
    click(qtbot, build.pick_button)
    assert build.picker.armed
    vp = w.viewport
    end = vp.session.world_at(w.playhead.frame)["forearm"] @ [0, 0, 0.28, 1]
    qtbot.mouseClick(vp.plotter.interactor, Qt.MouseButton.LeftButton, pos=screen_point(vp, end[:3]))
    qtbot.waitUntil(lambda: any(f.name == "tip" for f in w.session.scene.frames), timeout=10_000)
    tip = w.session.scene.frame("tip")
    assert tip.body == "forearm" and 0.2 < tip.local.position[2] < 0.32
    assert "tip" in build.axes.drawn
    snap("frame")

    build.tabs.setCurrentIndex(2)                         # Camera from the view
    cams = build.camera_form
    cams.name.setText("cam_wide")
    cams.width_box.setValue(320)
    cams.height_box.setValue(180)
    click(qtbot, cams.from_view_button)
    assert [c.name for c in w.session.scene.cameras] == ["cam_wide"]
    assert w.session.scene.camera("cam_wide").resolution == [320, 180]

    # three keys, posed in the Pose dock
    board, pose = w.storyboard, w.panels["Pose"]
    assert board.key_button.isEnabled()
    for frame, name, shoulder, elbow_v in ((1001, "rest", None, None), (1025, "reach", 0.5, 0.6),
                                           (1049, "fold", -0.4, -0.8)):
        w.playhead.set_frame(frame)
        assert board.key_name.text() == f"key_{frame}"    # the proposal follows the playhead
        board.key_name.setText(name)
        click(qtbot, board.key_button)
        qtbot.waitUntil(lambda: any(c.state_id == name for c in w.session.cards), timeout=10_000)
        if shoulder is not None:
            w._raise_dock("Pose")
            pose.joints["shoulder"][0].setValue(shoulder)
            pose.joints["elbow"][0].setValue(elbow_v)
            click(qtbot, pose.apply_button)
    assert [(s.id, s.frame) for s in list_states(w.session.project)] == [("rest", 1001), ("reach", 1025),
                                                                          ("fold", 1049)]
    snap("keys")

    cams.take_range()                                     # a camera that keeps the arm and crate in view
    cams.name.setText("cam_arm")
    cams.check_bodies(["upper", "forearm", "crate"])
    click(qtbot, cams.frame_button)
    qtbot.waitUntil(lambda: "cam_arm" in [c.name for c in w.session.scene.cameras], timeout=10_000)
    snap("framed")

    w._raise_dock("Plan")                                 # the plan from the keys, shot named for what it shows
    plan.keys_shot.setText("arm_swing")
    choose(plan.keys_camera, text="cam_arm")
    click(qtbot, plan.keys_button)
    doc = w.session.project.get_doc("plan")
    assert doc["shots"] == [{"id": "arm_swing", "camera": "cam_arm", "start": 1001, "end": 1049}]
    assert [m["segment"] for m in doc["motion"]] == ["rest..reach", "reach..fold"]

    for name in ("rest", "reach", "fold"):                # approvals (each state checked first)
        board.select_state(name)
        board.note.setText("the arm reads clearly")
        click(qtbot, board.approve_button)
        qtbot.waitUntil(lambda: next(c for c in w.session.cards if c.state_id == name).status == "approved",
                        timeout=30_000)
    snap("approved")

    motion, bar = w.panels["Motion"], w.scrubber.bar
    from studio.ui.qt_scrubber import FILM_Y
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(int(bar.x_of(1013)), FILM_Y + 3))
    assert motion.current().segment == "rest..reach"
    choose(motion.tool, data="interpolate")
    assert motion.form.fields["rotation"].currentData() == "squad"      # the default shown
    choose(motion.form.fields["rotation"], data="slerp")
    click(qtbot, motion.set_button)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(int(bar.x_of(1037)), FILM_Y + 3))
    assert motion.current().segment == "reach..fold"
    choose(motion.tool, data="hold")
    assert motion.form.fields["blend"].text() == "0"
    motion.form.fields["blend"].setText("-3")             # refused, the field named, nothing stored
    click(qtbot, motion.set_button)
    assert "blend" in motion.status.text() and "minimum" in motion.status.text()
    assert "tool" not in next(m for m in w.session.project.get_doc("plan")["motion"] if m["segment"] == "reach..fold")
    motion.form.fields["blend"].setText("16")
    w.playhead.set_frame(1041)
    click(qtbot, motion.preview_button)                   # a ghost of the result before baking
    qtbot.waitUntil(lambda: motion.previewing == "reach..fold" and bool(vp.ghost_bodies), timeout=60_000)
    assert set(vp.ghost_bodies) <= {"upper", "forearm"}
    snap("preview")
    click(qtbot, motion.set_button)
    tools = {m["segment"]: (m.get("tool"), m.get("params")) for m in w.session.project.get_doc("plan")["motion"]}
    assert tools == {"rest..reach": ("interpolate", {"rotation": "slerp"}), "reach..fold": ("hold", {"blend": 16})}

    jobs = w.panels["Jobs"]
    project = w.session.project
    w._raise_dock("Jobs")
    click(qtbot, jobs.bake_button)
    bake = jobs.selected_id()
    qtbot.waitUntil(lambda: queue.get_job(project, bake).finished, timeout=JOB_S)
    assert queue.get_job(project, bake).state == "succeeded", queue.get_job(project, bake).error
    qtbot.waitUntil(lambda: w.session.film is not None and w.session.film.n_frames == 49, timeout=10_000)
    assert {r["segment"]: r["tool"] for r in list_segments(project)} == {"rest..reach": "interpolate",
                                                                           "reach..fold": "hold"}
    checks = w.panels["Checks"]
    w._raise_dock("Checks")
    click(qtbot, checks.verify_button)
    qtbot.waitUntil(lambda: bool(load_reports(project, "film")[0]) and checks.verify_button.isEnabled(), timeout=JOB_S)
    film = {r.name: r.verdict for r in load_reports(project, "film")[0]}
    assert all(film[c] in ("pass", "not_applicable") for c in
               ("AnimationWellFormed", "JointLimits", "NoPenetration", "EventsSatisfied")), film
    qtbot.waitUntil(lambda: "required checks pass" in w.progress.text(), timeout=10_000)
    snap("verified")

    w._raise_dock("Jobs")
    click(qtbot, jobs.preview_button)
    preview = jobs.selected_id()
    qtbot.waitUntil(lambda: queue.get_job(project, preview).finished, timeout=JOB_S)
    assert queue.get_job(project, preview).state == "succeeded", queue.get_job(project, preview).error
    w.flipbook_action.trigger()
    book = jobs.flipbook
    assert book is not None and book.reel.count == 49
    book.step(24)
    QApplication.processEvents()
    book.grab().save(str(shots / f"build-{next(n):02d}-flipbook.png"))
    book.close()

    out = tmp_path / "delivery"
    out.mkdir()
    QTimer.singleShot(300, lambda: pick_export_folder(out))
    w.export_action.trigger()
    said = []
    jobs.exporter.message.connect(said.append)
    qtbot.waitUntil(lambda: any(m.startswith(("exported", "export failed")) for m in said), timeout=2 * JOB_S)
    assert said[-1].startswith("exported ") and "WITH EXCEPTIONS" not in said[-1], said
    assert (out / "film.mp4").stat().st_size > 1000 and (out / "film.blend").stat().st_size > 1000
    report = json.loads((out / "review-report.json").read_text())
    assert [s["shot"] for s in report["shots"]] == ["arm_swing"]
    snap("exported")
    mine = fingerprint(project)
    w.close()

    calls = tmp_path / "calls.jsonl"
    assert main(["agent", "log", str(path), "--calls", str(calls)]) == 0
    tools_used = [json.loads(line)["tool"] for line in calls.read_text().splitlines()]
    for tool in ("add_material", "create_body", "allow_overlap", "add_frame", "add_camera", "frame_action",
                 "set_state", "set_plan", "run_verifiers", "review_state", "set_segment_tool", "author_segment"):
        assert tool in tools_used, tool
    again = tmp_path / "again"
    assert main(["new", str(again)]) == 0
    assert main(["agent", "replay", str(again), str(calls), "--quiet"]) == 0
    with Project.open(again) as replayed:
        assert fingerprint(replayed) == mine
