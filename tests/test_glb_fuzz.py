"""Randomly mutated films (values of the wrong type or range put anywhere in the JSON, bytes of the BIN chunk
overwritten): `studio verify` answers each with a verdict (0 or 1) or a one-line refusal naming the file (2),
never an unforeseen fault (3)."""
from __future__ import annotations

import contextlib
import copy
import io
import random

from glb_corpus import base
from glb_films import pack
from studio.cli import main

VALUES = [0, 1, 2, 3, -1, 7, 2 ** 31, 2 ** 40, 1.5, -0.0, 1e30, 1e-30, "x", "0", "", [], [0], [1, 2], {}, {"a": 1},
          None, True, False, [0, 0, 0, 0], [1e9] * 3, "LINEAR", "CUBICSPLINE", "STEP", "scale", "rotation", "weights",
          5126, 5125, 5121, "VEC4", "MAT4", 4, 5, 6, [1, 0, 0, 1] * 4]


def paths(o, pre=()):
    yield pre
    if isinstance(o, dict):
        for k, v in o.items():
            yield from paths(v, pre + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from paths(v, pre + (i,))


def mutant(rng: random.Random, doc0: dict, blob0: bytes) -> bytes:
    doc, blob = copy.deepcopy(doc0), bytearray(blob0)
    where = [p for p in paths(doc0) if p]
    for _ in range(rng.choice([1, 1, 2, 3])):
        p = rng.choice(where)
        at = doc
        try:
            for k in p[:-1]:
                at = at[k]
            if rng.random() < 0.1 and isinstance(at, dict):
                at.pop(p[-1], None)
            else:
                at[p[-1]] = copy.deepcopy(rng.choice(VALUES))
        except (KeyError, IndexError, TypeError):
            pass                                  # an earlier change removed the way there
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 8)):
            blob[rng.randrange(len(blob))] = rng.randrange(256)
    return pack(doc, bytes(blob))


def test_mutated_films_get_a_verdict_or_a_named_refusal(tmp_path):
    rng = random.Random(16)
    doc0, blob0 = base().parts()
    codes = {}
    for n in range(300):
        path = tmp_path / f"mutant{n}.glb"
        path.write_bytes(mutant(rng, doc0, blob0))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["verify", str(path)])
        codes[code] = codes.get(code, 0) + 1
        assert code in (0, 1, 2), f"{path.name}: exit {code}: {err.getvalue()}"
        if code == 2:
            assert err.getvalue().startswith(f"studio: {path}: ") and err.getvalue().count("\n") == 1
    assert codes.get(2, 0) > 150 and codes.get(0, 0) + codes.get(1, 0) > 20      # both kinds were reached
