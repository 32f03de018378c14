"""What checking holds costs: EventsSatisfied on each committed example film with the holds its
motion tools recorded (every frame, and between frames by halving where the drift bends), against
the same check on the same prepared footage without the holds, side by side; and the hold check
alone in held frames per second. Nothing is written to the projects.
Run: .venv/bin/python bench/bench_holds.py [N] [FILM ...]
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from studio.checks import events
from studio.checks.footage import Footage
from studio.checks.holds import drift_of, holds_of
from studio.checks.run import tool_attachments
from studio.scene.io import load_scene
from studio.scene.meshes import scene_meshes
from studio.store.project import Project
from studio.timeline.film import load_film_tracks

ROOT = Path(__file__).resolve().parents[1]
FILMS = ("doorway", "dog_paper", "shelving", "crates", "marble_run")


def best(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv and argv[0].isdigit() else 5
    films = [a for a in argv if not a.isdigit()] or list(FILMS)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in films:
        with Project.open(ROOT / "projects" / name) as p:
            scene, tracks, plan = load_scene(p), load_film_tracks(p), p.get_doc("plan")
            records = tool_attachments(p)
            meshes = scene_meshes(scene, p.path)
        film = Footage.build(scene, meshes, tracks, plan=plan)
        events.verify(film)                      # contacts measured once, as in one verify run

        def run(with_holds: bool):
            film.extra.pop("holds", None)
            film.extra.pop("events", None)
            film.extra["attachments"] = records if with_holds else []
            return events.verify(film)
        t_with, t_without = best(lambda: run(True), n), best(lambda: run(False), n)
        holds = holds_of(records)
        held = sum(h.last - h.first + 1 for h in holds)
        t_holds = best(lambda: [drift_of(film, h) for h in holds], n) if holds else 0.0
        rate = f"{held / t_holds:,.0f} held frames/s" if holds else "no holds"
        print(f"{name:<12} {tracks.n_frames:>5} frames, {len(holds)} holds over {held} frames: EventsSatisfied "
              f"{t_with * 1000:.1f} ms with holds, {t_without * 1000:.1f} ms without (ratio "
              f"{t_with / max(t_without, 1e-9):.2f}); holds alone {t_holds * 1000:.1f} ms, {rate}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
