"""A document read again (the window reads the plan after every commit) is not checked again,
and is the same document; a refused one is refused every time, and stricter limits still refuse."""
import json

import pytest

from studio.store import json_reading
from studio.store.json_reading import JsonRefused, Limits, loads


def plan_text(n_shots: int = 40) -> str:
    """A plan as the studio stores it: shots named for what they show, over 2 KB."""
    shots = [{"id": f"carry_through_door_{i}", "camera": f"cam_door_{i % 3}", "start": 1001 + 24 * i,
              "end": 1024 + 24 * i, "focus": [0.25 * i, -1.5, 0.9]} for i in range(n_shots)]
    return json.dumps({"shots": shots, "motion": [{"segment": "lift..carry", "tool": "interpolate"}]},
                      sort_keys=True)


def test_a_document_read_twice_is_the_same_document_and_a_fresh_object(monkeypatch):
    text = plan_text()
    first = loads(text, "plan")
    calls = []
    monkeypatch.setattr(json_reading, "_check_depth", lambda *a: calls.append(a))
    second = loads(text, "plan")
    assert second == first and second is not first
    assert calls == []                                   # the checks were not walked again
    second["shots"].clear()
    assert loads(text, "plan")["shots"][0]["id"] == "carry_through_door_0"   # a caller's edit stays its own


def test_a_refused_document_is_refused_on_every_read():
    text = plan_text()[:-1] + ', "bad": NaN}'
    for _ in range(2):
        with pytest.raises(JsonRefused, match="not a JSON number"):
            loads(text, "plan")


def test_a_document_passed_under_generous_limits_is_still_refused_under_strict_ones():
    text = plan_text()
    loads(text, "plan")
    with pytest.raises(JsonRefused, match="nested deeper than 2 levels"):
        loads(text, "plan", Limits(max_depth=2))


def test_a_number_read_through_the_long_literal_hook_is_read_through_it_every_time():
    long = "0." + "3" * 500
    text = plan_text()[:-1] + f', "weight": {long}}}'
    a, b = loads(text, "plan"), loads(text, "plan")
    assert a["weight"] == b["weight"] == float(long[:400])
    assert (text, json_reading.DEFAULT) not in json_reading._PASSED
