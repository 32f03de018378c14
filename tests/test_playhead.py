"""The playhead's timeline moves, headless: in/out, Home/End, keys and failures, J/K/L,
and wall-clock playback that drops frames rather than slowing."""
from __future__ import annotations

import pytest

from studio.ui.playhead import PlaybackClock, Playhead


def test_in_out_bounds_playback_and_a_range_outside_the_timeline_is_refused():
    ph = Playhead(1001, 1100)
    ph.set_in_out(1010, 1020)
    ph.home()
    assert ph.frame == 1010
    ph.end()
    assert ph.frame == 1020
    ph.set_playing(True)
    ph.step(1)                                      # wraps inside in/out while playing
    assert ph.frame == 1010
    with pytest.raises(ValueError, match=r"expected frames within 1001\.\.1100"):
        ph.set_in_out(990, 1020)
    with pytest.raises(ValueError, match="in 1030 is after out 1020"):
        ph.set_in_out(1030, 1020)
    assert ph.in_out == (1010, 1020)
    ph.clear_in_out()
    ph.end()
    assert ph.frame == 1100


def test_keys_and_failures_step_to_the_nearest_either_side():
    ph = Playhead(1, 100)
    ph.set_frame(50)
    assert ph.jump([10, 40, 60, 90], +1) and ph.frame == 60
    assert ph.jump([10, 40, 60, 90], -1) and ph.frame == 40
    ph.set_frame(95)
    assert not ph.jump([10, 40, 60, 90], +1) and ph.frame == 95


def test_shuttle_speeds_up_each_press_and_k_stops():
    ph = Playhead(1, 100)
    ph.shuttle(+1)
    assert ph.playing and ph.rate == 1
    ph.shuttle(+1)
    ph.shuttle(+1)
    assert ph.rate == 4
    ph.shuttle(-1)
    assert ph.rate == -1
    ph.shuttle(0)
    assert not ph.playing and ph.rate == 1


def test_a_slow_machine_drops_frames_and_keeps_the_film_in_time():
    ph = Playhead(1, 1000, fps=24)
    ph.set_playing(True)
    clock = PlaybackClock(ph)
    clock.start(0.0)
    t = 0.0
    for _ in range(24):                             # each frame takes 100 ms to draw: 10 drawn a second
        t += 0.1
        clock.tick(t)
    assert ph.frame == 1 + int(2.4 * 24)            # 2.4 s of film shown in 2.4 s
    assert clock.shown == 24 and clock.dropped == int(2.4 * 24) - 24
    assert clock.fps(t) == pytest.approx(10.0)


def test_playing_backwards_at_twice_the_speed():
    ph = Playhead(1, 100, fps=10)
    ph.set_frame(50)
    ph.shuttle(-1)
    ph.shuttle(-1)
    clock = PlaybackClock(ph)
    clock.start(0.0)
    clock.tick(1.0)
    assert ph.frame == 30 and clock.dropped == 19
