"""The flipbook's reels without a window: a real H.264 file decoded picture by picture, in order,
backwards and by jumps; stills ordered by frame number; playback by the wall clock drops pictures."""
from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from studio.ui.flipbook import Flip, ReelError, StillsReel, VideoReel

N = 60


def shade(i: int) -> tuple[int, int, int]:
    return (4 * i, 255 - 4 * i, (37 * i) % 256)


def write_mp4(path: Path, n: int = N, fps: int = 24) -> Path:
    """n pictures, each one flat colour, keyframes every 12 (as a film encoder would space them)."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.codec_context.gop_size = 12
        stream.options = {"crf": "10"}
        for i in range(n):
            img = np.empty((48, 64, 3), np.uint8)
            img[:] = shade(i)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def close_to(rgb: np.ndarray, i: int) -> bool:
    return bool(np.abs(rgb[24, 32].astype(int) - np.array(shade(i))).max() <= 8)


def test_a_video_reel_gives_every_picture_in_order_and_by_jumps(tmp_path):
    reel = VideoReel(write_mp4(tmp_path / "preview.mp4"), first=1010)
    assert reel.count == N and reel.fps == pytest.approx(24) and reel.size == (64, 48)
    assert all(close_to(reel.picture(i), i) for i in range(N))            # played through
    assert all(close_to(reel.picture(i), i) for i in range(N - 1, -1, -1))  # stepped back
    for i in (41, 3, 59, 12, 11, 30):                                     # jumps past the kept pictures
        assert close_to(reel.picture(i), i), i
    assert reel.label(0) == "frame 1010" and reel.label(N - 1) == f"frame {1010 + N - 1}"
    with pytest.raises(IndexError):
        reel.picture(N)
    reel.close()


def test_a_file_that_is_not_a_video_is_refused_naming_it(tmp_path):
    bad = tmp_path / "preview.mp4"
    bad.write_bytes(b"not a video at all" * 50)
    with pytest.raises(ReelError, match="preview.mp4: not a video the flipbook can play"):
        VideoReel(bad)


def test_stills_are_ordered_by_their_frame_numbers(tmp_path):
    paths = [tmp_path / f"{f:06d}.png" for f in (1012, 1010, 1011)]
    for p in paths:
        p.write_bytes(b"")
    reel = StillsReel(paths)
    assert [reel.label(i) for i in range(3)] == ["frame 1010", "frame 1011", "frame 1012"]
    assert reel.picture(2).name == "001012.png"
    (tmp_path / "lift_main.png").write_bytes(b"")
    assert StillsReel([*paths, tmp_path / "lift_main.png"]).label(3) == "lift_main"   # a key state's still
    with pytest.raises(ReelError):
        StillsReel([])


def test_playing_drops_pictures_by_the_wall_clock_and_loops():
    flip = Flip(count=10, fps=24)
    flip.step(-1)
    assert flip.index == 9                       # stepping wraps
    flip.go(0)
    flip.play(now=100.0)
    assert flip.tick(100.0 + 1 / 24) == 1 and flip.dropped == 0
    assert flip.tick(100.0 + 4.2 / 24) == 4 and flip.dropped == 2     # a slow tick: 2 and 3 dropped
    assert flip.tick(100.0 + 11.1 / 24) == 1                          # looped
    flip.pause()
    assert flip.tick(200.0) == 1
