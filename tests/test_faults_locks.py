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
sys.stdin.readline()                     # until the test says "let go" (or closes the pipe)
conn.execute("COMMIT")
"""


def hold_lock(project) -> subprocess.Popen:
    """A process holding the project's write lock until a line is written to its stdin."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(project.path / "studio.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    return holder


def timed_stderr(args: list[str], env: dict, on_line=None) -> tuple[int, list[tuple[float, str]]]:
    """Run studio; each stderr line with the seconds since the command started (`on_line` sees each)."""
    import os
    t0 = time.monotonic()
    proc = subprocess.Popen([STUDIO, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **env})
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append((time.monotonic() - t0, line.rstrip()))
            if on_line:
                on_line(line)
    reader = threading.Thread(target=read)
    reader.start()
    code = proc.wait(timeout=120)
    reader.join(10)
    return code, lines


def test_a_held_lock_is_named_after_2_s_and_given_up_at_the_limit_with_exit_3(tmp_project):
    film_project(tmp_project, n_frames=4)
    holder = hold_lock(tmp_project)
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
    holder = hold_lock(tmp_project)

    def let_go(line: str) -> None:        # once the studio says it waits, the holder finishes its write
        if "waiting for another studio" in line:
            holder.stdin.write("let go\n")
            holder.stdin.flush()
    try:
        code, lines = timed_stderr(["board", "reject", tmp_project.path, "a", "--note", "later"],
                                   {"KEYPOSE_LOCK_WAIT": "600"}, on_line=let_go)
    finally:
        holder.wait(60)
    assert code == 0, lines
    assert [f"pid {holder.pid}" in t for _, t in lines] == [True]
    with Project.open(tmp_project.path) as p:
        review = latest_review(p, "a")
        assert review is not None and review.verdict == "reject" and p.meta("held") == "yes"
