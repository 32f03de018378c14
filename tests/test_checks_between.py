"""NoPenetration and EventsSatisfied between frames, on films made through the tool layer
(tests/between_films.py): what happens on the straight line from one frame to the next counts."""
from __future__ import annotations

import numpy as np
import pytest

from between_films import A, arc, graze_film, hop_film, opening_film, pass_film
from studio.checks.run import verify_film


def reports(project):
    return {r.name: r for r in verify_film(project)}


def test_a_box_hopping_through_a_wall_between_frames_fails_at_those_frame_pairs(tmp_path):
    project = hop_film(tmp_path / "hop", keys=3)
    r = reports(project)["NoPenetration"]
    assert r.verdict == "fail"
    assert r.metrics["penetration_rate"] == 0.0                # every frame passes on its own
    between = [e for e in r.evidence if e.get("between")]
    assert [e["frames"] for e in between] == [[A, A + 1], [A + 1, A + 2]]
    first = between[0]
    assert (first["a"], first["b"]) == ("crate", "wall")        # the body that can move is named first
    # the crate's leading face (x + 0.1) reaches the wall's face (x = -0.01) at x = -0.11 on the line
    # from (-0.4, 0.1) to (0, 0.45): 0.725 of the way, its bottom (0.254 m) below the wall's top (0.3 m)
    assert first["contact_frame"] == pytest.approx(A + 0.725, abs=2e-3)
    assert A + 0.725 < first["deepest_frame"] < A + 1
    assert first["depth_m"] > first["tau_m"] == pytest.approx(0.005)
    x = -0.4 + 0.4 * (first["deepest_frame"] - A)
    assert abs(first["point"][0]) < 0.02 + 1e-6 and first["point"][2] <= 0.3 + 1e-6   # on or in the wall's top
    assert first["point"][0] < x + 0.1 + 1e-6
    assert r.metrics["frame_pairs_with_penetration"] == 2


def test_the_same_hop_keyed_along_its_arc_passes(tmp_path):
    project = hop_film(tmp_path / "hop", keys=9)
    r = reports(project)["NoPenetration"]
    assert r.verdict == "pass", r.evidence[:2]
    # resting on the floor at both ends, touching it: settled without a false failure
    assert r.metrics["sweep"]["pair_frame_pairs"] > 0 and not r.metrics["sweep"]["unresolved"]


def test_a_fast_near_miss_passes(tmp_path):
    project = pass_film(tmp_path / "pass", gap=0.03)
    r = reports(project)["NoPenetration"]
    assert r.verdict == "pass", r.evidence[:2]
    # the post's face plane keeps the crate 3 cm off all the way: settled by it, not by the frames
    assert r.metrics["sweep"]["settled_by_planes"] > 0


def test_a_fast_near_miss_through_an_opening_passes(tmp_path):
    project = opening_film(tmp_path / "opening", gap=0.03)
    r = reports(project)["NoPenetration"]
    assert r.verdict == "pass", r.evidence[:2]
    assert r.metrics["sweep"]["probes"] > 0          # no plane of the wall keeps it off: measured between frames


def test_the_same_flight_clipping_the_opening_fails(tmp_path):
    project = opening_film(tmp_path / "clip", gap=-0.01)
    r = reports(project)["NoPenetration"]
    between = [e for e in r.evidence if e.get("between")]
    assert [(e["frames"], e["a"], e["b"]) for e in between] == [([A + 1, A + 2], "crate", "wall")]
    assert between[0]["depth_m"] == pytest.approx(0.01, abs=1e-3)


def test_a_fast_box_clipping_the_post_between_frames_fails(tmp_path):
    project = pass_film(tmp_path / "clip", gap=-0.02)
    r = reports(project)["NoPenetration"]
    between = [e for e in r.evidence if e.get("between")]
    assert [e["frames"] for e in between] == [[A + 1, A + 2]]
    assert between[0]["depth_m"] == pytest.approx(0.02, abs=1e-3)
    # the crate's side reaches the post's near side (x = -0.05) when its centre is at x = -0.15
    step = 10 / 24
    assert between[0]["contact_frame"] == pytest.approx(A + 1 + (-0.15 + 0.5 * step) / step, abs=2e-3)


def test_a_ball_meeting_a_block_between_frames_meets_its_contact_event_with_the_time(tmp_path):
    project = graze_film(tmp_path / "graze", clearance=0.002)
    r = reports(project)
    ev = r["EventsSatisfied"]
    assert ev.verdict == "pass", ev.evidence
    # the ball (3 cm) comes within tau (5 mm) of the block's top edge (x = -0.02, z = 0.1) when its
    # centre, 13.2 cm up, is 3.5 cm from the edge: x = -0.0342, 0.215 of the way from -0.06 to 0.06
    t = ev.metrics["first_frames"]["touch"]
    assert t == pytest.approx(A + 2 + (np.sqrt(0.035 ** 2 - 0.032 ** 2) * -1 + 0.04) / 0.12, abs=0.01)
    assert ev.metrics["met_between"]["touch"] == f"ball touches block at {t:.1f}"
    assert r["NoPenetration"].verdict == "pass"


