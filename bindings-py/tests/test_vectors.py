"""Every shared vector under tests/vectors/: ring/, slot/, pool/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyroute
from conftest import load, vector_files

RING_FILES = vector_files("ring")
SLOT_FILES = vector_files("slot")
POOL_FILES = vector_files("pool")


def test_vectors_present() -> None:
    # A silent empty parametrisation would pass; the repository ships all three kinds.
    assert len(RING_FILES) >= 40
    assert SLOT_FILES
    assert POOL_FILES


def ring_of(v: dict[str, Any]) -> keyroute.Ring:
    opts = v.get("options") or {}
    return keyroute.Ring(
        [(name, weight) for name, weight in v["nodes"]],
        profile=v["profile"],
        default_port=opts.get("default_port"),
        points_per_digest=opts.get("points_per_digest"),
    )


@pytest.mark.parametrize("path", RING_FILES, ids=lambda p: p.stem)
def test_ring_vector(path: Path) -> None:
    v = load(path)
    ring = ring_of(v)
    if v.get("point_count") is not None:
        assert ring.point_count == v["point_count"]
    keys = v["keys"]
    got = [ring.get(k) for k in keys]
    mismatches = [(k, g, e) for k, g, e in zip(keys, got, v["expect"]) if g != e]
    assert not mismatches, f"{len(mismatches)} keys differ, first: {mismatches[:3]}"
    # The batch and the bytes forms agree with the single lookups.
    assert ring.get_many(keys) == v["expect"]
    assert ring.get_many([k.encode() for k in keys]) == v["expect"]
    rep = v.get("replicas")
    if rep:
        n = rep["n"]
        for k, e in zip(keys, rep["expect"]):
            assert ring.get_n(k, n) == e, k


@pytest.mark.parametrize("path", SLOT_FILES, ids=lambda p: p.stem)
def test_slot_vector(path: Path) -> None:
    cases = load(path)["cases"]
    keys = [bytes.fromhex(c["key_hex"]) for c in cases]
    want = [c["slot"] for c in cases]
    assert [keyroute.key_slot(k) for k in keys] == want
    assert keyroute.key_slots(keys) == want
    # str keys hash as their UTF-8 bytes.
    for k, s in zip(keys, want):
        try:
            text = k.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert keyroute.key_slot(text) == s


def _pool_state(pool: keyroute.Pool) -> tuple[list[list[Any]], list[list[Any]]]:
    counts = [[m.hex(), c] for m, c in pool.counts().items()]
    removed = [[m.hex(), c] for m, c in pool.removed().items()]
    return counts, removed


def _pool_ids() -> list[tuple[Path, str]]:
    out = []
    for path in POOL_FILES:
        for seq in load(path)["sequences"]:
            out.append((path, seq["name"]))
    return out


@pytest.mark.parametrize("path,name", _pool_ids(), ids=lambda x: getattr(x, "stem", x))
def test_pool_vector(path: Path, name: str) -> None:
    seq = next(s for s in load(path)["sequences"] if s["name"] == name)
    pool = keyroute.Pool()
    for i, op in enumerate(seq["ops"]):
        where = f"{name} op {i} {op['op']}"
        kind = op["op"]
        if "error" in op:
            with pytest.raises(ValueError):
                if kind == "seed":
                    pool.seed(
                        [bytes.fromhex(m) for m in op["members_hex"]],
                        op["initial"],
                        op["overwrite"],
                    )
                else:  # pragma: no cover - only seed can be refused today
                    pytest.fail(f"{where}: unexpected error op")
        elif kind == "seed":
            got = pool.seed(
                [bytes.fromhex(m) for m in op["members_hex"]], op["initial"], op["overwrite"]
            )
            assert got == op["result"], where
        elif kind == "pick":
            m = pool.pick()
            assert (m.hex() if m is not None else None) == op.get("result_hex"), where
        elif kind == "pick_many":
            ms = pool.pick_many(op["n"])
            assert [m.hex() for m in ms] == (op.get("result_hex") or []), where
        elif kind == "remove":
            assert pool.remove(bytes.fromhex(op["member_hex"])) == op["result"], where
        elif kind == "restore":
            got = pool.restore(bytes.fromhex(op["member_hex"]), op["mode"])
            assert got == op["result"], where
        else:
            pytest.fail(f"{where}: unknown op")
        counts, removed = _pool_state(pool)
        assert counts == op["counts"], where
        assert removed == op["removed"], where
