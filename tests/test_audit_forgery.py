"""Forged reviews: someone edits studio.db with sqlite3 and `studio audit verify`
and the gate both catch it, naming the row; honest reviews still open the gate."""
from __future__ import annotations

import json
import re
import sqlite3

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from timeline_scenes import arm_scene, arm_states

from studio.cli import main
from studio.scene.pose import Pose
from studio.store import audit as chain
from studio.store import keys
from studio.store.project import DB_NAME, Project
from studio.store.schema import APP_ID, MIGRATIONS
from studio.timeline.film import list_segments
from studio.timeline.gate import GateError, board_status, require_storyboards
from studio.timeline.progress import progress
from studio.scene.io import load_scene, save_scene
from studio.timeline.reviews import list_reviews, record_review, register_message, review_message
from studio.timeline.storyboard import State, list_states, put_state
from studio.ui.cards import board_cards

TRIGGERS = ("audit_no_update", "audit_no_delete", "reviews_no_update", "reviewers_no_update")


@pytest.fixture
def board(tmp_project, capsys):
    """The arm's three states, checked by the real verifiers and approved by ana;
    then ben rejects `bent`. Returns the project folder."""
    arm_states(tmp_project)
    path = str(tmp_project.path)
    for sid in ("rest", "bent", "back"):
        assert main(["board", "approve", path, sid, "--note", "looks right", "--reviewer", "ana"]) == 0
    assert main(["board", "reject", path, "bent", "--note", "elbow clips the base", "--reviewer", "ben"]) == 0
    capsys.readouterr()
    return tmp_project.path


def forge(folder, *statements, params=()):
    """Edit the database as an attacker with sqlite3 would: triggers dropped first."""
    conn = sqlite3.connect(folder / DB_NAME)
    for t in TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {t}")
    for sql in statements:
        conn.execute(sql, params) if params and "?" in sql else conn.execute(sql)
    conn.commit()
    conn.close()


def recompute_chain(folder):
    """What an attacker without any key can still do: rehash every audit row."""
    conn = sqlite3.connect(folder / DB_NAME)
    conn.execute("DROP TRIGGER IF EXISTS audit_no_update")
    chain.rechain(conn)
    conn.commit()
    conn.close()


def audit_row(folder, action, target):
    conn = sqlite3.connect(folder / DB_NAME)
    row = conn.execute("SELECT id, detail FROM audit WHERE action = ? AND target = ? ORDER BY id DESC LIMIT 1",
                       [action, target]).fetchone()
    conn.close()
    return row[0], json.loads(row[1])


def reject_id(folder):
    return [r for r in _reviews(folder) if r.verdict == "reject"][0].id


def _reviews(folder):
    with Project.open(folder) as p:
        return list_reviews(p, "bent")