def test_a_ball_passing_a_block_by_more_than_tau_does_not_meet_the_event(tmp_path):
    project = graze_film(tmp_path / "far", clearance=0.012)
    ev = reports(project)["EventsSatisfied"]
    assert ev.verdict == "fail"
    assert "never come within 0.0050 m" in ev.evidence[0]["reason"]


def test_hop_arc_is_clear_of_the_wall_at_every_key():
    assert arc(0.0) - 0.1 > 0.3 and min(arc(x) for x in np.linspace(-0.4, 0.4, 9)) == pytest.approx(0.1)


def flying_crate_glb(tmp_path, interpolation="LINEAR"):
    """A 20 cm crate crosses a 2 cm pane at 12 m/s (Z up, 24 fps): at frames 2 and 3 it is 15 cm
    before and after it."""
    from glb_films import GlbWriter
    g = GlbWriter({"up": "Z", "fps": 24})
    g.box("ground", [4, 4, 0.1], translation=(0, 0, -0.05))
    g.box("pane", [0.02, 1.0, 1.0], translation=(0, 0, 0.6))
    crate = g.box("crate", [0.2, 0.2, 0.2], translation=(-0.6, 0, 0.6), extras={"self_propelled": True})
    g.animate(crate, "translation", np.arange(4) / 24,
              [[-0.6, 0, 0.6], [-0.25, 0, 0.6], [0.25, 0, 0.6], [0.6, 0, 0.6]], interpolation)
    path = tmp_path / f"fly-{interpolation.lower()}.glb"
    path.write_bytes(g.bytes())
    return path


