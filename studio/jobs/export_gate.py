"""The export gate: the film leaves the studio only when every storyboard
state is approved and current (the storyboard gate's `board_status`), every
baked segment was baked against the states as they are now, and the film's
required checks pass on the very tracks being exported (the current film
hash). With exceptions it leaves together with a delivery report that lists
each unapproved state and each failing check with its evidence. The CLI's
`studio export` and the window's File › Export both ask this gate."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from studio.scene.io import load_scene
from studio.store.project import Project, now, write_atomic
from studio.store.reports import Report, failing_required, load_reports
from studio.timeline.bake import bounds_hash
from studio.timeline.film import film_hash, list_segments, load_film_tracks
from studio.timeline.gate import board_status
from studio.timeline.split import stale_reason


@dataclass
class GateResult:
    ok: bool
    reasons: list[str] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    tracks_hash: str | None = None
    states: list[dict] = field(default_factory=list)     # unapproved states: {state, status, reasons}


def film_gate(project: Project) -> GateResult:
    """May the current film be exported: storyboard approved and current, film checks passing?"""
    tracks = load_film_tracks(project)
    if tracks is None:
        return GateResult(False, ["no baked tracks: there is no film to export yet"])
    scene = load_scene(project)
    states = [{"state": st.state_id, "status": st.status, "reasons": st.reasons}
              for st in board_status(project, scene) if not st.ok]
    reasons = [f"state {st['state']}: {st['reasons'][0]}" for st in states]
    reasons += [f"segment {r['segment']}: {stale_reason(r['bounds_hash'])}"
                for r in list_segments(project) if r["bounds_hash"] != bounds_hash(project, r["segment"], scene)]
    reports, checked = load_reports(project, "film")
    h = film_hash(project)          # tracks, design and plan, as the verifiers bind their reports
    if not reports:
        reasons.append("no film reports: run `studio verify` on the film first")
    elif checked != h:
        reasons.append(f"the film reports were computed for other tracks ({(checked or '?')[:12]}, "
                       f"the film is now {h[:12]}): verify again")
    else:
        reasons += failing_required(reports)
    return GateResult(not reasons, reasons, reports, h, states)


def write_delivery_report(folder: Path, gate: GateResult, outputs: list[str],
                          failed: list[dict] | None = None, signals: dict | None = None,
                          review: dict | None = None) -> tuple[Path, Path]:
    """delivery-report.json and .md beside the outputs, listing each failing check and its evidence,
    and each output whose export failed ({output, error}), so a partial delivery is never unreported.
    `signals` (completion, progress, coverage; from studio.checks.signals, which the caller reads)
    are reported side by side, never blended; `review` (jobs/review_report.review_data) adds each
    shot's status and the notes."""
    failing_names = {r.split(":")[0] for r in gate.reasons}
    checks = [r.to_dict() for r in gate.reports if r.name in failing_names]
    failed = list(failed or [])
    data = {"at": now(), "exported_with_exceptions": True, "tracks_hash": gate.tracks_hash,
            "outputs": outputs, "failed_exports": failed, "reasons": gate.reasons,
            "unapproved_states": gate.states, "failing_checks": checks, "signals": signals,
            **({"shots": review["shots"], "notes": review["notes"]} if review else {})}
    folder = Path(folder)
    jpath, mpath = folder / "delivery-report.json", folder / "delivery-report.md"
    write_atomic(jpath, json.dumps(data, indent=1, sort_keys=True).encode())
    lines = ["# Delivery report", "", "Exported with exceptions: the storyboard states and required checks "
             "below do not pass.", "", f"Outputs: {', '.join(outputs)}", f"Tracks: {gate.tracks_hash}", ""]
    if signals:
        comp, prog, cov = signals["completion"], signals["progress"], signals["coverage"]
        lines += ["## Three signals", "",
                  f"- Completion: {'yes' if comp['required_checks_pass'] else 'no'} ({comp['text']})",
                  f"- Progress: {prog['value']:.0%}" + (f" (next: {prog['missing'][0]})" if prog["missing"] else ""),
                  f"- Coverage: film {cov['film_frames_checked']}/{cov['film_frames']} frames × "
                  f"{len(cov['film_checks'])} checks; states {cov['states_checked']}/{cov['states']} checked",
                  *[f"  - not certified: {u}" for u in cov["not_certified"]], ""]
    if review and review["shots"]:
        lines += ["## Shots", ""] + [f"- **{r['shot']}** {r['frames'][0]}–{r['frames'][1]}: {r['status_words']}"
                                     + (f" ({r['note']})" if r["note"] else "") for r in review["shots"]] + [""]
    if review and review["notes"]:
        lines += [f"{len(review['notes'])} review note(s): see review-report.md beside this report.", ""]
    if failed:
        lines += ["Failed exports:", ""] + [f"- {f['output']}: {f['error']}" for f in failed] + [""]
    if gate.states:
        lines += ["## Storyboard states not approved and current", ""]
        lines += [f"- **{st['state']}** ({st['status']}): {'; '.join(st['reasons'])}" for st in gate.states]
        lines += ["", "## Gate reasons", ""]
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
