"""The export gate: the film leaves the studio only when its required checks
pass on the very tracks being exported, or, with exceptions, together with a
delivery report that lists each failing check and its evidence."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from studio.store.project import Project, now, write_atomic
from studio.store.reports import Report, failing_required, load_reports
from studio.timeline.film import film_hash, load_film_tracks


@dataclass
class GateResult:
    ok: bool
    reasons: list[str] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    tracks_hash: str | None = None


def film_gate(project: Project) -> GateResult:
    """Do the stored film reports allow export of the current tracks?"""
    tracks = load_film_tracks(project)
    if tracks is None:
        return GateResult(False, ["no baked tracks: there is no film to export yet"])
    reports, checked = load_reports(project, "film")
    h = film_hash(project)          # tracks, design and plan, as the verifiers bind their reports
    if not reports:
        return GateResult(False, ["no film reports: run `studio verify` on the film first"], [], h)
    if checked != h:
        return GateResult(False, [f"the film reports were computed for other tracks ({(checked or '?')[:12]}, "
                                  f"the film is now {h[:12]}): verify again"], reports, h)
    failing = failing_required(reports)
    return GateResult(not failing, failing, reports, h)


def write_delivery_report(folder: Path, gate: GateResult, outputs: list[str]) -> tuple[Path, Path]:
    """delivery-report.json and .md beside the outputs, listing each failing check and its evidence."""
    failing_names = {r.split(":")[0] for r in gate.reasons}
    checks = [r.to_dict() for r in gate.reports if r.name in failing_names]
    data = {"at": now(), "exported_with_exceptions": True, "tracks_hash": gate.tracks_hash,
            "outputs": outputs, "reasons": gate.reasons, "failing_checks": checks}
    folder = Path(folder)
    jpath, mpath = folder / "delivery-report.json", folder / "delivery-report.md"
    write_atomic(jpath, json.dumps(data, indent=1, sort_keys=True).encode())
    lines = ["# Delivery report", "", "Exported with exceptions: the required checks below do not pass.", "",
             f"Outputs: {', '.join(outputs)}", f"Tracks: {gate.tracks_hash}", ""]
    for reason in gate.reasons:
        lines.append(f"- **{reason}**")
        for r in checks:
            if reason.startswith(r["name"]):
                for ev in r["evidence"][:20]:
                    lines.append(f"  - {json.dumps(ev, sort_keys=True)}")
                if len(r["evidence"]) > 20:
                    lines.append(f"  - … {len(r['evidence']) - 20} more in delivery-report.json")
    write_atomic(mpath, ("\n".join(lines) + "\n").encode())
    return jpath, mpath
