"""The entrance contract of issue 12, as Python reproduces it: error codes on every
exception, inputs checked before conversion, nothing trusted from len(), no
allocation from a caller's count, no panic reaching Python, messages that tell the truth.
"""

from __future__ import annotations

import re
import resource
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import keyroute
from keyroute import Pool, Ring

ERRORS_MD = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def code_of(call: Any) -> str:
    with pytest.raises(keyroute.KeyrouteError) as info:
        call()
    assert str(info.value)
    code: str = info.value.code
    return code


# --- error codes ----------------------------------------------------------------------


def test_error_codes_are_the_cores() -> None:
    table = dict(
        (m.group(2), int(m.group(1)))
        for m in re.finditer(r"^\| (\d+) \| `([A-Z0-9_]+)` \|", ERRORS_MD.read_text(), re.M)
    )
    assert len(table) >= 50
    assert dict(keyroute.ERROR_CODES) == table
    with pytest.raises(TypeError):
        keyroute.ERROR_CODES["NEW"] = 1  # type: ignore[index]


def test_exception_classes() -> None:
    k = keyroute
    expect = {
        k.RingError: ValueError, k.NodeNotFoundError: KeyError, k.SlotMapError: ValueError,
        k.RedirectError: ValueError, k.PlanError: ValueError, k.PoolError: ValueError,
        k.BadTypeError: TypeError, k.BadUtf8Error: UnicodeError,
        k.OutOfRangeError: OverflowError, k.TooLargeError: ValueError,
        k.InternalError: RuntimeError, k.RedisBadUrlError: ValueError,
        k.RedisConnectionError: ConnectionError, k.RedisTimeoutError: TimeoutError,
    }
    for cls, builtin in expect.items():
        assert issubclass(cls, k.KeyrouteError) and issubclass(cls, builtin), cls
        assert cls.__module__ == "keyroute" and cls.__doc__
    assert issubclass(k.NodeNotFoundError, IndexError)
    assert issubclass(k.OutOfRangeError, ValueError)
    for cls in (k.RedisAuthError, k.RedisWrongTypeError, k.RedisServerError,
                k.RedisProtocolError, k.RedisTimeoutError, k.RedisConnectionError):
        assert issubclass(cls, k.RedisError)
    # Single-code classes name their code; the class attribute is a default only.
    assert k.TooLargeError.code == "TOO_LARGE" and k.RedisTimeoutError.code == "REDIS_TIMEOUT"
    assert k.KeyrouteError.code == ""
    for cls in expect:
        assert cls.code == "" or cls.code in k.ERROR_CODES


def test_a_panic_arrives_as_internal_error() -> None:
    native: Any = keyroute._keyroute  # type: ignore[attr-defined]
    try:
        native._panic_for_test()
    except Exception as e:  # noqa: BLE001 - the point: `except Exception` catches it
        assert isinstance(e, keyroute.InternalError) and e.code == "INTERNAL"
        assert "bug" in str(e) and "deliberate panic" in str(e)
    else:  # pragma: no cover
        pytest.fail("no exception")


# --- len() is not trusted, counts are checked before anything is allocated ------------


class Lying:
    """An iterable whose __len__ says `claimed` and which yields `real` str keys."""

    def __init__(self, claimed: int, real: int) -> None:
        self.claimed, self.real = claimed, real

    def __len__(self) -> int:
        return self.claimed

    def __iter__(self) -> Iterator[str]:
        return (f"k{i}" for i in range(self.real))


