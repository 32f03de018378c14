"""What the flipbook plays, Qt-free: a reel of pictures with a frame number each.

A `VideoReel` is an MP4 a render job wrote (decoded with PyAV): pictures are
decoded in order while playing, a step back or a jump seeks to the key frame
before and decodes forward, and the last few dozen pictures are kept, so
scrubbing near the playhead costs nothing. A `StillsReel` is the PNG stills of a
render, one file per frame. `Flip` is the player: which picture, playing or
not, stepping and wrapping, and the wall-clock rule that drops pictures rather
than slowing the film. Two renders of the same frame range compare picture for
picture (`compose`): side by side, or with a wipe between them."""
from __future__ import annotations

import re
from collections import OrderedDict
from fractions import Fraction
from pathlib import Path

import numpy as np

KEEP = 48                       # decoded pictures kept


class ReelError(ValueError):
    """A file the flipbook cannot show; the message names it."""


class VideoReel:
    """The pictures of one video file, numbered from `first` (the film frame of its first picture)."""

    def __init__(self, path: Path, first: int = 0):
        import av
        self.path, self.first = Path(path), int(first)
        try:
            self._container = av.open(str(self.path))
            self._stream = self._container.streams.video[0]
        except (av.error.FFmpegError, IndexError, OSError) as e:
            raise ReelError(f"{self.path}: not a video the flipbook can play ({e})") from None
        rate = self._stream.average_rate or self._stream.guessed_rate or Fraction(24)
        self.fps = float(rate)
        self._tick = 1 / (rate * self._stream.time_base)      # pts per picture
        self._start = self._stream.start_time or 0
        n = self._stream.frames
        if not n:                                            # no count in the header: count by decoding
            self._container.seek(0, stream=self._stream)
            n = sum(1 for _ in self._container.decode(self._stream))
        self.count = int(n)
        if self.count == 0:
            raise ReelError(f"{self.path}: the video has no pictures")
        self._kept: OrderedDict[int, np.ndarray] = OrderedDict()
        self._frames = None                                  # the decoder, positioned after _next - 1
        self._next = -1
        self.size = tuple(self.picture(0).shape[1::-1])      # (width, height)

    def label(self, i: int) -> str:
        return f"frame {self.first + i}"

    def picture(self, i: int) -> np.ndarray:
        """(height, width, 3) RGB of picture i."""
        if not 0 <= i < self.count:
            raise IndexError(f"picture {i} of {self.count}")
        if i in self._kept:
            self._kept.move_to_end(i)
            return self._kept[i]
        if self._frames is None or not (self._next <= i < self._next + KEEP):
            self._frames = self._decode_from(i)              # a jump: from the key frame before i
        for index, rgb in self._frames:
            self._keep(index, rgb)
            self._next = index + 1
            if index >= i:
                break
        else:
            self._frames = None                              # the decoder ran out
        if i not in self._kept:
            raise ReelError(f"{self.path}: picture {i} could not be decoded")
        return self._kept[i]

    def _keep(self, index: int, rgb: np.ndarray) -> None:
        self._kept[index] = rgb
        self._kept.move_to_end(index)
        while len(self._kept) > KEEP:
            self._kept.popitem(last=False)

    def _decode_from(self, i: int):
        """(index, rgb) from the key frame at or before picture i onward."""
        self._container.seek(int(self._start + i * self._tick), stream=self._stream, backward=True, any_frame=False)
        for frame in self._container.decode(self._stream):
            index = round((frame.pts - self._start) / self._tick) if frame.pts is not None else 0
            if index < i - KEEP:
                continue
            yield index, frame.to_ndarray(format="rgb24")

    def close(self) -> None:
        self._container.close()


class StillsReel:
    """PNG stills, one per frame, ordered by the frame number in their names."""

    def __init__(self, paths: list[Path], fps: float = 24.0):
        def number(p: Path) -> int | None:
            m = re.search(r"(\d+)$", p.stem)
            return int(m.group(1)) if m else None
        self.paths = sorted((Path(p) for p in paths), key=lambda p: (number(p) is None, number(p) or 0, p.name))
        if not self.paths:
            raise ReelError("no stills to show")
        self.numbers = [number(p) for p in self.paths]
        self.count, self.fps = len(self.paths), float(fps)

    def label(self, i: int) -> str:
        """The frame number in the file's name, else the name (a key state's still)."""
        n = self.numbers[i]
        return f"frame {n}" if n is not None else self.paths[i].stem

    def picture(self, i: int) -> Path:
        return self.paths[i]

    def close(self) -> None:
        pass