def caught(folder, capsys, row):
    """`studio audit verify` exits 1 naming `row`, and the gate refuses motion with the same reason."""
    capsys.readouterr()
    assert main(["audit", "verify", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"fails verification at {row} (" in out, out
    with Project.open(folder) as p:
        with pytest.raises(GateError) as e:
            require_storyboards(p, "rest..bent")
        board_reasons = {s.state_id: (s.status, s.reasons[0]) for s in board_status(p)}
    assert f"audit log: fails verification at {row} (" in str(e.value)
    why = f"unreviewed: no review counts while the audit log fails verification at {row} (see studio audit verify)"
    assert board_reasons == {sid: ("unreviewed", why) for sid in ("rest", "bent", "back")}
    return out


def test_honest_reviews_verify_and_the_gate_follows_them(board, capsys):
    assert main(["audit", "verify", str(board)]) == 0
    out = capsys.readouterr().out
    assert "audit log intact" in out and "4 signed reviews verified" in out
    assert re.search(r"reviewers: ana \(person, key [0-9a-f]{16}\), ben \(person, key [0-9a-f]{16}\)$", out.strip())
    with Project.open(board) as p:
        statuses = {s.state_id: (s.status, s.reasons[:1]) for s in board_status(p)}
        assert statuses["rest"] == ("approved", [])
        assert statuses["bent"][0] == "rejected" and "by ben" in statuses["bent"][1][0]
        with pytest.raises(GateError, match="bent: rejected by ben"):
            require_storyboards(p, "rest..bent")
        require_storyboards(p, "rest..back")      # both ends approved by ana, honestly


def test_honest_approve_then_bake(board, capsys):
    assert main(["board", "approve", str(board), "bent", "--note", "fixed", "--reviewer", "ben"]) == 0
    assert main(["bake", str(board), "--segment", "rest..bent", "--quiet"]) == 0
    with Project.open(board) as p:
        assert [r["segment"] for r in list_segments(p)] == ["rest..bent"]
    capsys.readouterr()
    assert main(["audit", "verify", str(board)]) == 0


def test_verdict_changed_in_reviews(board, capsys):
    with Project.open(board) as p:
        before, _ = progress(p)
    rid = reject_id(board)
    forge(board, f"UPDATE reviews SET verdict = 'approve' WHERE id = {rid}")
    out = caught(board, capsys, f"reviews row {rid}")
    assert "its verdict differs from audit row" in out
    with Project.open(board) as p:
        after, _ = progress(p)
    assert after < before, (before, after)          # the two approvals ana signed no longer count


def test_verdict_changed_everywhere_and_chain_recomputed(board, capsys):
    rid = reject_id(board)
    row, _ = audit_row(board, "reject", "state:bent")
    forge(board, f"UPDATE reviews SET verdict = 'approve' WHERE id = {rid}",
          f"UPDATE audit SET action = 'approve' WHERE id = {row}")
    recompute_chain(board)
    out = caught(board, capsys, f"audit row {row}")
    assert "the signature of ben's approve of state bent does not verify" in out


def test_note_changed_in_the_log(board, capsys):
    row, detail = audit_row(board, "reject", "state:bent")
    detail["note"] = "fine by me"
    forge(board, f"UPDATE audit SET detail = ? WHERE id = {row}", params=(json.dumps(detail, sort_keys=True),))
    out = caught(board, capsys, f"audit row {row}")
    assert "its content does not match its hash" in out
    assert main(["board", "approve", str(board), "bent", "--reviewer", "ben"]) == 0     # a new review ...
    assert main(["bake", str(board), "--segment", "rest..bent", "--quiet"]) == 1         # ... opens nothing
    assert f"audit log: fails verification at audit row {row} (" in capsys.readouterr().err


def test_note_changed_and_chain_recomputed(board, capsys):
    rid = reject_id(board)
    row, detail = audit_row(board, "reject", "state:bent")
    detail["note"] = "fine by me"
    forge(board, f"UPDATE audit SET detail = ? WHERE id = {row}", params=(json.dumps(detail, sort_keys=True),))
    forge(board, f"UPDATE reviews SET note = 'fine by me' WHERE id = {rid}")
    recompute_chain(board)
    out = caught(board, capsys, f"audit row {row}")
    assert "does not verify against ben's key" in out


def test_review_row_inserted(board, capsys):
    """An approve copied from ana's signed approve of bent, inserted as the latest review."""
    (first, *_) = _reviews(board)
    forge(board, "INSERT INTO reviews (state_id, verdict, note, reviewer, at, content_hash, design_id, visible, "
                 "signature, chain) SELECT state_id, verdict, note, reviewer, at, content_hash, design_id, visible, "
                 f"signature, chain FROM reviews WHERE id = {first.id}")
    new = max(r.id for r in _reviews(board))
    out = caught(board, capsys, f"reviews row {new}")
    assert "is not in the audit log (inserted outside the studio)" in out


def test_review_and_log_row_inserted_with_chain_recomputed(board, capsys):
    """The copied approve gets its own audit row too; the signature binds the place it was made."""
    (first, *_) = _reviews(board)
    forge(board, "INSERT INTO reviews (state_id, verdict, note, reviewer, at, content_hash, design_id, visible, "
                 "signature, chain) SELECT state_id, verdict, note, reviewer, at, content_hash, design_id, visible, "
                 f"signature, chain FROM reviews WHERE id = {first.id}")
    new = max(r.id for r in _reviews(board))
    _, detail = audit_row(board, "approve", "state:bent")
    detail["review"] = new
    forge(board, "INSERT INTO audit (at, actor, action, target, detail) VALUES "
                 "('2026-12-01T00:00:00.000+00:00', 'ana', 'approve', 'state:bent', ?)",
          params=(json.dumps(detail, sort_keys=True),))
    recompute_chain(board)
    with Project.open(board) as p:
        last = p.audit_log(1)[0]["id"]
    out = caught(board, capsys, f"audit row {last}")
    assert "ana's approve of state bent was signed at another place in the log (moved or copied)" in out


def test_review_row_deleted(board, capsys):
    rid = reject_id(board)
    row, _ = audit_row(board, "reject", "state:bent")
    forge(board, f"DELETE FROM reviews WHERE id = {rid}")
    out = caught(board, capsys, f"audit row {row}")
    assert f"review {rid} (ben's reject of state bent) is missing from reviews and was never withdrawn" in out


def test_audit_row_deleted_in_the_middle(board, capsys):
    row, _ = audit_row(board, "approve", "state:rest")
    forge(board, f"DELETE FROM audit WHERE id = {row}")
    before = (board / DB_NAME).read_bytes()
    out = caught(board, capsys, f"audit row {row + 1}")
    assert f"its previous-row hash does not match row {row - 1}" in out
    assert (board / DB_NAME).read_bytes() == before          # verifying and refusing wrote nothing


def test_rejection_cut_from_the_end_of_the_log(board, capsys):
    """The issue's attack: delete the rejection and its audit row, the last in the log,
    and rehash; only the reviewer's own record of the last row signed can tell."""
    rid = reject_id(board)
    row, _ = audit_row(board, "reject", "state:bent")
    with Project.open(board) as p:       # the rejection, then the tool call that made it, end the log
        assert [r["id"] for r in p.audit_log(2)] == [row + 1, row]
    forge(board, f"DELETE FROM reviews WHERE id = {rid}", f"DELETE FROM audit WHERE id >= {row}")
    recompute_chain(board)
    out = caught(board, capsys, f"audit row {row + 1}")       # the last row ben's record says he signed
    assert "rows were cut from its end" in out


def test_public_key_swapped_in_the_table(board, capsys):
    mallory = Ed25519PrivateKey.generate()
    forge(board, "UPDATE reviewers SET public_key = ? WHERE name = 'ana'", params=(keys.public_hex(mallory),))
    out = caught(board, capsys, "reviewers row ana")
    assert "public key or kind differs from the one registered at audit row" in out


def test_public_key_swapped_and_everything_resigned(board, capsys):
    """The attacker removes ben's rejection, swaps ana's key, signs her registration and
    reviews again with their own key and rehashes the whole chain: a self-consistent
    database, which only ana's own config can tell from hers."""
    mallory = Ed25519PrivateKey.generate()
    public = keys.public_hex(mallory)
    with Project.open(board) as p:
        pid = p.project_id
    forge(board, "UPDATE reviewers SET public_key = ? WHERE name = 'ana'", params=(public,))
    conn = sqlite3.connect(board / DB_NAME)
    for t in TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {t}")
    conn.execute("DROP TRIGGER IF EXISTS reviewers_no_delete")
    conn.execute("DELETE FROM reviews WHERE reviewer = 'ben'")
    conn.execute("DELETE FROM reviewers WHERE name = 'ben'")
    conn.execute("DELETE FROM audit WHERE actor = 'ben'")
    chain.rechain(conn)
    # re-sign every row ana is named in, in order, rehashing as we go
    for rid, action, target, detail in conn.execute(
            "SELECT id, action, target, detail FROM audit WHERE actor = 'ana' ORDER BY id").fetchall():
        d = json.loads(detail)
        prev = conn.execute("SELECT hash FROM audit WHERE id = ?", [rid - 1]).fetchone()[0]
        if action == "register reviewer":
            d.update(public_key=public, chain=prev,
                     signature=keys.sign(mallory, register_message(pid, "ana", "person", public, prev)))
        elif "review" in d:
            d.update(chain=prev, signature=keys.sign(mallory, review_message(
                pid, target[6:], action, d["note"], "ana", d["at"], d["content_hash"], d["design_id"],
                d["visible"], prev)))
            conn.execute("UPDATE reviews SET chain = ?, signature = ? WHERE id = ?",
                         [prev, d["signature"], d["review"]])
        conn.execute("UPDATE audit SET detail = ? WHERE id = ?", [json.dumps(d, sort_keys=True), rid])
        chain.rechain(conn)
    conn.commit()
    conn.close()
    row, _ = audit_row(board, "register reviewer", "reviewer:ana")
    out = caught(board, capsys, f"audit row {row}")
    assert "reviewer ana's key in this project" in out and "is not ana's key in your config" in out


def test_old_project_migrates_its_unsigned_review_does_not_count(tmp_path, capsys):
    """A version-2 project with a review as the studio then wrote it (no signature): after
    the migration its chain verifies, and the state reads unreviewed until reviewed again."""
    folder = tmp_path / "old"
    folder.mkdir()
    conn = sqlite3.connect(folder / DB_NAME)
    conn.executescript(MIGRATIONS[0] + MIGRATIONS[1])
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", APP_ID), ("schema_version", "2"),
                                                        ("name", "old film"), ("fps", "24"),
                                                        ("frame_start", "1001")])
    conn.execute("INSERT INTO audit (at, actor, action, target, detail) VALUES "
                 "('2026-01-01T10:00:00.000+00:00', 'person', 'create project', '', '{}')")
    conn.execute("INSERT INTO reviews (state_id, verdict, note, reviewer, at, content_hash, design_id, visible) "
                 "VALUES ('rest', 'approve', 'old', 'ana', '2026-01-01T10:05:00.000+00:00', 'h', 'd', '[]')")
    conn.execute("INSERT INTO audit (at, actor, action, target, detail) VALUES "
                 "('2026-01-01T10:05:00.000+00:00', 'ana', 'approve', 'state:rest', ?)",
                 [json.dumps({"review": 1, "note": "old", "content_hash": "h", "visible": []})])
    conn.commit()
    conn.close()
    with Project.open(folder) as p:
        scene = arm_scene()
        save_scene(p, scene)
        put_state(p, scene, State("rest", 1001, Pose.rest(scene), "close"))
        (st,) = board_status(p)
        assert [r.signed for r in list_reviews(p)] == [False]
    assert st.reasons[0] == "unreviewed: the review is unsigned (made before reviews were signed); review it again"
    capsys.readouterr()
    assert main(["audit", "verify", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "4 rows chained, 0 signed reviews verified; 1 unsigned from before signing" in out
    assert main(["board", "approve", str(folder), "rest", "--reviewer", "ana"]) == 0
    with Project.open(folder) as p:
        assert board_status(p)[0].status == "approved"


def test_keys_live_in_the_users_config_and_studio_runs_are_never_people(board, reviewer_keys, capsys):
    path = reviewer_keys / "ana.key"
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
    assert not list(board.rglob("*.key"))
    with Project.open(board) as p:
        assert keys.local_public_key("ana") == p.db.execute(
            "SELECT public_key FROM reviewers WHERE name = 'ana'").fetchone()[0]
        record_review(p, "bent", "approve", "batch approval", "batch")
        cards = {c.state_id: c for c in board_cards(p, load_scene(p), list_states(p))}
    assert cards["bent"].status == "approved"
    assert cards["bent"].reviewed.startswith("approved by a batch run (not a person) at ")
    assert cards["rest"].reviewed.startswith("approved by ana at ")
    capsys.readouterr()
    assert main(["board", "status", str(board)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "approved by a batch run (not a person)" in lines[1] and lines[1].startswith("bent")
    assert main(["agent", "log", str(board)]) == 0
    log = [" ".join(line.split()[2:]) for line in capsys.readouterr().out.splitlines()]
    assert "approve bent by a batch run (not a person)" in log and "reject bent by ben" in log
    assert main(["audit", "verify", str(board)]) == 0
    assert "batch (a batch run (not a person), key " in capsys.readouterr().out


def test_bad_input_is_named(board, reviewer_keys, tmp_path, capsys):
    assert main(["audit", "verify", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err
    key = reviewer_keys / "ana.key"
    key.chmod(0o644)
    try:
        assert main(["board", "reject", str(board), "rest", "--reviewer", "ana"]) == 2
        err = capsys.readouterr().err
        assert f"{key}: the reviewer key is readable by others (mode 0644)" in err
    finally:
        key.chmod(0o600)
    with Project.open(board) as p:
        assert [r.verdict for r in list_reviews(p, "rest")] == ["approve"]     # nothing half-written
    assert main(["board", "reject", str(board), "rest", "--reviewer", "../../x"]) == 2
    assert "reviewer '../../x': expected a name of letters" in capsys.readouterr().err


def test_unsigned_review_appended_under_a_standing_id(board, capsys):
    """An attacker without keys appends a review as older studios wrote it, reusing the id of
    ben's rejection for another state, so that ana's approve of bent would be the latest."""
    rid = reject_id(board)
    forge(board, f"UPDATE reviews SET state_id = 'rest', verdict = 'approve', signature = NULL, chain = NULL "
                 f"WHERE id = {rid}")
    with Project.open(board) as p:
        row = p.audit("ana", "approve", "state:rest", {"review": rid, "note": "", "visible": []})
    out = caught(board, capsys, f"audit row {row}")
    assert "an unsigned approve of state rest after reviews were signed" in out
