"""Whether a project's reviews can be trusted: the audit chain holds, every
reviewer key, review and withdrawal in it is signed by its reviewer's key, and
the `reviews` and `reviewers` tables say exactly what the log says.

`verify_project` reads the whole log once and names the first thing wrong;
`studio audit verify` prints it and the gate refuses motion while there is one.
Reviews from before signing are counted as unsigned: they do not approve anything.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from studio.store import audit as chain
from studio.store import keys
from studio.store.project import Project

from studio.timeline.reviews import VERDICTS, by_whom, register_message, review_message, withdraw_message


@dataclass
class Problem:
    """The first bad row: which table and row, when, and what is wrong."""

    row: str                 # "audit row 17", "reviews row 4", "reviewers row ana"
    at: str
    what: str

    def __str__(self) -> str:
        return f"{self.row} ({self.at or 'no time'}): {self.what}"


@dataclass
class Verdict:
    rows: int = 0
    reviews: int = 0
    unsigned: int = 0
    reviewers: dict[str, str] = field(default_factory=dict)     # name -> kind
    fingerprints: dict[str, str] = field(default_factory=dict)  # name -> short name of the public key
    problem: Problem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass
class _Logged:
    row: int
    at: str
    state: str
    verdict: str
    reviewer: str
    detail: dict


class _Bad(Exception):
    def __init__(self, row: str, at: str, what: str):
        self.problem = Problem(row, at, what)


def verify_project(project: Project) -> Verdict:
    """Check the chain, every signature and the tables against the log; the first problem, if any."""
    out = Verdict()
    try:
        _verify(project, out)
    except _Bad as bad:
        out.problem = bad.problem
    return out


def _verify(project: Project, out: Verdict) -> None:
    pid = project.project_id
    registered: dict[str, tuple[str, str, int]] = {}        # name -> (public key, kind, audit row)
    logged: dict[int, _Logged] = {}
    withdrawn: dict[int, int] = {}                          # review id -> audit row
    prev, prev_id = chain.GENESIS, 0
    for row in chain.rows(project.db.conn):
        where, at = f"audit row {row['id']}", row["at"]
        what = chain.check_row(row, prev, prev_id)
        if what:
            raise _Bad(where, at, what)
        out.rows += 1
        prev, prev_id = row["hash"], row["id"]
        try:
            detail = json.loads(row["detail"] or "{}")
        except json.JSONDecodeError:
            raise _Bad(where, at, "its payload is not JSON") from None
        if not isinstance(detail, dict):
            raise _Bad(where, at, "its payload is not a JSON object")
        action, actor = row["action"], row["actor"]
        if action == "register reviewer":
            _registration(pid, row, detail, registered, where, at)
        elif action in VERDICTS and (row["target"] or "").startswith("state:") and "review" in detail:
            entry = _Logged(row["id"], at, row["target"][len("state:"):], action, actor, detail)
            if "signature" in detail:
                _signed_review(pid, row, entry, registered, where, at)
            elif registered:
                raise _Bad(where, at, f"an unsigned {action} of state {entry.state} after reviews were signed "
                                      f"(written outside the studio)")
            rid = _int(detail["review"], where, at)
            if rid in logged and rid not in withdrawn:
                raise _Bad(where, at, f"review {rid} is logged again while the review it names (audit row "
                                      f"{logged[rid].row}) still stands (written outside the studio)")
            logged[rid] = entry                 # SQLite reuses the id of a withdrawn last review
            withdrawn.pop(rid, None)
        elif action == "withdraw review":
            rid = _int(detail.get("review"), where, at)
            target = logged.get(rid)
            if target is not None and "signature" in target.detail:
                _signed_withdrawal(pid, row, detail, rid, target, registered, where, at)
            withdrawn[rid] = row["id"]
    _tables(project, out, registered, logged, withdrawn)
    _local_keys(registered)
    _witness(project, prev_id)


def _witness(project: Project, last: int) -> None:
    """The last row this user signed here must still be in the log, unchanged."""
    seen = keys.signed_row(project.project_id, project.path)
    if seen is None:
        return
    where = f"audit row {seen['row']}"
    found = project.db.execute("SELECT hash FROM audit WHERE id = ?", [seen["row"]]).fetchone()
    if found is None:
        raise _Bad(where, seen["at"], f"you signed this row, but the log now ends at row {last}: "
                                      f"rows were cut from its end (or the project was restored from an older copy)")
    if found[0] != seen["hash"]:
        raise _Bad(where, seen["at"], "you signed this row, but it now holds something else: the log was rewritten")


def _int(value, where: str, at: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise _Bad(where, at, f"its review id {value!r} is not a number") from None


def _registration(pid, row, detail, registered, where, at) -> None:
    name, kind, public = detail.get("name"), detail.get("kind"), detail.get("public_key") or ""
    if detail.get("chain") != row["prev_hash"]:
        raise _Bad(where, at, f"reviewer {name}'s key was registered at another place in the log (moved or copied)")
    if not keys.verify(public, register_message(pid, name, kind, public, row["prev_hash"]),
                       detail.get("signature") or ""):
        raise _Bad(where, at, f"the registration of reviewer {name} is not signed by the key it registers")
    if name in registered and registered[name][0] != public:
        raise _Bad(where, at, f"reviewer {name} is registered a second time with another key "
                              f"({keys.fingerprint(public)}, first {keys.fingerprint(registered[name][0])} "
                              f"at audit row {registered[name][2]})")
    registered.setdefault(name, (public, kind, row["id"]))


def _signed_review(pid, row, e: _Logged, registered, where, at) -> None:
    d = e.detail
    what = f"{e.reviewer}'s {e.verdict} of state {e.state}"
    if e.reviewer not in registered:
        raise _Bad(where, at, f"{what} is signed by {e.reviewer}, who has no key registered before this row")
    if d.get("chain") != row["prev_hash"]:
        raise _Bad(where, at, f"{what} was signed at another place in the log (moved or copied)")
    msg = review_message(pid, e.state, e.verdict, d.get("note", ""), e.reviewer, d.get("at", ""),
                         d.get("content_hash", ""), d.get("design_id", ""), d.get("visible", []), d.get("chain"))
    public = registered[e.reviewer][0]
    if not keys.verify(public, msg, d.get("signature") or ""):
        raise _Bad(where, at, f"the signature of {what} does not verify against {e.reviewer}'s key "
                              f"{keys.fingerprint(public)} (the verdict, note, state or time was changed)")


def _signed_withdrawal(pid, row, detail, rid, target: _Logged, registered, where, at) -> None:
    actor = row["actor"]
    what = f"the withdrawal of review {rid} ({target.verdict} of state {target.state})"
    if actor not in registered:
        raise _Bad(where, at, f"{what} is by {actor}, who has no key registered before this row")
    msg = withdraw_message(pid, rid, target.detail.get("signature", ""), actor, detail.get("at", ""),
                           row["prev_hash"])
    if detail.get("chain") != row["prev_hash"] or not keys.verify(registered[actor][0], msg,
                                                                   detail.get("signature") or ""):
        raise _Bad(where, at, f"{what} is not signed by {actor}'s key")


FIELDS = ("state_id", "verdict", "note", "reviewer", "at", "content_hash", "design_id", "visible",
          "chain", "signature")


def _tables(project: Project, out: Verdict, registered, logged: dict[int, _Logged], withdrawn) -> None:
    """The reviews and reviewers tables must say what the log says, row for row."""
    for r in project.db.query("SELECT * FROM reviews ORDER BY id"):
        rid, where, at = int(r["id"]), f"reviews row {r['id']}", r["at"] or ""
        what = f"{r['verdict']} of state {r['state_id']} by {r['reviewer']}"
        e = logged.get(rid)
        if e is None:
            raise _Bad(where, at, f"{what} is not in the audit log (inserted outside the studio)")
        if rid in withdrawn:
            raise _Bad(where, at, f"{what} was withdrawn at audit row {withdrawn[rid]} but is still counted")
        out.reviews += 1
        if not r["signature"] and "signature" not in e.detail:
            out.unsigned += 1
            expected = {"state_id": e.state, "verdict": e.verdict, "reviewer": e.reviewer}
        else:
            d = e.detail
            expected = {"state_id": e.state, "verdict": e.verdict, "note": d.get("note", ""),
                        "reviewer": e.reviewer, "at": d.get("at"), "content_hash": d.get("content_hash"),
                        "design_id": d.get("design_id"), "visible": json.dumps(d.get("visible", [])),
                        "chain": d.get("chain"), "signature": d.get("signature")}
        for name, value in expected.items():
            if (r[name] or "") != (value or ""):
                raise _Bad(where, at, f"{what}: its {name} differs from audit row {e.row} "
                                      f"(changed outside the studio)")
    present = {int(r[0]) for r in project.db.execute("SELECT id FROM reviews")}
    for rid, e in sorted(logged.items()):
        if rid not in present and rid not in withdrawn:
            raise _Bad(f"audit row {e.row}", e.at, f"review {rid} ({by_whom(e.reviewer)}'s {e.verdict} of state "
                                                   f"{e.state}) is missing from reviews and was never withdrawn "
                                                   f"(deleted outside the studio)")
    for r in project.db.query("SELECT * FROM reviewers ORDER BY name"):
        reg = registered.get(r["name"])
        where, at = f"reviewers row {r['name']}", r["added"] or ""
        if reg is None:
            raise _Bad(where, at, f"reviewer {r['name']} has no registration in the audit log "
                                  f"(added outside the studio)")
        if r["public_key"] != reg[0] or r["kind"] != reg[1]:
            raise _Bad(where, at, f"reviewer {r['name']}'s public key or kind differs from the one registered "
                                  f"at audit row {reg[2]} (the key was swapped)")
        out.reviewers[r["name"]] = r["kind"]
        out.fingerprints[r["name"]] = keys.fingerprint(reg[0])
    missing = sorted(set(registered) - set(out.reviewers))
    if missing:
        name = missing[0]
        raise _Bad(f"audit row {registered[name][2]}", "", f"reviewer {name} is registered in the log but "
                                                            f"missing from reviewers (deleted outside the studio)")


def _local_keys(registered) -> None:
    """A person's key in this user's config must be the one the project knows under that name."""
    for name, (public, kind, row) in sorted(registered.items()):
        if kind != "person":
            continue            # studio runs make a key per machine; only a person's name is one identity
        local = keys.local_public_key(name)
        if local is not None and local != public:
            raise _Bad(f"audit row {row}", "", f"reviewer {name}'s key in this project ({keys.fingerprint(public)}) "
                                               f"is not {name}'s key in your config ({keys.fingerprint(local)}): "
                                               f"the key was swapped, or someone else reviewed as {name}")
