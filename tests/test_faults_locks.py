"""A write kept waiting by another process's transaction says so after 2 s,
naming that process, and gives up at the limit with exit 3 naming it again;
a holder that lets go in time only delays the write."""
from __future__ import annotations

import subprocess
import sys
import threading
import time

from faults_files import STUDIO
from jobs_scenes import film_project
from studio.store.project import Project
from studio.timeline.reviews import latest_review

HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT OR REPLACE INTO meta VALUES ('held', 'yes')")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def hold_lock(project, seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(project.path / "studio.db"), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    return holder


def timed_stderr(args: list[str], env: dict) -> tuple[int, list[tuple[float, str]]]:
    """Run studio; each stderr line with the seconds since the command started."""
    import os
    t0 = time.monotonic()
    proc = subprocess.Popen([STUDIO, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **env})
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(target=lambda: [lines.append((time.monotonic() - t0, line.rstrip()))
                                              for line in proc.stderr])
    reader.start()
    code = proc.wait(timeout=120)
    reader.join(10)
    return code, lines


def test_a_held_lock_is_named_after_2_s_and_given_up_at_the_limit_with_exit_3(tmp_project):
    film_project(tmp_project, n_frames=4)
    holder = hold_lock(tmp_project, 60)
    try:
        code, lines = timed_stderr(["board", "reject", tmp_project.path, "a", "--note", "later"],
                                   {"KEYPOSE_LOCK_WAIT": "5"})
    finally:
        holder.kill()
        holder.wait()
    assert code == 3
    assert len(lines) == 2 and "Traceback" not in " ".join(t for _, t in lines)
    (t_wait, waiting), (t_gave_up, gave_up) = lines
    assert f"waiting for another studio writing this project (pid {holder.pid}" in waiting
    assert t_wait >= 2.0                                  # it waited two seconds before saying so
    assert f"pid {holder.pid}" in gave_up and "gave up waiting" in gave_up and "5 s" in gave_up
    assert t_gave_up >= 5.0
    with Project.open(tmp_project.path) as p:
        assert latest_review(p, "a") is None and p.meta("held") is None   # neither write landed


def test_a_holder_that_lets_go_in_time_only_delays_the_write(tmp_project):
    film_project(tmp_project, n_frames=4)
    holder = hold_lock(tmp_project, 9)
    try:
        code, lines = timed_stderr(["board", "reject", tmp_project.path, "a", "--note", "later"],
                                   {"KEYPOSE_LOCK_WAIT": "60"})
    finally:
        holder.wait(30)
    assert code == 0, lines
    assert [f"pid {holder.pid}" in t for _, t in lines] == [True]
    with Project.open(tmp_project.path) as p:
        review = latest_review(p, "a")
        assert review is not None and review.verdict == "reject" and p.meta("held") == "yes"
