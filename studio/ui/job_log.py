"""A job's log as sentences a person reads: the worker's JSON progress lines
become "frame 1012 rendered (12 of 48)", "finished in 12.3 s"; hashes, paths
and tracebacks stay in the raw log, shown only in the details pane. Qt-free."""
from __future__ import annotations

import json
import re

HASH = re.compile(r"\b[0-9a-f]{16,}\b")


def _of(e: dict, n_key: str = "frame") -> str:
    done, total = e.get("done"), e.get("of") or e.get("total")
    if isinstance(done, int) and isinstance(total, int):
        return f" ({done} of {total})"
    return f" (of {total})" if isinstance(total, int) else ""


def sentence(e: dict) -> str | None:
    """One worker event as a sentence, or None if it says nothing a person needs."""
    stage, msg = str(e.get("stage", "")), str(e.get("message", "") or "")
    if stage == "frame":
        return f"frame {e.get('frame')} rendered{_of(e)}"
    if stage == "still":
        return f"still of {e.get('state')} through {e.get('camera')} rendered"
    if stage == "done":
        return msg or "finished"
    if stage == "error":
        return f"failed: {msg}" if msg else "failed"
    if stage == "start" and "segments" in e:
        n = e["segments"]
        return f"baking {n} segment{'s' if n != 1 else ''}"
    if stage == "segment":
        return f"segment {e.get('segment')} baked by {e.get('tool')}{_of(e)}"
    if stage == "output":
        return f"{e.get('output')} written"
    if stage == "encode" and e.get("output"):
        return f"video {e['output']} written"
    if stage == "blend":
        return f".blend {e.get('output', '')} saved".replace("  ", " ")
    if msg:
        return f"{stage}: {msg}" if stage and stage not in ("build", "encode", "farm") else msg
    return None


def log_sentences(text: str) -> list[str]:
    """The log's lines as sentences; a plain line is kept unless it is only a hash or a trace."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            e = json.loads(line)
        except ValueError:
            e = None
        if isinstance(e, dict):
            s = sentence(e)
        elif line.startswith(("Traceback", "File ", "  File")) or HASH.fullmatch(line):
            s = None
        else:
            s = HASH.sub(lambda m: m.group(0)[:8] + "…", line)
        if s and (not out or out[-1] != s):
            out.append(s)
    return out