class Flip:
    """Which picture of a reel shows, and playing: looping, by the wall clock."""

    def __init__(self, count: int, fps: float):
        self.count, self.fps = count, fps
        self.index, self.playing = 0, False
        self._t0, self._i0 = 0.0, 0
        self.dropped = 0

    def step(self, n: int = 1) -> int:
        self.index = (self.index + n) % self.count
        return self.index

    def go(self, i: int) -> int:
        self.index = max(0, min(self.count - 1, int(i)))
        return self.index

    def play(self, now: float) -> None:
        self.playing, self._t0, self._i0 = True, now, self.index

    def pause(self) -> None:
        self.playing = False

    def tick(self, now: float) -> int:
        """The picture due at `now`; pictures skipped since the last tick count as dropped."""
        if not self.playing:
            return self.index
        due = (self._i0 + int((now - self._t0) * self.fps)) % self.count
        skipped = (due - self.index) % self.count - 1
        if skipped > 0:
            self.dropped += skipped
        self.index = due
        return due


RENDERS = ("preview", "film", "still")


def job_reels(project, job) -> list[tuple[str, object]]:
    """What a finished render job can show: its video (the job folder's own copy, since a later
    render replaces the delivered one), then its stills; each as (name, reel)."""
    from studio.jobs import queue
    folder = queue.job_dir(project, job.id)
    spec = job.spec or {}
    out: list[tuple[str, object]] = []
    video = spec.get("video")
    if video:
        own = folder / video
        delivered = (spec.get("deliver") or {}).get(video)
        path = own if own.exists() else (project.path / delivered if delivered else None)
        if path is not None and path.exists():
            out.append((f"video {path.name}", VideoReel(path, first=int(spec.get("frame_start", 0)))))
    deliver = spec.get("deliver") or {}

    def found(rel: str) -> Path:              # the job folder's copy, else where it was delivered
        own = folder / rel
        return own if own.exists() or rel not in deliver else project.path / deliver[rel]
    stills = sorted(p for rel in job.outputs for p in [found(rel)] if p.suffix == ".png" and p.exists())
    if stills:
        out.append((f"stills ({len(stills)})", StillsReel(stills, fps=float(project.fps))))
    return out


def latest_render(project):
    """The newest render job that finished with something to show, or None."""
    from studio.jobs import queue
    for job in reversed(queue.list_jobs(project, ("succeeded",))):
        if job.kind in RENDERS and (job.spec.get("video") or any(r.endswith(".png") for r in job.outputs)):
            return job
    return None


COMPARE_MODES = ("off", "side by side", "wipe")


def same_size(b: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`b` resampled (nearest) to `shape`'s height and width, so two renders line up picture for picture."""
    h, w = shape[:2]
    if b.shape[:2] == (h, w):
        return b
    ys = (np.arange(h) * b.shape[0] / h).astype(int)
    xs = (np.arange(w) * b.shape[1] / w).astype(int)
    return b[ys][:, xs]


def compose(a: np.ndarray, b: np.ndarray, mode: str, split: float = 0.5) -> np.ndarray:
    """Two pictures of the same frame: side by side, or a wipe (a left of `split`, b right of it,
    with a line where they meet)."""
    b = same_size(b, a.shape)
    if mode == "side by side":
        gap = np.full((a.shape[0], 4, 3), 240, np.uint8)
        return np.ascontiguousarray(np.hstack([a, gap, b]))
    if mode == "wipe":
        out = a.copy()
        x = int(round(min(max(split, 0.0), 1.0) * a.shape[1]))
        out[:, x:] = b[:, x:]
        out[:, max(0, x - 1):x + 1] = (240, 200, 8)
        return out
    return a


def render_range(job) -> tuple[int, int] | None:
    spec = job.spec or {}
    if not spec.get("video") or "frame_start" not in spec:
        return None
    return int(spec["frame_start"]), int(spec.get("frame_end", spec["frame_start"]))


def comparable_renders(project, job) -> list:
    """Other finished renders with a video of the same frame range as `job`, newest first."""
    from studio.jobs import queue
    mine = render_range(job)
    if mine is None:
        return []
    return [j for j in reversed(queue.list_jobs(project, ("succeeded",)))
            if j.id != job.id and j.kind in RENDERS and render_range(j) == mine]


def video_reel(project, job) -> VideoReel | None:
    """The video reel of a render job (None if it left none)."""
    return next((r for name, r in job_reels(project, job) if isinstance(r, VideoReel)), None)
