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
    counts = [[m.hex(), c] for m, c in pool.counts_bytes().items()]
    removed = [[m.hex(), c] for m, c in pool.removed_bytes().items()]
    return counts, removed


def _pool_ids() -> list[tuple[Path, str]]:
    out = []
    for path in POOL_FILES:
        for seq in load(path)["sequences"]:
            out.append((path, seq["name"]))
    return out


def expected_code(op: dict[str, Any]) -> str:
    """The code of a refused op, from the script's error text in the vector."""
    if "must not be empty" in op["error"]:
        return "EMPTY_MEMBER"
    if "initial count" in op["error"]:
        return "BAD_COUNT"
    raise AssertionError(f"an error the Python test does not know: {op['error']!r}")


def pool_op(pool: Any, op: dict[str, Any]) -> Any:
    """Runs one vector op on a Pool or a LeastUsed (the same API); returns its result
    in the vector's form."""
    kind = op["op"]
    if kind == "seed":
        members = [bytes.fromhex(m) for m in op["members_hex"]]
        return pool.seed(members, op["initial"], op["overwrite"])
    if kind == "pick":
        m = pool.pick_bytes()
        return m.hex() if m is not None else None
    if kind == "pick_many":
        return [m.hex() for m in pool.pick_many_bytes(op["n"])]
    if kind == "remove":
        return pool.remove(bytes.fromhex(op["member_hex"]))
    if kind == "restore":
        return pool.restore(bytes.fromhex(op["member_hex"]), op["mode"])
    raise AssertionError(f"unknown op {kind}")


def check_pool_op(pool: Any, op: dict[str, Any], where: str) -> None:
    """One op: its result, or its refusal (the code of the error, nothing changed)."""
    if "error" in op:
        assert op["op"] in ("seed", "restore"), where
        with pytest.raises(keyroute.PoolError) as info:
            pool_op(pool, op)
        assert info.value.code == expected_code(op), where
        return
    got = pool_op(pool, op)
    if op["op"] == "pick":
        assert got == op.get("result_hex"), where
    elif op["op"] == "pick_many":
        assert got == (op.get("result_hex") or []), where
    else:
        assert got == op["result"], where


@pytest.mark.parametrize("path,name", _pool_ids(), ids=lambda x: getattr(x, "stem", x))
def test_pool_vector(path: Path, name: str) -> None:
    seq = next(s for s in load(path)["sequences"] if s["name"] == name)
    pool = keyroute.Pool()
    for i, op in enumerate(seq["ops"]):
        where = f"{name} op {i} {op['op']}"
        check_pool_op(pool, op, where)
        counts, removed = _pool_state(pool)
        assert counts == op["counts"], where
        assert removed == op["removed"], where


def test_pool_vectors_hold_refusals() -> None:
    # The vector format change (a restore may carry "error"): both kinds are exercised.
    refused = {
        (op["op"], expected_code(op))
        for path in POOL_FILES
        for seq in load(path)["sequences"]
        for op in seq["ops"]
        if "error" in op
    }
    assert ("restore", "EMPTY_MEMBER") in refused and ("seed", "EMPTY_MEMBER") in refused