def test_studio_verify_glb_fails_a_crate_flying_through_a_pane_between_frames(tmp_path, capsys):
    import json

    from studio.cli import main
    out = tmp_path / "fly.json"
    code = main(["verify", str(flying_crate_glb(tmp_path)), "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 1
    (e,) = next(r for r in json.loads(out.read_text())["reports"] if r["name"] == "NoPenetration")["evidence"]
    assert (e["frames"], e["a"], e["b"]) == ([2, 3], "crate", "pane")
    assert e["contact_frame"] == pytest.approx(2.28, abs=2e-3)       # its face meets the pane 0.28 of the way
    assert e["deepest_frame"] == pytest.approx(2.5, abs=0.05) and e["depth_m"] > 0.005
    # the table names the frame pair and the times whole, wrapped at fields, never cut
    assert "frames=[2, 3]" in text and "contact_frame=2.28" in text and f"depth_m={e['depth_m']}" in text


def test_a_glb_crate_on_step_keys_jumps_at_the_frame_and_is_not_swept(tmp_path):
    from studio.checks.score import check_film
    r = {x.name: x for x in check_film(flying_crate_glb(tmp_path, "STEP"))}["NoPenetration"]
    assert r.verdict == "pass" and r.metrics["frame_pairs_with_penetration"] == 0


def test_the_verify_table_wraps_evidence_at_whole_fields(capsys):
    from studio.checks.report import Report
    from studio.commands.verify import print_reports
    ev = {"frame": 1378, "frames": [1378, 1379], "between": True, "a": "panel", "b": "wall",
          "contact_frame": 1378.4123, "deepest_frame": 1378.6, "depth_m": 0.52, "tau_m": 0.005,
          "axis": [1, 0, 0], "push_m": 0.52, "point": [0.1, 0.2, 0.3]}
    print_reports([Report("NoPenetration", "fail", [ev, dict(ev, frame=1380)], {}, 0.1)], width=100)
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines)
    note = " ".join(line[58:] for line in lines[1:])
    for field in ("frames=[1378, 1379],", "a=panel,", "b=wall,", "contact_frame=1378.4123,", "deepest_frame=1378.6,",
                  "depth_m=0.52,", "tau_m=0.005,", "push_m=0.52"):
        assert field in note.split(" ") or field in note, field
    assert "(1 more: --json FILE lists every one)" in note
    assert "axis" not in note and "point" not in note


def test_between_frame_verdicts_agree_with_an_independent_dense_scorer():
    """A box wanders round a slab (steps of ~10 cm and ~0.4 rad), every frame passing on its own; the
    truth between two frames is the exact box-box overlap (separating axes, tests/checks_films.py) at
    200 points of the straight line and slerp (scipy's, not the studio's) between them. Frame pairs
    within 0.6 mm of tau at their deepest are not judged (200 points place the deepest no closer)."""
    from scipy.spatial.transform import Rotation, Slerp

    from checks_films import box, meshes, sat_depth, scene, still, tracks
    from studio.checks.run import run_checks
    slab, mover, home = [0.3, 0.3, 0.1], [0.1, 0.08, 0.06], [0, 0, 0, 1, 0, 0, 0]
    rng = np.random.default_rng(23)
    frames = 48
    pos, rots = [np.array([0.25, 0.0, 0.0])], [Rotation.identity()]
    while len(pos) < frames:
        p = pos[-1] + rng.normal(size=3) * 0.1
        r = Rotation.from_rotvec(rng.normal(size=3) * 0.4) * rots[-1]
        q = r.as_quat()                                                   # x y z w
        if -0.06 < sat_depth(mover, [*p, q[3], q[0], q[1], q[2]], slab, home) <= 0.004:
            pos.append(p)
            rots.append(r)
    tau, ts = 0.005, np.linspace(0, 1, 202)[1:-1]
    truth_fail, truth_pass = set(), set()
    for k in range(frames - 1):
        path = Slerp([0, 1], Rotation.concatenate([rots[k], rots[k + 1]]))(ts).as_quat()
        deepest = max(sat_depth(mover, [*(pos[k] + t * (pos[k + 1] - pos[k])), q[3], q[0], q[1], q[2]], slab, home)
                      for t, q in zip(ts, path))
        if deepest > tau + 0.0006:
            truth_fail.add(k + 1)
        elif deepest < tau - 0.0006:
            truth_pass.add(k + 1)
    roots = np.array([[*p, r.as_quat()[3], *r.as_quat()[:3]] for p, r in zip(pos, rots)])
    sc = scene([box("slab", slab, kind="static"), box("mover", mover, flags=["self_propelled"])])
    (pen,) = [r for r in run_checks(sc, meshes(sc), tracks(1, slab=still([0, 0, 0], n=frames), mover=roots))
              if r.name == "NoPenetration"]
    found = {e["frame"] for e in pen.evidence if e.get("between")}
    assert not [e for e in pen.evidence if not e.get("between")]        # no frame fails on its own
    assert len(truth_fail) >= 6 and len(truth_pass) >= 20                # both kinds are there to judge
    assert truth_fail <= found and not (found & truth_pass)


def test_a_crate_scraping_a_jamb_a_hair_under_tau_is_not_proven_and_fails(tmp_path, capsys):
    """The crate flies through the opening at 10 m/s, its side 4.998 mm into the jamb all the way
    through (tau 5 mm): every frame passes (clear of the wall), and between them the gap stays 2 µm
    above -tau for 84 % of the frame pair, which no halving within the budget can prove at that speed.
    A sweep that proves neither a pass nor a penetration fails, and says what it reached."""
    import json

    from studio.cli import main
    project = opening_film(tmp_path / "scrape", gap=-0.004998)
    out = tmp_path / "scrape.json"
    assert main(["verify", str(project.path), "--json", str(out)]) == 1
    text = capsys.readouterr().out
    r = next(x for x in json.loads(out.read_text())["reports"] if x["name"] == "NoPenetration")
    assert r["verdict"] == "fail"
    assert r["metrics"]["penetration_rate"] == 0.0 and r["metrics"]["frame_pairs_with_penetration"] == 0
    (e,) = r["evidence"]
    assert e["unsettled"] and e["between"]
    assert (e["frames"], e["a"], e["b"]) == ([A + 1, A + 2], "crate", "wall")
    # the deepest it measured is the scrape's own depth; the lowest gap it proved is past tau
    assert e["depth_m"] == pytest.approx(0.004998, abs=2e-6)
    assert e["tau_m"] == pytest.approx(0.005)
    assert e["depth_m"] < e["tau_m"] < e["depth_bound_m"] < 0.006
    assert A + 1 < e["deepest_frame"] < A + 2 and e["stretches"] > 4096
    assert r["metrics"]["frame_pairs_unsettled"] == 1
    assert r["metrics"]["sweep"]["unresolved"] == [[A + 1, "wall", "crate"]]
    # studio verify's table: a failing required check, the frame pair and the figures
    assert f"frames=[{A + 1}, {A + 2}]" in text and "unsettled=True" in text and "depth_bound_m=" in text
    assert "required checks failing: NoPenetration" in text
    # studio score: the film fails, and the frame pair it could not settle is named apart from penetrations
    assert main(["score", str(project.path)]) == 0
    text = capsys.readouterr().out
    assert "frame pairs penetrating between frames: none" in text
    assert "frame pairs the sweep could not settle (failing): scrape 1" in text
    assert text.splitlines()[1].rstrip().endswith("FAIL")


def test_a_scrape_three_tenths_of_a_millimetre_under_tau_is_settled_by_halving_further(tmp_path):
    """0.3 mm under tau at 10 m/s takes more than 512 halvings of the frame pair, fewer than the budget:
    settled, and passes with nothing left unresolved."""
    project = opening_film(tmp_path / "scrape", gap=-0.0047)
    r = reports(project)["NoPenetration"]
    assert r.verdict == "pass", r.evidence[:1]
    assert r.metrics["sweep"]["probes"] > 512 and r.metrics["sweep"]["unresolved"] == []
    assert r.metrics["frame_pairs_unsettled"] == 0
