"""Job logs read as sentences; hashes stay in the details (headless)."""
from __future__ import annotations

import json

from studio.ui.job_log import log_sentences

SHA = "9f2c" * 16


def test_worker_lines_become_sentences_without_hashes():
    lines = [{"stage": "build", "message": "building scene doorway"},
             {"stage": "frame", "frame": 1012, "of": 48, "done": 12, "output": "frames/001012.png", "sha256": SHA},
             {"stage": "still", "state": "s1", "camera": "wide", "output": "out/stills/s1_wide.png", "sha256": SHA},
             {"stage": "encode", "output": "out/preview.mp4", "sha256": SHA, "message": "video written"},
             {"stage": "done", "message": "finished in 12.30 s", "outputs": {"out/preview.mp4": SHA}},
             {"stage": "error", "message": "camera 'side' is not in the scene"}]
    text = "\n".join(json.dumps(e) for e in lines) + "\nTraceback (most recent call last):\n" + SHA + "\n"
    got = log_sentences(text)
    assert got == ["building scene doorway", "frame 1012 rendered (12 of 48)", "still of s1 through wide rendered",
                   "video out/preview.mp4 written", "finished in 12.30 s",
                   "failed: camera 'side' is not in the scene"]
    assert not any(SHA[:16] in s for s in got)


def test_bake_lines_and_plain_lines():
    text = "\n".join([json.dumps({"stage": "start", "segments": 2}),
                      json.dumps({"stage": "segment", "segment": "a..b", "tool": "interpolate", "done": 1, "total": 2}),
                      f"resumed with tracks {SHA}"])
    assert log_sentences(text) == ["baking 2 segments", "segment a..b baked by interpolate (1 of 2)",
                                   f"resumed with tracks {SHA[:8]}…"]