BATCH_CALLS = {
    "get_many": lambda keys: Ring(["a"]).get_many(keys),
    "key_slots": keyroute.key_slots,
    "key_slots_array": lambda keys: keyroute.key_slots_array(keys).tolist(),
    "group_by_slot": keyroute.group_by_slot,
    "Pool": Pool,
    "Pool.seed": lambda keys: Pool().seed(keys),
    "group_by_node": lambda keys: keyroute.SlotMap().group_by_node(keys),
}


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("name", BATCH_CALLS)
def test_a_huge_reported_length_is_too_large(name: str) -> None:
    call = BATCH_CALLS[name]
    before = max_rss_mib()
    for keys in (range(2**40), Lying(2**62, 3), Lying(keyroute.MAX_KEYS_PER_CALL + 1, 3)):
        t0 = time.monotonic()
        with pytest.raises(keyroute.TooLargeError) as info:
            call(keys)
        assert info.value.code == "TOO_LARGE"
        assert str(keyroute.MAX_KEYS_PER_CALL) in str(info.value)
        assert time.monotonic() - t0 < 1
    assert max_rss_mib() - before < 64, "memory grew for a refused call"


@pytest.mark.parametrize("name", BATCH_CALLS)
def test_a_lying_length_just_grows(name: str) -> None:
    call = BATCH_CALLS[name]
    small, exact = Lying(1, 9000), [f"k{i}" for i in range(9000)]
    assert call(small) is not None
    if name == "get_many":
        assert call(small) == call(exact)
    if name in ("key_slots", "key_slots_array", "group_by_slot"):
        assert call(small) == call(exact)
    # A __len__ that cannot even be an index (len() raises OverflowError) is no hint.
    assert len(keyroute.key_slots(Lying(2**64, 10))) == 10
    assert len(Pool(Lying(0, 5))) == 5


def test_pick_many_counts_are_checked_before_allocating() -> None:
    pool = Pool(["a", "b"])
    before = max_rss_mib()
    for n in (2**63, 2**64, 10**30, keyroute.MAX_PICKS_PER_CALL + 1, 4294967298, -1):
        t0 = time.monotonic()
        for call in (pool.pick_many, pool.pick_many_bytes):
            with pytest.raises(keyroute.TooLargeError) as info:
                call(n)
            assert info.value.code == "TOO_LARGE"
        assert time.monotonic() - t0 < 0.5
    assert max_rss_mib() - before < 64
    assert pool.counts() == {"a": 0, "b": 0}, "a refused call changed the pool"
    assert code_of(lambda: pool.pick_many(10**300)) == "OUT_OF_RANGE"
    assert len(pool.pick_many(100_000)) == 100_000
    assert pool.counts() == {"a": 50_000, "b": 50_000}


# --- numbers are checked before conversion; messages tell the truth -------------------


def test_numbers_reach_the_core_whole() -> None:
    err = pytest.raises(keyroute.RingError, Ring, ["a"], profile="uhashring",
                        points_per_digest=300).value
    assert err.code == "BAD_POINTS_PER_DIGEST" and "got 300" in str(err)
    err = pytest.raises(keyroute.RingError, Ring, {"a": -(2**64)}).value
    assert err.code == "NEGATIVE_WEIGHT"
    assert "-18446744073709551616" in str(err) and "9223372036854775807" not in str(err)
    err = pytest.raises(keyroute.RingError, Ring, ["a"], vnodes=2**31).value
    assert err.code == "BAD_VNODES" and "2147483648" in str(err)
    assert code_of(lambda: Ring(["a"], vnodes=2**32 + 160)) == "BAD_VNODES"
    assert code_of(lambda: Ring(["a"], profile="node-hashring",
                                default_port=2**32 + 11211)) == "BAD_PORT"
    assert code_of(lambda: Ring({"a": 2**32})) == "WEIGHT_TOO_LARGE"
    assert code_of(lambda: Ring({"a": 10**30})) == "WEIGHT_TOO_LARGE"
    assert code_of(lambda: Ring({"a": 10**300})) == "OUT_OF_RANGE"
    assert code_of(lambda: Ring({"a": 1.5})) == "BAD_WEIGHT"
    assert code_of(lambda: Ring({"a": 1e300})) == "BAD_WEIGHT"
    assert code_of(lambda: Ring({"a": "3"})) == "BAD_TYPE"  # type: ignore[dict-item]
    assert code_of(lambda: Ring(["a"]).add("b", 2**70)) == "WEIGHT_TOO_LARGE"
    assert code_of(lambda: Ring(["a"]).set_weight("a", -1)) == "NEGATIVE_WEIGHT"
    assert code_of(lambda: Ring(["a"], vnodes=10**300)) == "OUT_OF_RANGE"
    assert code_of(lambda: Ring(["a"]).get_n("x", -1)) == "OUT_OF_RANGE"
    assert code_of(lambda: Pool().seed(["a"], 2**53 + 1)) == "BAD_COUNT"
    # A count beyond the ring is the whole ring, not nothing.
    three = Ring(["a", "b", "c"])
    assert sorted(three.get_n("x", 2**32)) == ["a", "b", "c"]
    assert sorted(three.get_n("x", 2**100)) == ["a", "b", "c"]
    assert code_of(lambda: three.get_n("x", 2**200)) == "OUT_OF_RANGE"  # beyond 128 bits


