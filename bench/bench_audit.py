"""Signed reviews and the chained audit log: what they cost.

1. Per review: a signed, chained review (reviewer key looked up, Ed25519
   signature, chained audit row, the reviewer's last-signed-row record) against
   the same review stored the old way (a plain reviews row and a plain audit
   insert), side by side on one project.
2. `studio audit verify` on a project with 10,000 audit rows (and the reviews
   among them), against reading and parsing the same rows without checking
   anything (the baseline any audit display pays).
Keys live in a temporary config folder, never the user's.
Run: .venv/bin/python bench/bench_audit.py [ROWS]
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="bench-audit-config-")

from timeline_scenes import arm_states  # noqa: E402

from studio.scene.meshes import scene_design_id  # noqa: E402
from studio.store.project import Project, now  # noqa: E402
from studio.timeline.reviews import record_review  # noqa: E402
from studio.timeline.storyboard import content_hash  # noqa: E402
from studio.timeline.trust import verify_project  # noqa: E402

REVIEWS = 300


def arm_project(folder: Path) -> tuple[Project, object]:
    project = Project.create(folder)
    return project, arm_states(project)


def plain_review(project: Project, scene, state_id: str, verdict: str, note: str, reviewer: str) -> None:
    """A review as stored before signing: one reviews row, one unchained audit row."""
    from studio.timeline.reviews import state_visible
    from studio.timeline.plan import load_plan
    from studio.timeline.storyboard import get_state
    state = get_state(project, state_id)
    visible = state_visible(project, scene, load_plan(project), state)
    row = {"state_id": state_id, "verdict": verdict, "note": note, "reviewer": reviewer, "at": now(),
           "content_hash": content_hash(scene, state.pose, state.frame), "design_id": scene_design_id(scene),
           "visible": json.dumps(visible)}
    with project.transaction():
        rid = project.db["reviews"].insert(row).last_pk
        project.db["audit"].insert({"at": now(), "actor": reviewer, "action": verdict, "target": f"state:{state_id}",
                                    "detail": json.dumps({"review": rid, "note": note, "visible": visible})})


def per_review(tmp: Path) -> None:
    signed_project, scene = arm_project(tmp / "signed")
    plain_project, plain_scene = arm_project(tmp / "plain")
    record_review(signed_project, "rest", "approve", "warm-up", "ana", scene)    # key made once, outside timing
    signed, plain = [], []
    for i in range(REVIEWS):
        verdict = "approve" if i % 2 else "reject"
        t0 = time.perf_counter()
        plain_review(plain_project, plain_scene, "bent", verdict, f"note {i}", "ana")
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        record_review(signed_project, "bent", verdict, f"note {i}", "ana", scene)
        signed.append(time.perf_counter() - t0)
    s, p = statistics.median(signed) * 1e3, statistics.median(plain) * 1e3
    print(f"per review ({REVIEWS} reviews, median): signed+chained {s:.2f} ms, plain {p:.2f} ms, "
          f"ratio {s / p:.2f}x (extra {s - p:.2f} ms)")
    signed_project.close()
    plain_project.close()


def verify_cost(tmp: Path, rows: int) -> None:
    project, scene = arm_project(tmp / "big")
    with project.transaction():
        for i in range(REVIEWS):
            record_review(project, ("rest", "bent", "back")[i % 3], "approve" if i % 4 else "reject",
                          f"review {i}", ("ana", "ben", "batch")[i % 3], scene)
        n = project.db.execute("SELECT count(*) FROM audit").fetchone()[0]
        for i in range(rows - n):
            project.audit("person", "set pose", f"state:{('rest', 'bent', 'back')[i % 3]}",
                          {"frame": 1001 + i % 48, "elbow": round(i * 1e-3, 3)})
    total = project.db.execute("SELECT count(*) FROM audit").fetchone()[0]
    reviews = project.db.execute("SELECT count(*) FROM reviews").fetchone()[0]

    def verify():
        v = verify_project(project)
        assert v.ok, v.problem

    def baseline():
        for r in project.db.execute("SELECT id, at, actor, action, target, detail FROM audit ORDER BY id"):
            json.loads(r[5])
        list(project.db.query("SELECT * FROM reviews ORDER BY id"))

    tv = min(_timed(verify) for _ in range(5))
    tb = min(_timed(baseline) for _ in range(5))
    print(f"audit verify: {total} audit rows, {reviews} signed reviews: {tv * 1e3:.1f} ms; "
          f"read+parse only {tb * 1e3:.1f} ms; ratio {tv / tb:.1f}x")
    project.close()


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as d:
        per_review(Path(d))
        verify_cost(Path(d), rows)


if __name__ == "__main__":
    main()
