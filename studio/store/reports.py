"""Verifier reports and the rule for what passes.

A report is {name, verdict, evidence[], metrics, seconds}. The four required
verifiers must all be present and pass (or be not_applicable, which only a
verifier with an empty target set may say); a missing, crashed or errored
check fails the film. Reports are stored with the hash of what they checked,
so a report about an older state or film is recognisable as stale.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studio.store.json_reading import stored

if TYPE_CHECKING:
    from studio.store.project import Project

REQUIRED = ("AnimationWellFormed", "JointLimits", "NoPenetration", "EventsSatisfied")
ADVISORY = ("Supported", "Continuity", "SupportMargin", "ContactSlip")
VERDICTS = ("pass", "fail", "not_applicable", "error")


@dataclass
class Report:
    name: str
    verdict: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        """As plain data (each evidence row copied once, not walked field by field: a film's report
        may hold thousands)."""
        return {"name": self.name, "verdict": self.verdict, "evidence": [dict(e) for e in self.evidence],
                "metrics": dict(self.metrics), "seconds": self.seconds}

    @classmethod
    def from_dict(cls, d: dict) -> "Report":
        return cls(d["name"], d["verdict"], list(d.get("evidence", [])), dict(d.get("metrics", {})),
                   float(d.get("seconds", 0.0)))


def required_checks_pass(reports: list[Report]) -> bool:
    by_name = {r.name: r for r in reports}
    return all(n in by_name and by_name[n].verdict in ("pass", "not_applicable") for n in REQUIRED)


def failing_required(reports: list[Report]) -> list[str]:
    """Names of required checks that are missing or do not pass, each with why."""
    by_name = {r.name: r for r in reports}
    out = []
    for n in REQUIRED:
        r = by_name.get(n)
        if r is None:
            out.append(f"{n}: missing")
        elif r.verdict not in ("pass", "not_applicable"):
            out.append(f"{n}: {r.verdict}")
    return out


def save_reports(project: Project, target: str, reports: list[Report], checked_hash: str,
                 actor: str = "studio") -> None:
    """Replace the stored reports of `target` (e.g. 'state:reach', 'film', 'segment:a..b')."""
    from studio.store.project import now
    with project.transaction():
        project.db.execute("DELETE FROM reports WHERE target = ?", [target])
        project.db["reports"].insert_all([{
            "target": target, "name": r.name, "verdict": r.verdict,
            "evidence": json.dumps(r.evidence), "metrics": json.dumps(r.metrics),
            "seconds": r.seconds, "checked_hash": checked_hash, "at": now()} for r in reports])
        project.audit(actor, "verify", target, {r.name: r.verdict for r in reports})


def load_reports(project: Project, target: str) -> tuple[list[Report], str | None]:
    """The stored reports of `target` and the hash they checked (None if never run)."""
    rows = list(project.db.query("SELECT * FROM reports WHERE target = ? ORDER BY id", [target]))
    db = project.path / "studio.db"
    reports = [Report(r["name"], r["verdict"], stored(r["evidence"], db, "reports", r["id"], "evidence", []),
                      stored(r["metrics"], db, "reports", r["id"], "metrics", {}), r["seconds"] or 0.0) for r in rows]
    return reports, (rows[0]["checked_hash"] if rows else None)


def report_lines(project: Project, target: str) -> tuple[list[tuple[str, str, int, float]], str | None]:
    """(name, verdict, evidence count, seconds) of each stored report of `target`, and the hash
    they checked: what a table of verdicts shows, without reading the evidence itself."""
    rows = project.db.execute("SELECT name, verdict, json_array_length(evidence), seconds, checked_hash "
                              "FROM reports WHERE target = ? ORDER BY id", [target]).fetchall()
    return [(r[0], r[1], int(r[2] or 0), float(r[3] or 0.0)) for r in rows], (rows[0][4] if rows else None)