def test_numpy_style_ints_are_ints() -> None:
    class Index:
        def __init__(self, v: int) -> None:
            self.v = v

        def __index__(self) -> int:
            return self.v

    ring = Ring({"a": Index(2)}, vnodes=Index(10))  # type: ignore[dict-item, arg-type]
    assert ring.weights() == {"a": 2} and ring.point_count == 20


# --- node lists: one grammar ----------------------------------------------------------


def test_host_port_keeps_its_port() -> None:
    ring = Ring.from_spec("10.0.0.1:11211,10.0.0.2:11211")
    assert ring.weights() == {"10.0.0.1:11211": 1, "10.0.0.2:11211": 1}
    fleet = Ring.from_spec("10.0.0.1:11211\n10.0.0.2:11211\n", profile="libketama")
    keys = [f"k{i}" for i in range(2000)]
    weighted = Ring.from_spec("10.0.0.1:11211:1,10.0.0.2:11211:1", profile="libketama")
    assert fleet.get_many(keys) == weighted.get_many(keys)
    assert Ring.from_spec("[::1]:6379,[::2]:6379").nodes == ["[::1]:6379", "[::2]:6379"]
    assert Ring.from_spec("::1").nodes == ["::1"]
    assert Ring.from_spec("2001:db8::1,2001:db8::2").nodes == ["2001:db8::1", "2001:db8::2"]
    assert keyroute.parse_nodes("10.0.0.1:11211:2 cache-a") == [("cache-a", 2)]
    err = pytest.raises(keyroute.RingError, Ring.from_spec, "cache-a:2").value
    assert err.code == "AMBIGUOUS_NODE_SPEC" and "cache-a=2" in str(err)
    assert keyroute.parse_weights("a=0,b=3") == [("a", 0), ("b", 3)]


# --- empty members, returned types ----------------------------------------------------


def test_empty_members_are_refused_and_change_nothing() -> None:
    pool = Pool(["a"])
    pool.pick()
    for call in (lambda: pool.seed(["b", ""]), lambda: pool.seed([b""]),
                 lambda: pool.restore(""), lambda: pool.restore(b"", "keep"),
                 lambda: Pool(["x", ""])):
        assert code_of(call) == "EMPTY_MEMBER"
    assert pool.counts() == {"a": 1} and pool.removed() == {}


def test_pick_is_str_and_pick_bytes_is_bytes() -> None:
    pool = Pool(["é", b"b"])
    assert isinstance(pool.pick(), str) and isinstance(pool.pick_bytes(), bytes)
    assert all(isinstance(m, str) for m in pool.pick_many(4))
    assert all(isinstance(m, bytes) for m in pool.pick_many_bytes(4))
    assert set(pool.counts()) == {"é", "b"} and set(pool.counts_bytes()) == {"é".encode(), b"b"}


def test_hash_tag_returns_the_type_it_is_given() -> None:
    class S(str):
        pass

    assert type(keyroute.hash_tag("{a}b")) is str
    assert type(keyroute.hash_tag(b"{a}b")) is bytes
    assert type(keyroute.hash_tag(S("ab"))) is str and keyroute.hash_tag(S("ab")) == "ab"
